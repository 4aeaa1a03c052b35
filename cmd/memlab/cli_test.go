package main

import (
	"bytes"
	"strings"
	"testing"
)

// cliCase is one command line of a subcommand and what it must do.
type cliCase struct {
	name     string
	args     []string
	wantCode int
	wantOut  string // substring of stdout
	wantErr  string // substring of stderr
}

// runCLICases runs each case as `memlab sub ARGS…` and checks its exit code and output.
func runCLICases(t *testing.T, sub string, cases []cliCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(append([]string{sub}, tc.args...), &out, &errb)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.wantCode, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("stdout %q does not contain %q", out.String(), tc.wantOut)
			}
			if !strings.Contains(errb.String(), tc.wantErr) {
				t.Errorf("stderr %q does not contain %q", errb.String(), tc.wantErr)
			}
		})
	}
}

// TestHelpExitsZero: -h and --help print the usage and exit 0 for every command
// and every subcommand of exercises.
func TestHelpExitsZero(t *testing.T) {
	var lines [][]string
	for name := range commands {
		lines = append(lines, []string{name})
	}
	for _, sub := range []string{"list", "check", "copy", "hint", "grade"} {
		lines = append(lines, []string{"exercises", sub})
	}
	for _, l := range lines {
		for _, h := range []string{"-h", "--help"} {
			var out, errb bytes.Buffer
			code := run(append(append([]string{}, l...), h), &out, &errb)
			if code != 0 {
				t.Errorf("memlab %s %s: exit %d, want 0\nstderr: %s", strings.Join(l, " "), h, code, errb.String())
			}
			if !strings.Contains(strings.ToLower(out.String()+errb.String()), "usage") {
				t.Errorf("memlab %s %s printed no usage", strings.Join(l, " "), h)
			}
		}
	}
}
