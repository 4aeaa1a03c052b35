//go:build unix

// Package testfiles makes the files that are not regular files which the
// tests of memlab's readers feed them: a FIFO written from another goroutine,
// the bytes of a pickle that never ends, and /dev/zero. A reader must stop at
// its bound or at the first byte it cannot use, not at the end of memory.
package testfiles

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// FIFO makes a FIFO called name in a temporary folder of t and returns its
// path. Another goroutine opens it for writing, which waits for a reader, and
// calls write on it; write's errors (a reader that stops early) are ignored.
func FIFO(t testing.TB, name string, write func(w io.Writer)) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatalf("testfiles: %v", err)
	}
	go func() {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		write(f)
	}()
	return p
}

// pickleHead is a pickle's first opcode: PROTO (0x80), protocol 4, the bytes
// PyTorch's memory snapshots begin with.
var pickleHead = []byte{0x80, 4}

// endless reads as pickleHead and then zeros without end.
type endless struct{ n int }

func (e *endless) Read(p []byte) (int, error) {
	clear(p)
	e.n += copy(p, pickleHead[min(e.n, len(pickleHead)):])
	return len(p), nil
}

// Endless returns a reader of a pickle's first opcode (PROTO 4) and then
// zeros without end: a snapshot that starts well and never stops.
func Endless() io.Reader { return &endless{} }

// DevZero returns "/dev/zero", failing t if the system has none.
func DevZero(t testing.TB) string {
	t.Helper()
	const p = "/dev/zero"
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("testfiles: no %s on a unix: %v", p, err)
	}
	return p
}
