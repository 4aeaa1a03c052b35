package snapshot

import (
	"os"
	"syscall"
)

// readFileMapped decodes the file at path from a read-only private mapping of it
// instead of a copy in memory, and hands the pages it has decoded back to the
// kernel as it goes (madvise DONTNEED): the decoder copies every string and byte
// string it keeps, so the input need not stay resident, and a snapshot of a GB
// costs its decoded form, not that plus itself. ok is false when the file cannot
// be mapped (then the caller reads it).
func readFileMapped(path string) (s *Snapshot, ok bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, true, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < mapMin || fi.Size() >= maxInput {
		return nil, false, nil
	}
	return decodeMapped(f, fi.Size())
}

// decodeMapped decodes the first size bytes of the open file f from a mapping, as
// readFileMapped does; ok is false when it cannot be mapped.
func decodeMapped(f *os.File, size int64) (s *Snapshot, ok bool, err error) {
	if size <= 0 || size >= maxInput {
		return nil, false, nil
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, false, nil
	}
	defer syscall.Munmap(data)
	page := os.Getpagesize()
	release := func(from, upTo int) {
		from &^= page - 1
		upTo &^= page - 1
		if upTo > from {
			syscall.Madvise(data[from:upTo], syscall.MADV_DONTNEED)
		}
	}
	s, err = decodeWith(data, release)
	return s, true, err
}

// mapMin is the size from which a file is mapped rather than read.
const mapMin = 16 << 20
