package snapshot

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"memlab.dev/memlab/internal/gunzip"
)

// readStream reads the snapshot at path when it is not a regular file (a FIFO, a
// character device such as /dev/zero, bash's <(…)): it is opened once and read
// once, since its size is unknown until it ends and reading it again would see
// other bytes or none. Its pickle (decompressed, when it starts with gzip's magic
// bytes) is copied, at most maxSize bytes (see boundOf), into an unnamed temporary
// file and decoded from a mapping of it, as a plain file is: a longer stream is an
// error wrapping a *gunzip.TooLargeError once that many bytes are read, and what
// it costs in memory while it is read is a buffer, not its size. A first byte that
// no pickle starts with (/dev/zero's 0) is an error at once.
func readStream(path string, maxSize int64) (*Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	zr, gz, err := gunzip.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %s: %w", path, err)
	}
	var in io.Reader = br
	if gz {
		in = zr
	} else {
		first, err := br.Peek(1)
		if err != nil {
			return nil, fmt.Errorf("snapshot: %s: reading: %w", path, err)
		}
		if _, ok := opNames[first[0]]; !ok {
			return nil, fmt.Errorf("snapshot: %s: not a pickle: it starts with byte %#02x, which no pickle opcode is", path, first[0])
		}
	}
	limit := boundOf(maxSize)
	return decodeCopy(path, in, limit, maxSizeWhy(limit)+"; "+path+" is not a regular file, so its size is known only as it is read", "reading: ", "")
}

// decodeCopy copies the pickle in (at most limit bytes: a longer one is an error
// wrapping a *gunzip.TooLargeError that says why) into an unnamed temporary file
// and decodes it from a mapping of that file, whose pages are handed back as the
// decoder passes them, as a plain file's are: what reading costs beside the
// snapshot is a buffer, not the pickle. readErr prefixes an error of in; where
// names the input in a decoding error (", decompressed").
func decodeCopy(path string, in io.Reader, limit int64, why, readErr, where string) (*Snapshot, error) {
	tmp, err := os.CreateTemp("", "memlab-stream-*.pickle")
	if err != nil {
		return nil, fmt.Errorf("snapshot: %s: a temporary file to hold it: %w", path, err)
	}
	defer tmp.Close()
	os.Remove(tmp.Name()) // unnamed: gone once closed, whatever happens
	n, err := io.Copy(tmp, io.LimitReader(in, limit+1))
	if err != nil {
		return nil, fmt.Errorf("snapshot: %s: %s%w", path, readErr, err)
	}
	if n > limit {
		return nil, fmt.Errorf("snapshot: %s: %w", path, &gunzip.TooLargeError{What: "the snapshot's pickle", Limit: limit, Why: why})
	}
	s, ok, err := decodeMapped(tmp, n)
	if !ok {
		data := make([]byte, n)
		if _, err := tmp.ReadAt(data, 0); err != nil && err != io.EOF {
			return nil, fmt.Errorf("snapshot: %s: reading it back: %w", path, err)
		}
		s, err = decode(data)
	}
	if err != nil {
		return nil, fmt.Errorf("%w (in %s%s)", err, path, where)
	}
	return s, nil
}

// regular reports whether path names a regular file (following links), and its
// os.Stat error.
func regular(path string) (bool, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	return fi.Mode().IsRegular(), nil
}
