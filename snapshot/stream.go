package snapshot

import (
	"bufio"
	"fmt"
	"os"

	"memlab.dev/memlab/internal/gunzip"
)

// readStream reads the snapshot at path when it is not a regular file (a FIFO, a
// character device such as /dev/zero, bash's <(…)): it is opened once and read
// once, through a bounded reader, since its size is unknown until it ends and
// reading it again would see other bytes or none. Its pickle (decompressed, when
// it starts with gzip's magic bytes) may be at most maxSize bytes (see boundOf): a
// longer stream is an error wrapping a *gunzip.TooLargeError, found once that many
// bytes are read, never an exhausted memory. A first byte that no pickle starts
// with (/dev/zero's 0) is an error at once.
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
	limit := boundOf(maxSize)
	what, why := "the snapshot's pickle", maxSizeWhy(limit)+"; "+path+" is not a regular file, so its size is known only as it is read"
	var data []byte
	if gz {
		data, err = gunzip.ReadAll(zr, limit, 0, what, why)
	} else {
		first, perr := br.Peek(1)
		if perr != nil {
			return nil, fmt.Errorf("snapshot: %s: reading: %w", path, perr)
		}
		if _, ok := opNames[first[0]]; !ok {
			return nil, fmt.Errorf("snapshot: %s: not a pickle: it starts with byte %#02x, which no pickle opcode is", path, first[0])
		}
		data, err = gunzip.ReadAll(br, limit, 0, what, why)
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot: %s: %w", path, err)
	}
	s, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
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
