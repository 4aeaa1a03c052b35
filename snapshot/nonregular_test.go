//go:build unix

package snapshot

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"memlab.dev/memlab/internal/gunzip"
	"memlab.dev/memlab/internal/testfiles"
	"memlab.dev/memlab/reference"
)

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
		p := testfiles.FIFO(t, "snap.fifo", func(w io.Writer) { w.Write(body) })
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
	p := testfiles.FIFO(t, "snap.fifo", func(w io.Writer) { io.Copy(w, testfiles.Endless()) })
	_, err = ReadFileMax(p, bound)
	var tl *gunzip.TooLargeError
	if !errors.As(err, &tl) || tl.Limit != bound || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("endless FIFO: %v, want a *gunzip.TooLargeError at %d bytes", err, bound)
	}
	bomb := gz(t, make([]byte, 64<<20))
	p = testfiles.FIFO(t, "snap.fifo", func(w io.Writer) { w.Write(bomb) })
	if _, err = ReadFileMax(p, bound); !errors.As(err, &tl) || tl.Limit != bound {
		t.Errorf("gzip bomb through a FIFO: %v, want a *gunzip.TooLargeError at %d bytes", err, bound)
	}
	_, err = ReadFileMax(testfiles.DevZero(t), 0)
	if err == nil || !strings.Contains(err.Error(), "not a pickle") {
		t.Errorf("/dev/zero: %v, want not a pickle", err)
	}
}
