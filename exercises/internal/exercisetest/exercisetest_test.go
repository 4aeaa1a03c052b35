package exercisetest

import "testing"

func TestCatch(t *testing.T) {
	tests := []struct {
		name     string
		f        func()
		panicked bool
		value    any
	}{
		{"returns normally", func() {}, false, nil},
		{"panics with a string", func() { panic("not implemented") }, true, "not implemented"},
		{"panics with an error value", func() { var s []int; _ = s[3] }, true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, panicked := catch(tc.f)
			if panicked != tc.panicked {
				t.Fatalf("panicked = %v, want %v", panicked, tc.panicked)
			}
			if tc.value != nil && p != tc.value {
				t.Errorf("panic value = %v, want %v", p, tc.value)
			}
			if tc.panicked && p == nil {
				t.Errorf("panic value lost")
			}
		})
	}
}

func TestCallReturnsTrueWhenNoPanic(t *testing.T) {
	ran := false
	if !Call(t, "f()", func() { ran = true }) || !ran {
		t.Fatalf("Call of a normal function: ran=%v", ran)
	}
}

func TestMsgPicksTheEdition(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want string
	}{{"", "en"}, {"en", "en"}, {"zh-CN", "zh"}, {"zh_CN", "zh"}, {"ZH", "zh"}, {"zh-Hans", "zh"}, {"fr", "en"}} {
		t.Setenv("MEMLAB_LANG", tc.env)
		if got := Msg("en", "zh"); got != tc.want {
			t.Errorf("MEMLAB_LANG=%q: Msg gives %q, want %q", tc.env, got, tc.want)
		}
	}
}
