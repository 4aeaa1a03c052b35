//go:build !linux

package snapshot

import "os"

// readFileMapped is mapping's stand-in where it is not implemented: the file is read.
func readFileMapped(path string) (*Snapshot, bool, error) { return nil, false, nil }

// decodeMapped is mapping's stand-in where it is not implemented: the caller reads
// the file.
func decodeMapped(f *os.File, size int64) (*Snapshot, bool, error) { return nil, false, nil }
