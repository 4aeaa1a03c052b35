package snapshot

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"memlab.dev/memlab/internal/gunzip"
)

// DefaultMaxSize bounds the pickle of a gzip-compressed snapshot once
// decompressed: 4 GiB − 1 bytes, the largest pickle the decoder reads, so that a
// gzip file is refused for its size only where the same pickle uncompressed would
// be too, and a gzip bomb costs at most what the largest plain snapshot costs.
const DefaultMaxSize = maxInput - 1

// maxSizeWhy names the bound in a *gunzip.TooLargeError.
func maxSizeWhy(limit int64) string {
	if limit == DefaultMaxSize {
		return "snapshot.DefaultMaxSize, the largest pickle memlab reads"
	}
	return "the bound given on a snapshot's size"
}

// boundOf is the bound on a decompressed pickle for maxSize (see ReadFileMax).
func boundOf(maxSize int64) int64 {
	if maxSize <= 0 || maxSize > DefaultMaxSize {
		return DefaultMaxSize
	}
	return maxSize
}

// ErrNotRegular is wrapped by [PickleSize] for a path that is not a regular file
// (a FIFO, a device, bash's <(…)): its size is known only by reading it, which
// only the reader may do.
var ErrNotRegular = errors.New("not a regular file: its size is known only as it is read")

// isGzipFile reports whether the file at path starts with gzip's magic bytes.
func isGzipFile(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var magic [2]byte
	n, _ := f.ReadAt(magic[:], 0) // pread: a short file is no error here
	return gunzip.Magic(magic[:n]), nil
}

// gunzipAll decompresses the gzip stream r, at most limit bytes (boundOf); hint,
// when positive, sizes the buffer first (see gunzip.ReadAll).
func gunzipAll(r io.Reader, maxSize, hint int64) ([]byte, error) {
	zr, _, err := gunzip.NewReader(bufio.NewReaderSize(r, 1<<16))
	if err != nil {
		return nil, err
	}
	limit := boundOf(maxSize)
	return gunzip.ReadAll(zr, limit, hint, "the snapshot's pickle", maxSizeWhy(limit))
}

// readGzipFile reads the gzip-compressed snapshot at path (see ReadFileMax).
func readGzipFile(path string, maxSize int64) (*Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	defer f.Close()
	zr, _, err := gunzip.NewReader(bufio.NewReaderSize(f, 1<<16))
	if err != nil {
		return nil, fmt.Errorf("snapshot: %s: %w", path, err)
	}
	// decompressed into an unnamed temporary file and decoded from a mapping
	// (decodeCopy), as a stream is: held in memory until decoded, the pickle
	// cost its size beside the snapshot (issue 28)
	limit := boundOf(maxSize)
	return decodeCopy(path, zr, limit, maxSizeWhy(limit), "", ", decompressed")
}

// PickleSize returns the size of the pickle at path: the file's size, or for a
// gzip-compressed file (detected by its magic bytes) the bytes it decompresses
// to, counted by decompressing it without keeping them (gzip's trailer states the
// size only modulo 2^32, and a file may lie). A gzip file that decompresses to
// more than maxSize (≤ 0: [DefaultMaxSize]) is the error ReadFileMax gives, and so
// are its other errors. It is what `memlab whatif` sizes its memory limit by. A path
// that is not a regular file is not opened: the error wraps [ErrNotRegular].
func PickleSize(path string, maxSize int64) (size int64, gzipped bool, err error) {
	if reg, err := regular(path); err != nil {
		return 0, false, fmt.Errorf("snapshot: %w", err)
	} else if !reg {
		// opened once, by the reader: reading it here would take its bytes
		return 0, false, fmt.Errorf("snapshot: %s: %w", path, ErrNotRegular)
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, false, fmt.Errorf("snapshot: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	zr, gz, err := gunzip.NewReader(br)
	if err != nil {
		return 0, true, fmt.Errorf("snapshot: %s: %w", path, err)
	}
	if !gz {
		fi, err := f.Stat()
		if err != nil {
			return 0, false, fmt.Errorf("snapshot: %w", err)
		}
		return fi.Size(), false, nil
	}
	limit := boundOf(maxSize)
	n, err := gunzip.Count(zr, limit, "the snapshot's pickle", maxSizeWhy(limit))
	if err != nil {
		return 0, true, fmt.Errorf("snapshot: %s: %w", path, err)
	}
	return n, true, nil
}
