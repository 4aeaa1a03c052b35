package snapshot

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"memlab.dev/memlab/reference"
)

// FuzzRead feeds arbitrary bytes to Read. It must never panic, and whatever it
// accepts, Write must write and Read read back equal.
func FuzzRead(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.pickle"))
	for _, name := range []string{"multistream_branches__default.pickle", "multistream_branches__expandable_segments_True.pickle"} {
		p, err := reference.File(reference.Workloads211, name)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, p)
	}
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	var buf bytes.Buffer
	if err := testSnapshot().Write(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(pk(baseSnapshot()))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Read(bytes.NewReader(data))
		if err != nil {
			if s != nil {
				t.Fatal("a snapshot with an error")
			}
			return
		}
		var out bytes.Buffer
		if err := s.Write(&out); err != nil {
			t.Fatal(err)
		}
		back, err := Read(&out)
		if err != nil {
			t.Fatalf("reading what Write wrote: %v", err)
		}
		if !reflect.DeepEqual(back, s) {
			t.Fatalf("round trip differs:\n%+v\n%+v", s, back)
		}
	})
}
