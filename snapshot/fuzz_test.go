package snapshot

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"memlab.dev/memlab/reference"
)

// FuzzRead feeds arbitrary bytes to Read. It must never panic, whatever it
// accepts Write must write and Read read back equal, and the streaming decode
// must agree with the plain one wherever it does not give way.
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
		// The streaming decode, where it does not give way, agrees with the plain one.
		if st, err := decodeStreaming(data, nil); err == nil {
			plain, perr := decodePlain(data)
			if perr != nil || !reflect.DeepEqual(st, plain) {
				t.Fatalf("the streaming decode reads %+v, the plain one %+v, %v", st, plain, perr)
			}
		}
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
