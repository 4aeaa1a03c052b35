package snapshot

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"memlab.dev/memlab/internal/gunzip"
	"memlab.dev/memlab/reference"
)

// FuzzRead feeds arbitrary bytes to Read, plain and gzipped. It must never
// panic, the gzipped bytes must read as the plain ones, whatever it accepts
// Write must write and Read read back equal, and the streaming decode must agree
// with the plain one wherever it does not give way. Gzipped seeds (a shipped
// snapshot, a truncated one, a small bomb) feed the gzip layer itself.
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
	first, err := os.ReadFile(seeds[len(seeds)-1])
	if err != nil {
		f.Fatal(err)
	}
	zipped := gz(f, first)
	f.Add(zipped)
	f.Add(zipped[:len(zipped)/2])
	f.Add(gz(f, make([]byte, 1<<20)))
	f.Fuzz(func(t *testing.T, data []byte) {
		// The same bytes gzipped read as they do plain: the same snapshot, or an
		// error for the same input.
		ps, perr := Read(bytes.NewReader(data))
		zs, zerr := Read(bytes.NewReader(gz(t, data)))
		if gunzip.Magic(data) {
			// gzip inside gzip: the outer layer only is taken off
		} else if (perr == nil) != (zerr == nil) || !reflect.DeepEqual(ps, zs) {
			t.Fatalf("gzipped reads %v (%v), plain %v (%v)", zs != nil, zerr, ps != nil, perr)
		}
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
