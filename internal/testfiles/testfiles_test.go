//go:build unix

package testfiles

import (
	"bytes"
	"io"
	"os"
	"testing"
)

// TestFIFO: what write writes is what a reader of the FIFO reads, and the
// path is a FIFO, not a regular file.
func TestFIFO(t *testing.T) {
	want := []byte("a snapshot's bytes")
	p := FIFO(t, "x.fifo", func(w io.Writer) { w.Write(want) })
	if st, err := os.Stat(p); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("Stat(%s) = %v, %v; want a named pipe", p, st, err)
	}
	got, err := os.ReadFile(p)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("reading the FIFO: %q, %v; want %q", got, err, want)
	}
}

// TestEndless: PROTO 4 then zeros, however the reads are cut, and no end.
func TestEndless(t *testing.T) {
	for _, size := range []int{1, 3, 1 << 16} {
		r := Endless()
		got := make([]byte, 0, 4<<20)
		buf := make([]byte, size)
		for len(got) < 4<<20 {
			n, err := r.Read(buf)
			if err != nil || n != size {
				t.Fatalf("reads of %d: Read = %d, %v after %d bytes; want %d, nil", size, n, err, len(got), size)
			}
			got = append(got, buf[:n]...)
		}
		want := append([]byte{0x80, 4}, make([]byte, len(got)-2)...)
		if !bytes.Equal(got, want) {
			t.Errorf("reads of %d: the first bytes are % x; want 80 04 and zeros", size, got[:8])
		}
	}
}

// TestDevZero: the path reads as zeros.
func TestDevZero(t *testing.T) {
	f, err := os.Open(DevZero(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := []byte{1, 2, 3}
	if _, err := io.ReadFull(f, b); err != nil || !bytes.Equal(b, []byte{0, 0, 0}) {
		t.Errorf("reading %s: % x, %v; want zeros", DevZero(t), b, err)
	}
}
