package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The memlab binary does not link package testing (it did through bench's use
// of device/devicetest): test-support packages stay out of what users run.
func TestBinaryDoesNotLinkTesting(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "memlab.dev/memlab/cmd/memlab").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, bad := range []string{"testing", "memlab.dev/memlab/device/devicetest"} {
		if slices.Contains(deps, bad) {
			t.Errorf("cmd/memlab depends on %s", bad)
		}
	}
}
