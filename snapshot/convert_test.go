package snapshot

import (
	"bytes"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A tiny pickler for test inputs: kvs is an ordered dict, tup a tuple, big a
// *big.Int; lists, strings, ints, floats, booleans and nil as in Go.
type (
	kvs []kv
	kv  struct {
		k string
		v any
	}
	tup []any
)

func pk(v any) []byte {
	var buf bytes.Buffer
	buf.WriteString("\x80\x04")
	pkTo(&buf, v)
	buf.WriteByte('.')
	return buf.Bytes()
}

func pkTo(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteByte('N')
	case bool:
		if x {
			b.WriteByte(0x88)
		} else {
			b.WriteByte(0x89)
		}
	case int:
		b.WriteString("L" + strconv.Itoa(x) + "L\n")
	case *big.Int:
		b.WriteString("L" + x.String() + "L\n")
	case float64:
		b.WriteString("F" + strconv.FormatFloat(x, 'g', -1, 64) + "\n")
	case string:
		b.WriteString("X")
		var n [4]byte
		n[0], n[1], n[2], n[3] = byte(len(x)), byte(len(x)>>8), byte(len(x)>>16), byte(len(x)>>24)
		b.Write(n[:])
		b.WriteString(x)
	case []any:
		b.WriteString("](")
		for _, e := range x {
			pkTo(b, e)
		}
		b.WriteByte('e')
	case tup:
		b.WriteByte('(')
		for _, e := range x {
			pkTo(b, e)
		}
		b.WriteByte('t')
	case kvs:
		b.WriteString("}(")
		for _, e := range x {
			pkTo(b, e.k)
			pkTo(b, e.v)
		}
		b.WriteByte('u')
	default:
		panic("pk: " + strconv.Quote(strings.TrimSpace(string(rune(0)))))
	}
}

func frame(name string, line int) kvs {
	return kvs{{"name", name}, {"filename", "train.py"}, {"line", line}}
}

// baseSnapshot is a valid snapshot in PyTorch 2.11's shape.
func baseSnapshot() kvs {
	fr := []any{frame("step", 3), frame("main", 9)}
	return kvs{
		{"segments", []any{kvs{
			{"device", 0}, {"address", 1 << 21}, {"total_size", 2 << 20}, {"allocated_size", 512},
			{"active_size", 512}, {"requested_size", 500}, {"stream", 0}, {"segment_type", "small"},
			{"segment_pool_id", tup{0, 0}}, {"is_expandable", false}, {"frames", []any{}},
			{"blocks", []any{
				kvs{{"address", 1 << 21}, {"size", 512}, {"requested_size", 500}, {"state", "active_allocated"}, {"frames", fr}},
				kvs{{"address", 1<<21 + 512}, {"size", 2<<20 - 512}, {"requested_size", 0}, {"state", "inactive"}, {"frames", []any{}}},
			}},
		}}},
		{"device_traces", []any{[]any{
			kvs{{"action", "segment_alloc"}, {"addr", 1 << 21}, {"size", 2 << 20}, {"stream", 0}, {"time_us", 100}, {"frames", fr}},
			kvs{{"action", "alloc"}, {"addr", 1 << 21}, {"size", 500}, {"stream", 0}, {"time_us", 101}, {"compile_context", "N/A"}, {"user_metadata", ""}, {"frames", fr}},
			kvs{{"action", "oom"}, {"device_free", 1 << 20}, {"size", 1 << 30}, {"stream", 0}, {"time_us", 102}},
		}}},
		{"allocator_settings", kvs{
			{"PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128"}, {"max_split_size", 128 << 20},
			{"garbage_collection_threshold", 0.0}, {"expandable_segments", false},
			{"roundup_power2_divisions", kvs{{"1", 0}, {"2", 4}}},
		}},
		{"external_annotations", []any{kvs{{"stage", "START"}, {"name", "fwd"}, {"device", 0}, {"time_us", 99}}}},
	}
}

// edit returns a copy of root with the value at path ("device_traces.0.1.size")
// replaced by v, or removed when del.
func edit(root any, path string, v any, del bool) any {
	parts := strings.Split(path, ".")
	var rec func(node any, parts []string) any
	rec = func(node any, parts []string) any {
		switch x := node.(type) {
		case kvs:
			out := kvs{}
			for _, e := range x {
				if e.k == parts[0] {
					if len(parts) == 1 {
						if del {
							continue
						}
						e.v = v
					} else {
						e.v = rec(e.v, parts[1:])
					}
				}
				out = append(out, e)
			}
			return out
		case []any:
			i, _ := strconv.Atoi(parts[0])
			out := append([]any(nil), x...)
			if len(parts) == 1 {
				out[i] = v
			} else {
				out[i] = rec(x[i], parts[1:])
			}
			return out
		}
		panic("edit: bad path " + path)
	}
	return rec(root, parts)
}

func TestReadShape(t *testing.T) {
	s, err := Read(bytes.NewReader(pk(baseSnapshot())))
	if err != nil {
		t.Fatal(err)
	}
	tr := s.Traces[0]
	if len(s.Segments) != 1 || len(s.Segments[0].Blocks) != 2 || len(tr) != 3 {
		t.Fatalf("%+v", s)
	}
	if e := tr[1]; e.Action != ActionAlloc || e.Addr != 1<<21 || e.Size != 500 || e.TimeUS != 101 || e.CompileContext() != "N/A" ||
		len(e.Frames) != 2 || e.Frames[1] != (Frame{Filename: "train.py", Line: 9, Name: "main"}) {
		t.Errorf("alloc entry %+v", e)
	}
	if e := tr[2]; e.Action != ActionOOM || e.DeviceFree() != 1<<20 || e.Size != 1<<30 || e.Addr != 0 {
		t.Errorf("oom entry %+v", e)
	}
	if !s.HasSettings || s.Settings.MaxSplitSize != 128<<20 || s.Settings.RoundupPower2Divisions[1] != 4 {
		t.Errorf("settings %+v", s.Settings)
	}
	if len(s.Annotations) != 1 || s.Annotations[0] != (Annotation{Stage: "START", Name: "fwd", TimeUS: 99}) {
		t.Errorf("annotations %+v", s.Annotations)
	}
	if !s.HasFrames() || !s.HasHistory() || s.Devices() != 1 || len(s.DeviceSegments(0)) != 1 || len(s.DeviceSegments(1)) != 0 {
		t.Errorf("HasFrames %v, HasHistory %v, Devices %d, DeviceSegments %d/%d",
			s.HasFrames(), s.HasHistory(), s.Devices(), len(s.DeviceSegments(0)), len(s.DeviceSegments(1)))
	}
	noFrames := edit(edit(edit(baseSnapshot(), "device_traces.0.0.frames", []any{}, false), "device_traces.0.1.frames", nil, true),
		"segments.0.blocks.0.frames", []any{}, false)
	if s, err := Read(bytes.NewReader(pk(noFrames))); err != nil || s.HasFrames() {
		t.Errorf("without frames: HasFrames true or %v", err)
	}
}

// TestReadErrors: a missing key or a wrong type names the key and the entry.
func TestReadErrors(t *testing.T) {
	big64 := new(big.Int).Lsh(big.NewInt(1), 64)
	for _, c := range []struct {
		path string
		v    any
		del  bool
		want string
	}{
		{"device_traces.0.1.size", "big", false, "snapshot: device_traces[0][1].size: want int, got str"},
		{"device_traces.0.1.addr", nil, true, `snapshot: device_traces[0][1]: missing key "addr"`},
		{"device_traces.0.1.action", nil, true, `snapshot: device_traces[0][1]: missing key "action"`},
		{"device_traces.0.1.action", "explode", false, `snapshot: device_traces[0][1].action: unknown action "explode"`},
		{"device_traces.0.1.stream", -1, false, "snapshot: device_traces[0][1].stream: want a non-negative int, got -1"},
		{"device_traces.0.1.addr", big64, false, "snapshot: device_traces[0][1].addr: 18446744073709551616 does not fit in 64 bits"},
		{"device_traces.0.1.size", new(big.Int).Lsh(big.NewInt(1), 63), false, "snapshot: device_traces[0][1].size: 9223372036854775808 does not fit in int64"},
		{"device_traces.0.2.device_free", nil, true, `snapshot: device_traces[0][2]: missing key "device_free"`},
		{"device_traces.0.1.frames", "f", false, "snapshot: device_traces[0][1].frames: want list, got str"},
		{"device_traces.0.1.frames", []any{frame("a", 1), kvs{{"name", "x"}, {"filename", "y"}, {"line", "z"}}}, false, "snapshot: device_traces[0][1].frames[1].line: want int, got str"},
		{"device_traces.0.1.frames", []any{kvs{{"name", "x"}, {"line", 1}}}, false, `snapshot: device_traces[0][1].frames[0]: missing key "filename"`},
		{"device_traces.0.1.frames", []any{7}, false, "snapshot: device_traces[0][1].frames[0]: want dict, got int"},
		{"device_traces.0.1.user_metadata", 3, false, "snapshot: device_traces[0][1].user_metadata: want str, got int"},
		{"device_traces.0.1", []any{}, false, "snapshot: device_traces[0][1]: want dict, got list"},
		{"device_traces.0", 5, false, "snapshot: device_traces[0]: want list, got int"},
		{"device_traces", nil, true, `snapshot: snapshot: missing key "device_traces"`},
		{"segments", kvs{}, false, "snapshot: snapshot.segments: want list, got dict"},
		{"segments", nil, true, `snapshot: snapshot: missing key "segments"`},
		{"segments.0.total_size", nil, true, `snapshot: segments[0]: missing key "total_size"`},
		{"segments.0.address", -5, false, "snapshot: segments[0].address: want a non-negative int, got -5"},
		{"segments.0.segment_type", "medium", false, `snapshot: segments[0].segment_type: "medium" is neither "large" nor "small"`},
		{"segments.0.is_expandable", 1, false, "snapshot: segments[0].is_expandable: want bool, got int"},
		{"segments.0.segment_pool_id", tup{0}, false, "snapshot: segments[0].segment_pool_id: want a tuple of 2 ints, got 1 items"},
		{"segments.0.device", -1, false, "snapshot: segments[0].device: -1 is not a device index (PyTorch's are 0–127)"},
		{"segments.0.blocks.1.state", "zombie", false, `snapshot: segments[0].blocks[1].state: unknown block state "zombie"`},
		{"segments.0.blocks.1.size", nil, true, `snapshot: segments[0].blocks[1]: missing key "size"`},
		{"segments.0.blocks.1.size", -3, false, "snapshot: segments[0].blocks[1].size: -3 is negative"},
		{"segments.0.blocks.0", "x", false, "snapshot: segments[0].blocks[0]: want dict, got str"},
		{"segments.0.blocks.0.frames.0.name", 1.5, false, "snapshot: segments[0].blocks[0].frames[0].name: want str, got float"},
		{"allocator_settings.max_split_size", "128", false, "snapshot: allocator_settings.max_split_size: want int, got str"},
		{"allocator_settings.garbage_collection_threshold", math.NaN(), false, "snapshot: allocator_settings.garbage_collection_threshold: NaN is not a threshold"},
		{"allocator_settings.roundup_power2_divisions", kvs{{"3", 4}}, false, "snapshot: allocator_settings.roundup_power2_divisions: key 3 is not a power of two up to 32768"},
		{"allocator_settings.roundup_power2_divisions", kvs{{"x", 4}}, false, `snapshot: allocator_settings.roundup_power2_divisions: key "x" is not a number`},
		{"allocator_settings.expandable_segments", "True", false, "snapshot: allocator_settings.expandable_segments: want bool, got str"},
		{"allocator_settings", []any{}, false, "snapshot: allocator_settings: want dict, got list"},
		{"external_annotations.0.time_us", "now", false, "snapshot: external_annotations[0].time_us: want int, got str"},
	} {
		_, err := Read(bytes.NewReader(pk(edit(baseSnapshot(), c.path, c.v, c.del))))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got error\n  %v\nwant\n  %s", c.path, err, c.want)
		}
	}
}

// TestReadUnknownKeys: keys PyTorch may add later are ignored, at every level.
func TestReadUnknownKeys(t *testing.T) {
	x := kvs{{"nested", []any{tup{1, 2.5}, nil}}}
	s := baseSnapshot()
	for _, p := range []string{"device_traces.0.1", "segments.0", "segments.0.blocks.0", "allocator_settings", ""} {
		if p == "" {
			s = append(s, kv{"future", x})
			continue
		}
		// append a key to the dict at p
		node := any(s)
		for _, part := range strings.Split(p, ".") {
			switch n := node.(type) {
			case kvs:
				for _, e := range n {
					if e.k == part {
						node = e.v
					}
				}
			case []any:
				i, _ := strconv.Atoi(part)
				node = n[i]
			}
		}
		s = edit(s, p, append(node.(kvs), kv{"future", x}), false).(kvs)
	}
	if _, err := Read(bytes.NewReader(pk(s))); err != nil {
		t.Fatal(err)
	}
}

// TestReadLegacy: PyTorch 2.0/2.1 snapshots lack blocks' address and
// requested_size (2.0 keeps the request and frames in "history"), segments'
// requested_size, frames and is_expandable, entries' time_us, and the settings.
func TestReadLegacy(t *testing.T) {
	fr := []any{frame("fwd", 7)}
	legacy := kvs{
		{"segments", []any{kvs{
			{"device", 1}, {"address", 4096}, {"total_size", 3072}, {"allocated_size", 1024},
			{"active_size", 1024}, {"stream", 0}, {"segment_type", "large"},
			{"blocks", []any{
				kvs{{"size", 1024}, {"state", "active_allocated"}, {"history", []any{kvs{{"addr", 4096}, {"real_size", 1000}, {"frames", fr}}}}},
				kvs{{"size", 2048}, {"state", "inactive"}},
			}},
		}}},
		{"device_traces", []any{[]any{}, []any{kvs{{"action", "alloc"}, {"addr", 4096}, {"size", 1000}, {"stream", 0}}}}},
	}
	s, err := Read(bytes.NewReader(pk(legacy)))
	if err != nil {
		t.Fatal(err)
	}
	seg := s.Segments[0]
	b0, b1 := seg.Blocks[0], seg.Blocks[1]
	if seg.Device != 1 || seg.RequestedSize != 1000 || b0.Address != 4096 || b0.RequestedSize != 1000 ||
		len(b0.Frames) != 1 || b0.Frames[0].Name != "fwd" || b1.Address != 5120 || b1.RequestedSize != 2048 {
		t.Errorf("legacy segment %+v", seg)
	}
	if s.HasSettings || s.Devices() != 2 || len(s.Traces[1]) != 1 || s.Traces[1][0].TimeUS != 0 {
		t.Errorf("legacy snapshot %+v", s)
	}
}

// TestSharedEntryRefused: a segment or trace entry referenced twice through the
// memo (which would let a few bytes stand for millions of entries) is an error.
func TestSharedEntryRefused(t *testing.T) {
	var segBytes, entryBytes bytes.Buffer
	pkTo(&segBytes, baseSnapshot()[0].v.([]any)[0])
	pkTo(&entryBytes, baseSnapshot()[1].v.([]any)[0].([]any)[1])
	key := func(s string) string {
		var b bytes.Buffer
		pkTo(&b, s)
		return b.String()
	}
	for _, c := range []struct{ name, data, want string }{
		{"segment", "\x80\x04}(" + key("segments") + "](" + segBytes.String() + "\x94h\x00e" + key("device_traces") + "]u.",
			"snapshot: segments[1]: the same dict as an earlier entry"},
		{"entry", "\x80\x04}(" + key("segments") + "]" + key("device_traces") + "](](" + entryBytes.String() + "\x94h\x00eeu.",
			"snapshot: device_traces[0][1]: the same dict as an earlier entry"},
		{"trace", "\x80\x04}(" + key("segments") + "]" + key("device_traces") + "](](" + entryBytes.String() + "e\x94h\x00eu.",
			"snapshot: device_traces[1][0]: the same dict as an earlier entry"},
	} {
		_, err := Read(strings.NewReader(c.data))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

// TestReadSegmentsOnly: a pickled torch.cuda.memory_snapshot() (a list of
// segments, which memory_viz also reads) is a snapshot without history.
func TestReadSegmentsOnly(t *testing.T) {
	segs := edit(baseSnapshot(), "segments.0.device", 1, false).(kvs)[0].v
	s, err := Read(bytes.NewReader(pk(segs)))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Segments) != 1 || len(s.Traces) != 2 || s.HasHistory() || s.HasSettings || s.Segments[0].Device != 1 {
		t.Errorf("%+v", s)
	}
}

// TestSharedFrames: a frames list shared by several entries (a memo reference, as
// when PyTorch records one stack for an event and its block) is the same frames.
func TestSharedFrames(t *testing.T) {
	p := func(v any) string {
		var b bytes.Buffer
		pkTo(&b, v)
		return b.String()
	}
	entry := func(addr int, frames string) string {
		return "}(" + p("action") + p("alloc") + p("addr") + p(addr) + p("size") + p(512) + p("frames") + frames + "u"
	}
	frames := p([]any{frame("fwd", 1), frame("main", 2)}) + "\x94" // memo 0
	data := "\x80\x04}(" + p("segments") + "]" + p("device_traces") + "](](" +
		entry(1, frames) + entry(2, "h\x00") + entry(3, "h\x00") + "eeu."
	s, err := Read(strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := s.Traces[0]
	want := []Frame{{Filename: "train.py", Line: 1, Name: "fwd"}, {Filename: "train.py", Line: 2, Name: "main"}}
	for i := range tr {
		if !reflect.DeepEqual(tr[i].Frames, want) {
			t.Errorf("entry %d frames %v, want %v", i, tr[i].Frames, want)
		}
	}
}

// TestEntryAtAgrees checks that entryAt (seal's conversion of a trace entry, field
// by field) accepts exactly the entries entryKV (key by key) accepts, and makes the
// same TraceEntry of them: random entries whose fields are each absent, of the
// right type, or of a wrong one, their keys in random orders.
func TestEntryAtAgrees(t *testing.T) {
	tr := &tree{}
	str := func(s string) value {
		tr.strs = append(tr.strs, s)
		return value{n: uint32(len(tr.strs) - 1), k: kStr}
	}
	wide := func(k kind, bits uint64) value {
		tr.wide = append(tr.wide, bits)
		return value{n: uint32(len(tr.wide) - 1), k: k, wide: true}
	}
	small := func(x int32) value { return value{n: uint32(x), k: kInt} }
	list := func(k kind, items ...value) value {
		return value{n: tr.lists.add(listObj{items: items}), k: k}
	}
	tr.bigs = append(tr.bigs, new(big.Int).Lsh(big.NewInt(1), 70))
	ints := []value{small(0), small(7), small(-3), wide(kInt, 1<<40), wide(kInt, 1<<63|5), wide(kUint, 1<<63|5),
		value{k: kBig}, value{k: kNone}, wide(kFloat, 0), value{n: 1, k: kBool}}
	strs := []value{str(""), str("N/A"), str("x"), small(1), value{k: kNone}}
	frame := value{n: tr.dicts.add(dictObj{kv: []value{str("name"), str("f"), str("filename"), str("a.py"), str("line"), small(3)}}), k: kDict}
	options := map[string][]value{
		"action":          {str("alloc"), str("free_requested"), str("oom"), str("segment_map"), str("bogus"), small(1)},
		"addr":            ints,
		"size":            ints,
		"stream":          ints,
		"time_us":         ints,
		"device_free":     ints,
		"compile_context": strs,
		"user_metadata":   strs,
		"pool_id":         {list(kTuple, small(0), small(0)), list(kTuple, small(1), wide(kUint, 1<<63)), list(kTuple, small(1)), list(kList, small(-1), small(2)), small(0)},
		"frames":          {list(kList), list(kList, frame), list(kList, frame, frame), list(kTuple, frame), list(kList, small(1)), small(0)},
		"other":           {small(1)},
	}
	keys := map[string]value{}
	var names []string
	for name := range options {
		keys[name] = str(name)
		names = append(names, name)
	}
	slices.Sort(names)
	rng := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	for range 20000 {
		var kv []value
		for _, name := range names {
			opts := options[name]
			// mostly the first option (of the right type), sometimes none
			i := rng.IntN(len(opts) + 1)
			if rng.IntN(3) > 0 {
				i = 0
			}
			if i < len(opts) {
				kv = append(kv, keys[name], opts[i])
			}
		}
		for i := len(kv)/2 - 1; i > 0; i-- {
			j := rng.IntN(i + 1)
			kv[2*i], kv[2*j] = kv[2*j], kv[2*i]
			kv[2*i+1], kv[2*j+1] = kv[2*j+1], kv[2*i+1]
		}
		c1, c2 := &converter{tree: tr}, &converter{tree: tr}
		var e1, e2 TraceEntry
		err := c1.entryKV(&e1, at{format: "entry"}, kv)
		var pos fieldPos
		c2.fieldPositions(&pos, kv)
		ok := c2.entryAt(&e2, kv, &pos)
		if ok != (err == nil) {
			t.Fatalf("%s: entryAt %v, entryKV %v", tr.repr(list(kList, kv...)), ok, err)
		}
		if !ok {
			continue
		}
		accepted++
		if !reflect.DeepEqual(e1, e2) {
			t.Fatalf("%s: entryAt %+v, entryKV %+v", tr.repr(list(kList, kv...)), e2, e1)
		}
	}
	t.Logf("%d of the random entries convert", accepted)
	if accepted < 1000 {
		t.Errorf("only %d of the random entries convert", accepted)
	}
}
