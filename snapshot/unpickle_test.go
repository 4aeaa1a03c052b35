package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"memlab.dev/memlab/internal/robusttest"
	"memlab.dev/memlab/reference"
)

// repr renders a decoded value as Python's repr() does, for the values the
// test data holds.
func (t *tree) repr(v value) string {
	var b strings.Builder
	t.reprTo(&b, v, map[value]bool{})
	return b.String()
}

func (t *tree) reprTo(b *strings.Builder, v value, open map[value]bool) {
	switch v.k {
	case kNone:
		b.WriteString("None")
	case kBool:
		if v.n != 0 {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case kInt:
		b.WriteString(strconv.FormatInt(int64(t.bits(v)), 10))
	case kUint:
		b.WriteString(strconv.FormatUint(t.bits(v), 10))
	case kBig:
		b.WriteString(t.bigs[v.n].String())
	case kFloat:
		f := math.Float64frombits(t.bits(v))
		s := strconv.FormatFloat(f, 'g', -1, 64)
		switch {
		case math.IsInf(f, 1):
			s = "inf"
		case math.IsInf(f, -1):
			s = "-inf"
		case !strings.ContainsAny(s, ".e"):
			s += ".0"
		}
		b.WriteString(s)
	case kStr:
		b.WriteString(pyQuote(t.strs[v.n], false))
	case kBytes:
		b.WriteString("b" + pyQuote(string(t.bytes[v.n]), true))
	case kDict, kList, kSet, kFrozenSet:
		if open[v] {
			b.WriteString(map[kind]string{kDict: "{...}", kList: "[...]"}[v.k])
			return
		}
		open[v] = true
		defer delete(open, v)
		switch v.k {
		case kDict:
			b.WriteString("{")
			kv := t.dict(v).kv
			for i := 0; i < len(kv); i += 2 {
				if i > 0 {
					b.WriteString(", ")
				}
				t.reprTo(b, kv[i], open)
				b.WriteString(": ")
				t.reprTo(b, kv[i+1], open)
			}
			b.WriteString("}")
		case kList:
			b.WriteString("[")
			t.reprItems(b, t.items(v), open)
			b.WriteString("]")
		case kSet:
			b.WriteString("{")
			t.reprItems(b, t.items(v), open)
			b.WriteString("}")
		case kFrozenSet:
			b.WriteString("frozenset({")
			t.reprItems(b, t.items(v), open)
			b.WriteString("})")
		}
	case kTuple:
		items := t.items(v)
		b.WriteString("(")
		t.reprItems(b, items, open)
		if len(items) == 1 {
			b.WriteString(",")
		}
		b.WriteString(")")
	}
}

func (t *tree) reprItems(b *strings.Builder, items []value, open map[value]bool) {
	for i, it := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		t.reprTo(b, it, open)
	}
}

func pyQuote(s string, isBytes bool) string {
	var b strings.Builder
	b.WriteByte('\'')
	write := func(r rune) {
		switch {
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || (isBytes && r > 0x7f):
			fmt.Fprintf(&b, `\x%02x`, r)
		case !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	if isBytes {
		for i := 0; i < len(s); i++ {
			write(rune(s[i]))
		}
	} else {
		for _, r := range s {
			write(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// TestUnpickleProtocols decodes the same plain values pickled by CPython with
// protocols 0 to 5 (testdata/gen.py) and compares with Python's repr of them:
// every integer width, floats, unicode, bytes, tuples, shared and recursive
// lists, sets, and dict keys that are not strings (True and 1 are one key).
func TestUnpickleProtocols(t *testing.T) {
	for proto := 0; proto <= 5; proto++ {
		t.Run(fmt.Sprint("protocol", proto), func(t *testing.T) {
			data := readTestdata(t, fmt.Sprintf("values_p%d.pickle", proto))
			want := strings.TrimSuffix(string(readTestdata(t, fmt.Sprintf("values_p%d.repr", proto))), "\n")
			tr, err := unpickle(data)
			if err != nil {
				t.Fatal(err)
			}
			if got := tr.repr(tr.root); got != want {
				t.Errorf("decoded\n%s\nPython's repr\n%s", got, want)
			}
		})
	}
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestMaliciousPickle: pickles whose unpickling runs os.system, by GLOBAL + REDUCE
// (protocols 0 and 2) and STACK_GLOBAL + REDUCE (protocols 4 and 5), are refused at
// the import, naming it, and nothing runs.
func TestMaliciousPickle(t *testing.T) {
	const canary = "/tmp/memlab-exploited"
	os.Remove(canary)
	for _, c := range []struct{ file, op string }{
		{"evil_global_p0.pickle", "GLOBAL (0x63)"},
		{"evil_global_p2.pickle", "GLOBAL (0x63)"},
		{"evil_stack_global_p4.pickle", "STACK_GLOBAL (0x93)"},
		{"evil_top_p5.pickle", "STACK_GLOBAL (0x93)"},
	} {
		data := readTestdata(t, c.file)
		_, err := Read(bytes.NewReader(data))
		if !errors.Is(err, ErrRefused) {
			t.Fatalf("%s: got %v, want an error wrapping ErrRefused", c.file, err)
		}
		var pe *PickleError
		if !errors.As(err, &pe) {
			t.Fatalf("%s: %v is not a *PickleError", c.file, err)
		}
		msg := err.Error()
		for _, want := range []string{"snapshot: pickle: opcode " + c.op, fmt.Sprintf("at offset %d", pe.Offset), "posix.system"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q lacks %q", c.file, msg, want)
			}
		}
		if pe.Offset <= 0 || pe.Offset >= len(data) || data[pe.Offset] != pe.Opcode {
			t.Errorf("%s: offset %d does not hold opcode %#x", c.file, pe.Offset, pe.Opcode)
		}
	}
	if _, err := os.Stat(canary); err == nil {
		t.Fatalf("%s exists: something ran", canary)
	}
}

// TestRefusedOpcodes: every opcode that imports, calls or builds an object, or
// reaches outside the pickle, is refused with its name and offset.
func TestRefusedOpcodes(t *testing.T) {
	for _, c := range []struct {
		name string
		data string
	}{
		{"REDUCE", "\x80\x04NN)R."},
		{"BUILD", "\x80\x04}}b."},
		{"INST", "(ios\nsystem\n."},
		{"OBJ", "(N)o."},
		{"NEWOBJ", "\x80\x02N)\x81."},
		{"NEWOBJ_EX", "\x80\x04N)}\x92."},
		{"EXT1", "\x80\x02\x82\x01."},
		{"EXT2", "\x80\x02\x83\x01\x00."},
		{"EXT4", "\x80\x02\x84\x01\x00\x00\x00."},
		{"PERSID", "Pid\n."},
		{"BINPERSID", "\x80\x02NQ."},
		{"NEXT_BUFFER", "\x80\x05\x97."},
		{"READONLY_BUFFER", "\x80\x05N\x98."},
		{"GLOBAL", "cbuiltins\neval\n."},
		{"STACK_GLOBAL", "\x80\x04\x8c\x08builtins\x8c\x04eval\x93."},
	} {
		_, err := Read(strings.NewReader(c.data))
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "opcode "+c.name+" (") {
			t.Errorf("%s: got %v, want it refused by name", c.name, err)
		}
	}
	_, err := Read(strings.NewReader("cbuiltins\neval\n."))
	if err == nil || !strings.Contains(err.Error(), "builtins.eval") || !strings.Contains(err.Error(), "offset 0") {
		t.Errorf("GLOBAL: %v does not name the object and offset", err)
	}
}

// TestPickleErrors: malformed input is an error naming what and where, not a panic.
func TestPickleErrors(t *testing.T) {
	huge := make([]byte, 9)
	huge[0] = opBinUnicode8
	binary.LittleEndian.PutUint64(huge[1:], 1<<40)
	for _, c := range []struct {
		name, data, want string
	}{
		{"empty", "", "snapshot: pickle: empty input"},
		{"json", `{"segments": []}`, "opcode unknown (0x7b) at offset 0: not a pickle opcode"},
		{"zip", "PK\x03\x04rest", "a zip archive"},
		{"no stop", "\x80\x04K\x01", "input ends at offset 4 without a STOP opcode"},
		{"huge string", "\x80\x04" + string(huge) + ".", "opcode BINUNICODE8 (0x8d) at offset 2: BINUNICODE8 data of 1099511627776 bytes"},
		{"huge string remain", "\x80\x04" + string(huge) + ".", "data of 1099511627776 bytes, but only 1 bytes remain"},
		{"huge long", "\x80\x04\x8b\xff\xff\xff\x7f.", "integer of 2147483647 bytes: memlab reads integers of at most 4096 bytes"},
		{"negative long4", "\x80\x04\x8b\xff\xff\xff\xff.", "negative LONG4 length"},
		{"memo", "\x80\x04j\x07\x00\x00\x00.", "opcode LONG_BINGET (0x6a) at offset 2: memo index 7 was never stored"},
		{"empty stop", "\x80\x04.", "the stack holds 0 values at STOP, want 1"},
		{"two at stop", "\x80\x04NN.", "the stack holds 2 values at STOP, want 1"},
		{"open mark", "\x80\x04N(.", "1 MARKs left open at STOP"},
		{"appends without mark", "\x80\x04]Ne.", "opcode APPENDS (0x65) at offset 4: no MARK to pop to"},
		{"setitems on list", "\x80\x04](NNu.", "sets items of a list, want a dict"},
		{"append to dict", "\x80\x04}Na.", "adds items to a dict, want a list"},
		{"odd setitems", "\x80\x04}(Nu.", "odd number of values (1)"},
		{"unhashable key", "\x80\x04}(]Nu.", "dict key of type list is not hashable"},
		{"pop empty", "\x80\x040.", "opcode POP (0x30) at offset 2: needs a value but the stack is empty"},
		{"tuple1 under mark", "\x80\x04N(\x85.", "needs 1 values, the stack holds 0"},
		{"tuple2 short", "\x80\x04N\x86.", "needs 2 values, the stack holds 1"},
		{"protocol 6", "\x80\x06N.", "protocol 6 is not supported"},
		{"after stop", "\x80\x04N.N", "1 bytes follow the STOP opcode"},
		{"bad int", "Ixyz\n.", `"xyz" is not an integer`},
		{"bad float", "Fxyz\n.", `"xyz" is not a float`},
		{"no newline", "I12", "argument not terminated by a newline"},
		{"bad string", "Sabc\n.", "is not quoted"},
		{"unknown opcode", "\x80\x04\xff.", "opcode unknown (0xff) at offset 2"},
		{"not a dict", "\x80\x04N.", "snapshot: the pickle holds a NoneType, want the dict torch.cuda.memory._snapshot() returns"},
	} {
		robusttest.NoPanic(t, c.name, func() {
			_, err := Read(strings.NewReader(c.data))
			robusttest.WantErr(t, c.name, err, c.want)
		})
	}
}

// TestLengthsAreNotAllocations: a length field claiming a terabyte costs nothing.
func TestLengthsAreNotAllocations(t *testing.T) {
	data := []byte{0x80, 4, opBinBytes8, 0, 0, 0, 0, 0, 1, 0, 0, '.'} // 2^40 bytes
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := unpickle(data); err == nil {
		t.Fatal("no error")
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Errorf("decoding 12 bytes allocated %d bytes", d)
	}
}

// TestTruncated: every proper prefix of a real snapshot is an error.
func TestTruncated(t *testing.T) {
	var buf bytes.Buffer
	if err := testSnapshot().Write(&buf); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	for n := 0; n < len(data); n++ {
		robusttest.NoPanic(t, fmt.Sprintf("prefix of %d bytes", n), func() {
			_, err := Read(bytes.NewReader(data[:n]))
			robusttest.WantErr(t, fmt.Sprintf("prefix of %d of %d bytes", n, len(data)), err, "snapshot: ")
		})
	}
	if _, err := Read(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
}

// testSnapshot is a small snapshot with every kind of value the writer emits.
func testSnapshot() *Snapshot {
	fr := []Frame{{Filename: "train.py", Line: 12, Name: "step"}, {Filename: "??", Line: 0, Name: "c10::alloc()"}}
	s := &Snapshot{
		Segments: []Segment{{
			Device: 0, Address: 1 << 40, TotalSize: 2 << 20, AllocatedSize: 1024, ActiveSize: 1536, RequestedSize: 1400,
			Stream: 0x5000, SegmentType: SegmentSmall, PoolID: [2]uint64{0, 0}, Frames: fr,
			Blocks: []Block{
				{Address: 1 << 40, Size: 1024, RequestedSize: 1000, State: StateActiveAllocated, Frames: fr},
				{Address: 1<<40 + 1024, Size: 512, RequestedSize: 400, State: StateActivePendingFree},
				{Address: 1<<40 + 1536, Size: 2<<20 - 1536, RequestedSize: 9, State: StateInactive},
			},
		}},
		Traces: [][]TraceEntry{
			{
				{Action: ActionSegmentAlloc, Addr: 1 << 40, Size: 2 << 20, Stream: 0x5000, TimeUS: 1796114070905429, Frames: fr},
				{Action: ActionAlloc, Addr: 1 << 40, Size: 1000, Stream: 0x5000, TimeUS: 1796114070905430, Frames: fr, Meta: &EntryMeta{CompileContext: "N/A"}},
				{Action: ActionOOM, Size: 1 << 36, TimeUS: 1796114070905431, Meta: &EntryMeta{DeviceFree: 123 << 20, UserMetadata: "step 3"}},
			},
			{},
		},
		Settings: Settings{
			Conf: "max_split_size_mb:128,roundup_power2_divisions:[256:1,512:2,>:8]", MaxSplitSize: 128 << 20,
			GarbageCollectionThreshold: 0.5, PinnedNumRegisterThreads: 1, HasGraphCaptureRecordStreamReuse: true,
			RoundupPower2Divisions: [16]int{0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 8, 8, 8, 8, 8, 8},
		},
		HasSettings: true,
		Annotations: []Annotation{{Stage: "START", Name: "Optimizer.step", Device: 0, TimeUS: 1796114070905432}},
	}
	return s
}

// TestLargeDict: a dict of 200000 keys decodes in linear time, and repeated keys
// (1, 1.0 and True are one key, as in Python) keep the last value.
func TestLargeDict(t *testing.T) {
	const n = 200000
	var b bytes.Buffer
	b.WriteString("\x80\x04}(")
	for i := 0; i < n; i++ {
		b.WriteByte(opBinInt)
		binary.Write(&b, binary.LittleEndian, int32(i))
		b.WriteByte(opNone)
	}
	b.WriteString("G\x3f\xf0\x00\x00\x00\x00\x00\x00K\x07") // 1.0: 7
	b.WriteString("\x88K\x08")                              // True: 8
	b.WriteString("u.")
	tr, err := unpickle(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	kv := tr.dict(tr.root).kv
	if len(kv) != 2*n {
		t.Fatalf("%d keys, want %d", len(kv)/2, n)
	}
	if kv[2].k != kInt || kv[2].n != 1 || kv[3].k != kInt || kv[3].n != 8 {
		t.Errorf("key 1 holds %v, want 8 (the last of 1, 1.0 and True)", kv[3])
	}
}

// strListPickle is a pickle of a list of strs, each written anew (SHORT_BINUNICODE
// and MEMOIZE), as CPython writes str objects that are equal but not the same.
func strListPickle(strs []string) []byte {
	b := []byte{opProto, 4, opEmptyList, opMemoize, opMark}
	for _, s := range strs {
		b = append(b, opShortBinUni, byte(len(s)))
		b = append(b, s...)
		b = append(b, opMemoize)
	}
	return append(b, opAppends, opStop)
}

// TestShortStringsInterned checks that a short string written again and again (a
// 2.11 history's compile_context "N/A", once per entry) is kept once, that the
// values read are the strings written, and that the strings kept once are bounded
// (internCap) on an input of many different ones, which still reads as written.
func TestShortStringsInterned(t *testing.T) {
	same := make([]string, 10000)
	for i := range same {
		same[i] = "N/A"
	}
	distinct := make([]string, internCap+1000)
	for i := range distinct {
		distinct[i] = fmt.Sprintf("s%06d", i)
	}
	long := strings.Repeat("x", internMax+1)
	for _, c := range []struct {
		name     string
		strs     []string
		wantKept int
	}{
		{"one short string written 10000 times", same, 1},
		{"more short strings than are interned", append(distinct, distinct...), len(distinct) + 1000},
		{"a string longer than internMax", []string{long, long}, 2},
	} {
		tr, err := unpickle(strListPickle(c.strs))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		items := tr.items(tr.root)
		if len(items) != len(c.strs) {
			t.Fatalf("%s: %d items, want %d", c.name, len(items), len(c.strs))
		}
		for i, v := range items {
			if v.k != kStr || tr.str(v) != c.strs[i] {
				t.Fatalf("%s: item %d reads %s, want %q", c.name, i, tr.repr(v), c.strs[i])
			}
		}
		if len(tr.strs) != c.wantKept {
			t.Errorf("%s: %d strings kept, want %d", c.name, len(tr.strs), c.wantKept)
		}
	}
}

// unpickleBoth decodes data with and without the fast opcodes (decoder.fast) and
// fails unless both give the same tree or the same error.
func unpickleBoth(t *testing.T, data []byte) {
	t.Helper()
	fast, ferr := unpickle(data)
	fastOpcodes = false
	slow, serr := unpickle(data)
	fastOpcodes = true
	if (ferr == nil) != (serr == nil) || ferr != nil && ferr.Error() != serr.Error() {
		t.Fatalf("with fast opcodes: %v; without: %v", ferr, serr)
	}
	if ferr == nil && !reflect.DeepEqual(fast, slow) {
		t.Fatalf("with fast opcodes: %s; without: %s", fast.repr(fast.root), slow.repr(slow.root))
	}
}

// TestFastOpcodesAgree checks that the decoder's fast opcodes give what step gives
// on the reference snapshots, on each cut short at every few hundred bytes, and on
// the hand-made pickles of testdata.
func TestFastOpcodesAgree(t *testing.T) {
	paths, err := reference.GlobPickles(reference.Workloads211, "*.pickle")
	if err != nil || len(paths) == 0 {
		t.Fatalf("%d pickles, %v", len(paths), err)
	}
	testdata, _ := filepath.Glob(filepath.Join("testdata", "*.pickle"))
	for _, path := range append(paths[:3], testdata...) {
		data := plainPickle(t, path)
		unpickleBoth(t, data)
		for cut := 0; cut < min(len(data), 1<<16); cut += 251 {
			unpickleBoth(t, data[:cut])
		}
	}
}

// FuzzFastOpcodes checks on any bytes that the decoder's fast opcodes give what
// step gives.
func FuzzFastOpcodes(f *testing.F) {
	f.Add([]byte{opProto, 4, opEmptyDict, opMemoize, opMark, opShortBinUni, 1, 'a', opMemoize, opLong1, 2, 0xff, 0x7f, opBinGet, 1, opBinInt1, 5, opSetItems, opStop})
	f.Add([]byte{opProto, 4, opFrame, 3, 0, 0, 0, 0, 0, 0, 0, opEmptyList, opMemoize, opBinInt, opStop})
	f.Add([]byte{opMark, opLongBinGet, 9, 0, 0, 0, opBinPut, 3, opMemoize, opBinGet, 3, opTuple, opStop})
	f.Fuzz(func(t *testing.T, data []byte) { unpickleBoth(t, data) })
}
