package snapshot

import (
	"bytes"
	"encoding/binary"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"memlab.dev/memlab/internal/robusttest"
)

// doublingKey is a pickle under 1 KB: a dict whose key is a tuple of two
// references to a tuple of two references to … (levels deep), so that the key
// stands for 2^levels items although the pickle holds levels tuples.
func doublingKey(levels int) []byte {
	var b bytes.Buffer
	b.WriteString("\x80\x04}K\x01\x85") // {} and (1,)
	for range levels {
		b.WriteString("2\x86") // DUP, TUPLE2: (t, t)
	}
	b.WriteString("Ns.") // the key's value, SETITEM
	return b.Bytes()
}

// TestSharedTupleKeys: a dict key of tuples shared by memo references, doubling at
// each level, is refused with an error naming its size instead of being hashed item
// by item (2^60 items), and two such keys are not compared item by item either.
func TestSharedTupleKeys(t *testing.T) {
	data := doublingKey(60)
	if len(data) > 1024 {
		t.Fatalf("reproducer of %d bytes", len(data))
	}
	_, err := unpickle(data)
	robusttest.WantErr(t, "doubling key", err, "SETITEM", "dict key", "more than", "items")
	// Two different doubling keys in one dict (equality, not only hashing).
	var b bytes.Buffer
	b.WriteString("\x80\x04}(K\x01\x85")
	for range 40 {
		b.WriteString("2\x86")
	}
	b.WriteString("NK\x02\x85")
	for range 40 {
		b.WriteString("2\x86")
	}
	b.WriteString("Nu.")
	_, err = unpickle(b.Bytes())
	robusttest.WantErr(t, "two doubling keys", err, "dict key", "more than")
	// A modest tuple key still works, and equal tuples are one key.
	tr, err := unpickle([]byte("\x80\x04}(K\x01K\x02\x86K\x07K\x01K\x02\x86K\x08u."))
	if err != nil {
		t.Fatal(err)
	}
	if kv := tr.dict(tr.root).kv; len(kv) != 2 || kv[1].n != 8 {
		t.Errorf("equal tuple keys: %d items, value %v", len(kv)/2, kv[1])
	}
}

// TestMemoizeAfterSparsePut: MEMOIZE stores at the memo's size (its number of
// entries), as CPython does, also after PUTs at sparse indices and overwrites.
func TestMemoizeAfterSparsePut(t *testing.T) {
	// memo {1: 10}, {0: 11, 1: 10}, {0: 11, 1: 12}; MEMOIZE 13 goes to index 2.
	data := "\x80\x04K\x0aq\x010K\x0bq\x000K\x0cq\x010K\x0d\x940h\x02."
	tr, err := unpickle([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.repr(tr.root); got != "13" {
		t.Errorf("BINGET 2 after MEMOIZE gives %s, Python gives 13", got)
	}
}

// TestHugeInteger: integers of more than maxIntBytes bytes are refused at once, with
// their length, rather than decoded and printed digit by digit.
func TestHugeInteger(t *testing.T) {
	for _, n := range []int{1 << 20, 16 << 20} {
		var b bytes.Buffer
		b.WriteString("\x80\x04\x8b")
		binary.Write(&b, binary.LittleEndian, uint32(n))
		b.Write(bytes.Repeat([]byte{0x11}, n))
		b.WriteString(".")
		_, err := unpickle(b.Bytes())
		robusttest.WantErr(t, "huge LONG4", err, "LONG4", "integer of", "bytes", "at most")
		if err != nil && len(err.Error()) > 300 {
			t.Errorf("an error of %d bytes", len(err.Error()))
		}
	}
	long := "L" + strings.Repeat("7", 20000) + "L\n."
	_, err := unpickle([]byte(long))
	robusttest.WantErr(t, "huge LONG", err, "integer of 20000 digits")
	// Inside the limit, a big size is an error naming the field, short.
	big := edit(baseSnapshot(), "device_traces.0.1.size", bigInt(1000), false)
	_, err = Read(bytes.NewReader(pk(big)))
	robusttest.WantErr(t, "big size", err, "device_traces[0][1].size", "does not fit in int64")
	if err != nil && len(err.Error()) > 300 {
		t.Errorf("an error of %d bytes: %.200s", len(err.Error()), err)
	}
}

// TestSegmentFields: sizes that cannot be (negative), devices PyTorch cannot name
// (its device index is an int8), and time running backwards are errors naming the
// field and the entry.
func TestSegmentFields(t *testing.T) {
	base := baseSnapshot()
	for _, c := range []struct {
		path string
		v    any
		want string
	}{
		{"segments.0.total_size", -(2 << 20), "segments[0].total_size: -2097152 is negative"},
		{"segments.0.allocated_size", -1, "segments[0].allocated_size: -1 is negative"},
		{"segments.0.active_size", -1, "segments[0].active_size: -1 is negative"},
		{"segments.0.requested_size", -1, "segments[0].requested_size: -1 is negative"},
		{"segments.0.device", 1<<31 - 1, "segments[0].device: 2147483647 is not a device index"},
		{"device_traces.0.1.size", -5, "device_traces[0][1].size: -5 is negative"},
		{"device_traces.0.1.time_us", 50, "device_traces[0][1].time_us: 50 is before the previous entry's 100"},
		{"external_annotations.0.device", 300, "external_annotations[0].device: 300 is not a device index"},
	} {
		_, err := Read(bytes.NewReader(pk(edit(base, c.path, c.v, false))))
		robusttest.WantErr(t, c.path, err, c.want)
	}
	// The list form (torch.cuda.memory_snapshot()) sizes its traces by the devices.
	segs := edit(base, "segments.0.device", 1<<31-1, false).(kvs)[0].v
	_, err := Read(bytes.NewReader(pk(segs)))
	robusttest.WantErr(t, "list form", err, "segments[0].device: 2147483647 is not a device index")
}

// bigInt is 2^(8·n − 1) − 1 + …: an integer of n bytes.
func bigInt(n int) *big.Int {
	return new(big.Int).Lsh(big.NewInt(3), uint(8*n-2))
}

// TestReadFileMapped: a file large enough to be mapped (and released page by page
// as it decodes) reads as the same bytes read through Read.
func TestReadFileMapped(t *testing.T) {
	s := testSnapshot()
	one := s.Traces[0]
	var tr []TraceEntry
	for len(tr) < 700000 {
		for _, e := range one {
			e.TimeUS = int64(1796114070905429 + len(tr))
			if e.Action == ActionAlloc {
				e.Addr += uint64(len(tr)) << 12
			}
			tr = append(tr, e)
		}
	}
	s.Traces[0] = tr
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if buf.Len() < mapMin+releaseEvery {
		t.Fatalf("%d bytes: too small to be mapped and released", buf.Len())
	}
	path := filepath.Join(t.TempDir(), "big.pickle")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Error("ReadFile and Read differ")
	}
	// A corrupt big file is an error naming the file.
	data := buf.Bytes()
	data[len(data)/2] = 0xff
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadFile(path)
	robusttest.WantErr(t, "corrupt mapped file", err, "snapshot: pickle:", "(in "+path+")")
}
