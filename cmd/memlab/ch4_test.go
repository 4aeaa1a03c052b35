package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestCh4Command(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"tiny on the simulator", []string{"-device", "sim", "-size", "tiny", "-modes", "baseline,optimised"}, 0, "largest logit difference from the baseline: 0", ""},
		{"unknown size", []string{"-size", "huge"}, 2, "", `unknown size "huge"`},
		{"unknown mode", []string{"-modes", "baseline,turbo"}, 2, "", `unknown mode "turbo"`},
		{"stray argument", []string{"extra"}, 2, "", "unexpected arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(append([]string{"ch4"}, tt.args...), &out, &errOut)
			if code != tt.code || !strings.Contains(out.String(), tt.stdout) || !strings.Contains(errOut.String(), tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q",
					code, out.String(), errOut.String(), tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}
