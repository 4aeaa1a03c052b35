package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestBenchBadArguments(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"unknown flag", []string{"-nope"}, 2, "flag provided but not defined"},
		{"stray argument", []string{"extra"}, 2, `unexpected arguments ["extra"]`},
		{"bad device", []string{"-device", "tpu"}, 1, `bad device "tpu"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := runBench(tt.args, &out, &errb)
			if code != tt.wantCode || !strings.Contains(errb.String(), tt.wantErr) {
				t.Errorf("runBench(%q) = %d, stderr %q; want %d and %q", tt.args, code, errb.String(), tt.wantCode, tt.wantErr)
			}
		})
	}
}

// TestBenchSimulated runs the whole benchmark on a small simulated device, as
// CI does to keep it compiling and working without a GPU.
func TestBenchSimulated(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every kernel on the CPU")
	}
	var out, errb bytes.Buffer
	if code := runBench([]string{"-device", "sim:4GiB", "-iters", "1"}, &out, &errb); code != 0 {
		t.Fatalf("memlab bench -device sim exited %d: %s", code, errb.String())
	}
	for _, want := range []string{"SIMULATED DEVICE", "| copy f32 [quick: [1048576]] |", "| matmul 4096³ bf16 [quick: [512 512]] |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
