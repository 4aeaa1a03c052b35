package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"memlab.dev/memlab/experiments/ch4"
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
		{"recorded runs", []string{"-recorded"}, 0, "NVIDIA H200: memlab ch4 -device cuda -size small", ""},
		{"record to a missing folder", []string{"-device", "sim", "-size", "tiny", "-modes", "baseline", "-record", "/nonexistent/dir/x.json"}, 1, "", "-record: open /nonexistent/dir/x.json"},
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

// TestCh4Record checks that -record writes a file ch4.ParseRecording reads
// back into the run that was printed.
func TestCh4Record(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	var out, errOut bytes.Buffer
	if code := run([]string{"ch4", "-device", "sim", "-size", "tiny", "-modes", "baseline,chapter", "-record", path}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ch4.ParseRecording(data)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Command != "memlab ch4 -device sim -modes baseline,chapter -size tiny" {
		t.Errorf("recorded command %q", rec.Command)
	}
	if !strings.HasPrefix(out.String(), rec.String()) {
		t.Errorf("stdout does not begin with the recording:\n%s\nwant\n%s", out.String(), rec.String())
	}
}
