package device

import (
	"fmt"
	"strings"
	"testing"
)

// FuzzParseSpec: ParseSpec never panics, and an accepted spec formats (String)
// to one that parses back to the same Spec.
//
//	go test -run XXX -fuzz FuzzParseSpec -fuzztime 20s ./device
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"", "auto", "cuda", "cuda:1", " CUDA:0 ", "sim", "sim:2", "sim:24GiB", "sim:1:512MiB",
		"sim:-1", "sim:99999999999999999999", "sim::", "cuda:0:1", ":", "sim:1:2:3", "sim:1.5GiB", "sim:0x10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := ParseSpec(s)
		if err != nil {
			return
		}
		if sp.Index < 0 {
			t.Fatalf("ParseSpec(%q) accepted a negative index: %+v", s, sp)
		}
		back, err := ParseSpec(sp.String())
		if err != nil {
			t.Fatalf("ParseSpec(%q) = %+v, whose String %q does not parse: %v", s, sp, sp.String(), err)
		}
		if back != sp {
			t.Fatalf("ParseSpec(%q) = %+v, String %q parses to %+v", s, sp, sp.String(), back)
		}
	})
}

// Open with odd specs returns an error naming the spec, never a panic.
func TestRobustOpenOddSpecs(t *testing.T) {
	t.Setenv(EnvVar, "")
	for _, spec := range []string{"tpu", "sim:", "sim::", "sim:-1", "cuda:-1", "sim:1:2:3", "sim:0GiB", "sim:1B", ":", "sim:1KiB", "\x00", "sim:99999999999999999999"} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("Open(%q) panicked: %v", spec, r)
				}
			}()
			d, err := Open(spec)
			if err == nil {
				d.Close()
				t.Errorf("Open(%q) succeeded", spec)
				return
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", spec)) || !strings.HasPrefix(err.Error(), "device: ") {
				t.Errorf("Open(%q) = %q; want an error naming the spec", spec, err)
			}
		}()
	}
}
