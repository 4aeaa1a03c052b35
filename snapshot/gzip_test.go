package snapshot

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"memlab.dev/memlab/internal/gunzip"
	"memlab.dev/memlab/internal/robusttest"
	"memlab.dev/memlab/reference"
)

// readPickle returns the pickle of the snapshot file at path, decompressed when it
// is gzip.
func readPickle(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil || !gunzip.Magic(data) {
		return data, err
	}
	return gunzipAll(bytes.NewReader(data), 0, 0)
}

// gz returns data gzipped, one member.
func gz(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestGzipReadsAsPlain: a shipped snapshot gzipped (whatever the file is named)
// reads as the plain file does, through ReadFile, ReadFileMax and Read, and
// PickleSize counts its decompressed bytes.
func TestGzipReadsAsPlain(t *testing.T) {
	path, err := reference.File(reference.Workloads211, "multistream_branches__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	zipped := gz(t, data)
	for _, name := range []string{"snap.pickle.gz", "snap.pickle"} { // by magic, not by name
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, zipped, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: reads differently from the plain file", name)
		}
		n, isGz, err := PickleSize(p, 0)
		if err != nil || !isGz || n != int64(len(data)) {
			t.Errorf("%s: PickleSize %d, %v, %v; want %d, true", name, n, isGz, err, len(data))
		}
	}
	if n, isGz, err := PickleSize(path, 0); err != nil || isGz || n != int64(len(data)) {
		t.Errorf("plain: PickleSize %d, %v, %v; want %d, false", n, isGz, err, len(data))
	}
	got, err := Read(bytes.NewReader(zipped))
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Read of the gzip stream: %v", err)
	}
	// A bound as large as the pickle reads it; one byte less refuses it.
	p := filepath.Join(dir, "snap.pickle.gz")
	if _, err := ReadFileMax(p, int64(len(data))); err != nil {
		t.Errorf("bound = size: %v", err)
	}
	_, err = ReadFileMax(p, int64(len(data))-1)
	var tl *gunzip.TooLargeError
	if !errors.As(err, &tl) || tl.Limit != int64(len(data))-1 {
		t.Errorf("bound = size − 1: %v, want a TooLargeError", err)
	}
	robusttest.WantErr(t, "bound = size − 1", err, "snapshot: ", p, "larger than", "decompressed")
}

// TestGzipHostile: a gzip bomb is refused at the bound, not read whole; truncated,
// corrupt, empty and concatenated gzip files and trailing bytes are errors naming
// the file and what is wrong; a gzip of garbage is the pickle decoder's error,
// naming the file.
func TestGzipHostile(t *testing.T) {
	path, err := reference.File(reference.Workloads211, "multistream_branches__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	good := gz(t, data)
	bomb := gz(t, append([]byte("\x80\x04"), bytes.Repeat([]byte{0}, 64<<20)...)) // 64 MiB of zeros, ~64 KiB
	corrupt := bytes.Clone(good)
	corrupt[len(corrupt)/2] ^= 0xff
	badCRC := bytes.Clone(good)
	badCRC[len(badCRC)-5] ^= 0xff
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		data  []byte
		max   int64
		words []string
	}{
		{"bomb", bomb, 1 << 20, []string{"larger than 1048576 bytes decompressed", "gzip bomb"}},
		{"truncated", good[:len(good)/2], 0, []string{"truncated"}},
		{"truncated header", good[:5], 0, []string{"gzip"}},
		{"corrupt", corrupt, 0, []string{"gzip"}},
		{"bad checksum", badCRC, 0, []string{"checksum"}},
		{"empty stream", gz(t, nil), 0, []string{"empty"}},
		{"two members", append(bytes.Clone(good), good...), 0, []string{"second gzip member"}},
		{"trailing bytes", append(bytes.Clone(good), "junk"...), 0, []string{"trailing"}},
		{"garbage inside", gz(t, []byte("this is not a pickle")), 0, []string{"pickle", "decompressed"}},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".pickle.gz")
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		robusttest.NoPanic(t, c.name, func() {
			s, err := ReadFileMax(p, c.max)
			if s != nil {
				t.Errorf("%s: a snapshot with error %v", c.name, err)
			}
			robusttest.WantErr(t, c.name, err, append([]string{"snapshot: ", p}, c.words...)...)
			if c.name != "garbage inside" {
				_, _, err = PickleSize(p, c.max)
				robusttest.WantErr(t, c.name+" (PickleSize)", err, append([]string{"snapshot: ", p}, c.words...)...)
			}
			_, err = Read(bytes.NewReader(c.data))
			if err == nil {
				t.Errorf("%s: Read gave no error", c.name)
			}
		})
	}
}
