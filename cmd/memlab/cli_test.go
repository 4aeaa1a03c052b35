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
