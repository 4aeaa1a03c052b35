package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLabCommand(t *testing.T) {
	plots := t.TempDir()
	tests := []struct {
		name string
		args []string
		code int
		out  string // in stdout
		err  string // in stderr
	}{
		{"list", []string{"lab", "-list"}, 0, "02-memory-mechanics  2.3 Fragmentation (内存碎片)  remedies", ""},
		{"list by its other name", []string{"experiments", "-list", "-run", " 2.4 "}, 0, "2.4 The `torch.cuda` memory API (torch.cuda 内存 API)  leakCheck", ""},
		{"one cell, no plots", []string{"lab", "-device", "sim", "-plots", "", "-run", "transposeStrides"}, 0, "the contiguous copy allocated a new 512 bytes block → holds", ""},
		{"one notebook cell with its plot", []string{"lab", "-device", "sim", "-plots", plots, "-run", "storageVsViews"}, 0, "the six views added 0 bytes to memory_allocated, x.t().contiguous() 4.00 MiB → holds", ""},
		{"a cell on a bad device", []string{"lab", "-device", "tpu", "-plots", "", "-run", "storageVsViews"}, 1, "FAILED: memlab: cell storageVsViews (2.1 Tensor storage and views (张量存储)): memlab: open device \"\": device: bad device \"tpu\"", ""},
		{"no match", []string{"lab", "-run", "nothing-like-this"}, 2, "", "no cell or experiment matches"},
		{"bad regexp", []string{"lab", "-run", "("}, 2, "", "-run: error parsing regexp"},
		{"extra argument", []string{"lab", "now"}, 2, "", "unexpected arguments"},
		{"unknown flag", []string{"lab", "-gpu"}, 2, "", "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			if code != tt.code || !strings.Contains(stdout.String(), tt.out) || !strings.Contains(stderr.String(), tt.err) {
				t.Errorf("run(%q) = %d\nstdout:\n%s\nstderr:\n%s\nwant %d, stdout with %q, stderr with %q",
					tt.args, code, stdout.String(), stderr.String(), tt.code, tt.out, tt.err)
			}
		})
	}
	for _, f := range []string{"02-memory-mechanics-storagevsviews-1.png"} {
		if _, err := os.Stat(filepath.Join(plots, f)); err != nil {
			t.Errorf("the figure was not written: %v", err)
		}
	}
}
