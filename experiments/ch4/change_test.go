package ch4

import "testing"

func TestFasterAndSavedSaySlowerAndMore(t *testing.T) {
	t.Setenv("MEMLAB_LANG", "en")
	for _, c := range []struct{ got, want string }{
		{Faster(4.54), "4.5 % faster"}, {Faster(-15.4), "15.4 % slower"}, {Faster(0), "0.0 % faster"},
		{Saved(6.3), "6.3 % saved"}, {Saved(-6.3), "6.3 % more"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
	t.Setenv("MEMLAB_LANG", "zh-CN")
	for _, c := range []struct{ got, want string }{
		{Faster(4.54), "快 4.5 %"}, {Faster(-15.4), "慢 15.4 %"}, {Saved(6.3), "省下 6.3 %"}, {Saved(-6.3), "多用 6.3 %"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
