// Package gunzip is memlab's one rule for reading input that may be
// gzip-compressed (replay's ground-truth traces, PyTorch memory snapshots): gzip
// is recognised by its magic bytes (1f 8b), never by the file's name; the file
// must be one gzip member and nothing after it; and what it decompresses to is
// bounded, so that a small file that expands to gigabytes (a gzip bomb) is an
// error naming the bound, not an exhausted memory.
package gunzip

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
)

// Magic reports whether b starts with gzip's magic bytes, 1f 8b.
func Magic(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// TooLargeError is the error of an input larger than its bound once decompressed.
type TooLargeError struct {
	What  string // what was read: "the trace", "the snapshot's pickle"
	Limit int64  // the bound, in bytes
	Why   string // the bound's name and how to change it
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %d bytes decompressed (%s; a gzip bomb?)", e.What, e.Limit, e.Why)
}

// Reader is the decompressed content of one gzip member.
type Reader struct {
	src *bufio.Reader
	zr  *gzip.Reader
	n   int64 // bytes decompressed so far
}

// NewReader returns a Reader of br's gzip member when br starts with gzip's magic
// bytes, and ok false (nothing read) otherwise. An invalid gzip header is an error.
func NewReader(br *bufio.Reader) (r *Reader, ok bool, err error) {
	magic, _ := br.Peek(2)
	if !Magic(magic) {
		return nil, false, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, true, describe(err)
	}
	// One member: a second one (files joined with cat) would otherwise be read as
	// the rest of the first, and a pickle, which ends at its STOP, would silently
	// leave it unread.
	zr.Multistream(false)
	return &Reader{src: br, zr: zr}, true, nil
}

// Read reads decompressed bytes. At the member's end it checks that nothing
// follows it: another gzip member or trailing bytes are an error.
func (r *Reader) Read(p []byte) (int, error) {
	n, err := r.zr.Read(p)
	r.n += int64(n)
	if err == io.EOF {
		if r.n == 0 {
			return n, errors.New("gzip: the compressed stream is empty (it holds no bytes)")
		}
		if rest, _ := r.src.Peek(2); len(rest) > 0 {
			if Magic(rest) {
				return n, errors.New("gzip: a second gzip member follows the first (files joined with cat?); compress one file with one gzip")
			}
			return n, errors.New("gzip: bytes follow the end of the gzip stream (trailing data)")
		}
		return n, io.EOF
	}
	if err != nil {
		return n, describe(err)
	}
	return n, nil
}

// describe names what a gzip error means.
func describe(err error) error {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errors.New("gzip: the compressed stream ends early (truncated file)")
	case errors.Is(err, gzip.ErrChecksum):
		return errors.New("gzip: checksum or size in the trailer does not match the data (corrupt file)")
	case errors.Is(err, gzip.ErrHeader):
		return errors.New("gzip: invalid gzip header (corrupt file)")
	}
	return fmt.Errorf("gzip: %w", err)
}

// ReadAll reads r to its end, at most limit bytes: a longer input is a
// *TooLargeError (what and why fill its fields). hint, when positive and at most
// limit, sizes the first buffer: it is a guess (gzip's trailer states the size
// modulo 2^32, and a file may lie), so nothing depends on it but the first
// allocation.
func ReadAll(r io.Reader, limit int64, hint int64, what, why string) ([]byte, error) {
	var buf bytes.Buffer
	if hint > 0 && hint <= limit {
		buf.Grow(int(hint) + bytes.MinRead)
	}
	n, err := buf.ReadFrom(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, &TooLargeError{What: what, Limit: limit, Why: why}
	}
	return buf.Bytes(), nil
}

// Count returns how many bytes r yields, reading at most limit+1 of them: a longer
// input is a *TooLargeError. It keeps nothing of what it reads.
func Count(r io.Reader, limit int64, what, why string) (int64, error) {
	n, err := io.Copy(io.Discard, io.LimitReader(r, limit+1))
	if err != nil {
		return 0, err
	}
	if n > limit {
		return 0, &TooLargeError{What: what, Limit: limit, Why: why}
	}
	return n, nil
}
