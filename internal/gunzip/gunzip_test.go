package gunzip

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"
)

func gz(data string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(data))
	w.Close()
	return b.Bytes()
}

// read opens in as NewReader does and reads it all under limit.
func read(in []byte, limit int64) (string, bool, error) {
	br := bufio.NewReader(bytes.NewReader(in))
	zr, ok, err := NewReader(br)
	if err != nil || !ok {
		return "", ok, err
	}
	out, err := ReadAll(zr, limit, int64(len(in))*1000, "the input", "its bound")
	return string(out), true, err
}

// TestRead: gzip is recognised by its magic bytes and read within its bound; what is
// not gzip is left alone; every malformed stream is an error saying what is wrong.
func TestRead(t *testing.T) {
	good := gz("hello, world")
	if out, ok, err := read(good, 12); err != nil || !ok || out != "hello, world" {
		t.Errorf("gzip at its bound: %q, %v, %v", out, ok, err)
	}
	if _, ok, err := read([]byte("\x80\x04plain"), 100); ok || err != nil {
		t.Errorf("plain input: gzip %v, %v", ok, err)
	}
	_, _, err := read(good, 11)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Limit != 11 || !strings.Contains(err.Error(), "larger than 11 bytes decompressed (its bound; a gzip bomb?)") {
		t.Errorf("over the bound: %v", err)
	}
	corrupt := bytes.Clone(good)
	corrupt[len(corrupt)-6] ^= 0xff // the CRC
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"truncated", good[:len(good)-3], "ends early"},
		{"header only", good[:4], "ends early"},
		{"bad header", []byte{0x1f, 0x8b, 99, 0, 0, 0, 0, 0, 0, 0}, "gzip header"},
		{"bad checksum", corrupt, "checksum"},
		{"empty", gz(""), "empty"},
		{"two members", append(gz("a"), gz("b")...), "second gzip member"},
		{"trailing", append(bytes.Clone(good), 0, 0, 0), "trailing"},
	} {
		if _, _, err := read(c.in, 1<<20); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error mentioning %q", c.name, err, c.want)
		}
	}
	n, err := Count(bytes.NewReader([]byte("abc")), 3, "x", "y")
	if n != 3 || err != nil {
		t.Errorf("Count: %d, %v", n, err)
	}
	if _, err := Count(strings.NewReader("abcd"), 3, "x", "y"); !errors.As(err, &tl) {
		t.Errorf("Count over the bound: %v", err)
	}
	if _, err := Count(io.MultiReader(strings.NewReader("ab"), iotest{}), 10, "x", "y"); err == nil {
		t.Error("Count hid a read error")
	}
}

// iotest is a reader that fails.
type iotest struct{}

func (iotest) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }
