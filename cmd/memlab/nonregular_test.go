//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"memlab.dev/memlab/reference"
)

// TestWhatifNonRegularFile: /dev/zero and a FIFO that never ends stop with a clean
// error (exit 1) at their first byte or at --max-snapshot-size, not at the end of
// memory; a FIFO holding a snapshot replays.
func TestWhatifNonRegularFile(t *testing.T) {
	snap, err := reference.File(reference.Workloads211, "bert_encode__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fifo := func(name string, body func(f *os.File)) string {
		p := filepath.Join(dir, name)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
		go func() {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			defer f.Close()
			body(f)
		}()
		return p
	}
	good := fifo("good.fifo", func(f *os.File) { f.Write(data) })
	endless := fifo("endless.fifo", func(f *os.File) {
		f.Write(data[:2]) // a pickle's PROTO, then zeros without end
		zeros := make([]byte, 1<<16)
		for {
			if _, err := f.Write(zeros); err != nil {
				return
			}
		}
	})
	runCLICases(t, "whatif", []cliCase{
		{"/dev/zero", []string{"/dev/zero"}, 1, "", "not a pickle"},
		{"a FIFO with a snapshot", []string{good}, 0, "238.00 MiB", ""},
		{"an endless FIFO", []string{endless, "--max-snapshot-size", "16MiB"}, 1, "", "larger than 16777216 bytes decompressed"},
	})
}
