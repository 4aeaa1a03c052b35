package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLabShPort: scripts/lab.sh start refuses a LAB_PORT that is not a port at
// once, with a clear message (before installing anything), instead of printing a
// dead URL or a Python traceback.
func TestLabShPort(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "lab.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"0", "abc", "65536", "-1", "80 80"} {
		cmd := exec.Command("bash", script, "start")
		cmd.Env = append(cmd.Environ(), "LAB_PORT="+p)
		out, err := cmd.CombinedOutput()
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != 2 || !strings.Contains(string(out), "LAB_PORT="+p+": want a port number from 1 to 65535") {
			t.Errorf("LAB_PORT=%q: exit %d (%v), output %q", p, code, err, out)
		}
		if strings.Contains(string(out), "Traceback") || strings.Contains(string(out), "installing") {
			t.Errorf("LAB_PORT=%q: %q", p, out)
		}
	}
}
