//go:build unix

package snapshot

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"memlab.dev/memlab/internal/gunzip"
	"memlab.dev/memlab/reference"
)

// fifo makes a FIFO in a temporary folder and writes what write writes into it
// from another goroutine (ignoring the error of a reader that stops early).
func fifo(t *testing.T, write func(w io.Writer)) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "snap.fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
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

// endless is a reader of a pickle's first bytes (PROTO 4) and then zeros without end.
type endless struct{ started bool }

func (e *endless) Read(p []byte) (int, error) {
	clear(p)
	if !e.started && len(p) >= 2 {
		p[0], p[1], e.started = opProto, 4, true
	}
	return len(p), nil
}

// TestNonRegularFiles: a FIFO holding a snapshot, plain or gzip-compressed, reads as
// the file does (opened once: PickleSize does not take its bytes); one that never
// ends stops at the bound with a *gunzip.TooLargeError, a gzip bomb through a FIFO
// too; /dev/zero is refused at its first byte, not read to the end of memory.
func TestNonRegularFiles(t *testing.T) {
	path, err := reference.Pickle(reference.Workloads211, "bert_encode__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	data, err := readPickle(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{"plain": data, "gzip": gz(t, data)} {
		p := fifo(t, func(w io.Writer) { w.Write(body) })
		if _, _, err := PickleSize(p, 0); !errors.Is(err, ErrNotRegular) {
			t.Errorf("%s: PickleSize of a FIFO: %v, want ErrNotRegular", name, err)
		}
		got, err := ReadFileMax(p, int64(len(data)))
		if err != nil {
			t.Fatalf("%s FIFO: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s FIFO: the snapshot differs from the file's", name)
		}
	}
	const bound = 8 << 20
	p := fifo(t, func(w io.Writer) { io.Copy(w, &endless{}) })
	_, err = ReadFileMax(p, bound)
	var tl *gunzip.TooLargeError
	if !errors.As(err, &tl) || tl.Limit != bound || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("endless FIFO: %v, want a *gunzip.TooLargeError at %d bytes", err, bound)
	}
	bomb := gz(t, make([]byte, 64<<20))
	p = fifo(t, func(w io.Writer) { w.Write(bomb) })
	if _, err = ReadFileMax(p, bound); !errors.As(err, &tl) || tl.Limit != bound {
		t.Errorf("gzip bomb through a FIFO: %v, want a *gunzip.TooLargeError at %d bytes", err, bound)
	}
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Fatalf("no /dev/zero on a unix: %v", err)
	}
	_, err = ReadFileMax("/dev/zero", 0)
	if err == nil || !strings.Contains(err.Error(), "not a pickle") {
		t.Errorf("/dev/zero: %v, want not a pickle", err)
	}
}
