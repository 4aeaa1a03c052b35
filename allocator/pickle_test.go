package allocator

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// unpickle decodes the subset of pickle protocol 4 that Python writes for plain
// containers (the opcodes of torch.cuda.memory._dump_snapshot files).
func unpickle(data []byte) (any, error) {
	var stack []any
	var marks []int
	memo := map[int]any{}
	pop := func() any { v := stack[len(stack)-1]; stack = stack[:len(stack)-1]; return v }
	popMark := func() []any {
		m := marks[len(marks)-1]
		marks = marks[:len(marks)-1]
		items := append([]any(nil), stack[m:]...)
		stack = stack[:m]
		return items
	}
	i := 0
	need := func(n int) ([]byte, error) {
		if i+n > len(data) {
			return nil, fmt.Errorf("truncated at %d", i)
		}
		b := data[i : i+n]
		i += n
		return b, nil
	}
	for i < len(data) {
		op := data[i]
		i++
		switch op {
		case 0x80: // PROTO
			i++
		case 0x95: // FRAME
			i += 8
		case 0x94: // MEMOIZE
			memo[len(memo)] = stack[len(stack)-1]
		case 'h': // BINGET
			b, err := need(1)
			if err != nil {
				return nil, err
			}
			stack = append(stack, memo[int(b[0])])
		case 'j': // LONG_BINGET
			b, err := need(4)
			if err != nil {
				return nil, err
			}
			stack = append(stack, memo[int(binary.LittleEndian.Uint32(b))])
		case '}':
			stack = append(stack, map[string]any{})
		case ']':
			stack = append(stack, []any{})
		case ')':
			stack = append(stack, []any{})
		case '(':
			marks = append(marks, len(stack))
		case 'u', 's': // SETITEMS, SETITEM
			var items []any
			if op == 'u' {
				items = popMark()
			} else {
				v := pop()
				k := pop()
				items = []any{k, v}
			}
			d := stack[len(stack)-1].(map[string]any)
			for j := 0; j+1 < len(items); j += 2 {
				d[fmt.Sprint(items[j])] = items[j+1]
			}
		case 'e', 'a': // APPENDS, APPEND
			var items []any
			if op == 'e' {
				items = popMark()
			} else {
				items = []any{pop()}
			}
			stack[len(stack)-1] = append(stack[len(stack)-1].([]any), items...)
		case 't':
			stack = append(stack, popMark())
		case 0x85, 0x86, 0x87: // TUPLE1..3
			n := int(op-0x85) + 1
			t := append([]any(nil), stack[len(stack)-n:]...)
			stack = append(stack[:len(stack)-n], t)
		case 0x8c: // SHORT_BINUNICODE
			b, err := need(1)
			if err != nil {
				return nil, err
			}
			s, err := need(int(b[0]))
			if err != nil {
				return nil, err
			}
			stack = append(stack, string(s))
		case 'X':
			b, err := need(4)
			if err != nil {
				return nil, err
			}
			s, err := need(int(binary.LittleEndian.Uint32(b)))
			if err != nil {
				return nil, err
			}
			stack = append(stack, string(s))
		case 'K':
			b, err := need(1)
			if err != nil {
				return nil, err
			}
			stack = append(stack, int64(b[0]))
		case 'M':
			b, err := need(2)
			if err != nil {
				return nil, err
			}
			stack = append(stack, int64(binary.LittleEndian.Uint16(b)))
		case 'J':
			b, err := need(4)
			if err != nil {
				return nil, err
			}
			stack = append(stack, int64(int32(binary.LittleEndian.Uint32(b))))
		case 0x8a: // LONG1
			b, err := need(1)
			if err != nil {
				return nil, err
			}
			raw, err := need(int(b[0]))
			if err != nil {
				return nil, err
			}
			be := make([]byte, len(raw))
			for k := range raw {
				be[len(raw)-1-k] = raw[k]
			}
			n := new(big.Int).SetBytes(be)
			if len(raw) > 0 && raw[len(raw)-1]&0x80 != 0 {
				n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(raw))))
			}
			stack = append(stack, n)
		case 'G':
			b, err := need(8)
			if err != nil {
				return nil, err
			}
			stack = append(stack, math.Float64frombits(binary.BigEndian.Uint64(b)))
		case 0x88:
			stack = append(stack, true)
		case 0x89:
			stack = append(stack, false)
		case 'N':
			stack = append(stack, nil)
		case '.':
			if len(stack) != 1 {
				return nil, fmt.Errorf("stack holds %d values at STOP", len(stack))
			}
			return stack[0], nil
		default:
			return nil, fmt.Errorf("opcode %#x at %d not supported", op, i-1)
		}
	}
	return nil, fmt.Errorf("no STOP")
}

func keysOf(m any) []string {
	d, _ := m.(map[string]any)
	var ks []string
	for k := range d {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func asInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case *big.Int:
		return x.Int64()
	}
	return -1 << 63
}

// TestWritePickle round-trips a snapshot with history through the pickle writer and,
// when the shared reference is present, checks that every key PyTorch writes for the
// dict, segments, blocks and trace entries is there (snapshot_d.pickle).
func TestWritePickle(t *testing.T) {
	a, _ := newTestAllocator(t, "expandable_segments:True", uint64(giB))
	a.RecordHistory(HistoryOptions{Enabled: true, Stacks: true})
	p := mustMalloc(t, a, 5*miB)
	mustMalloc(t, a, 700)
	mustFree(t, a, p)
	if err := a.SetPerProcessMemoryFraction(0.01); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Malloc(900 * miB); err == nil {
		t.Fatal("expected OOM")
	}
	snap := a.Snapshot()
	var buf bytes.Buffer
	if err := snap.WritePickle(&buf); err != nil {
		t.Fatal(err)
	}
	v, err := unpickle(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	top := v.(map[string]any)
	segs := top["segments"].([]any)
	if len(segs) != len(snap.Segments) {
		t.Fatalf("%d segments, want %d", len(segs), len(snap.Segments))
	}
	seg0 := segs[0].(map[string]any)
	if asInt(seg0["address"]) != int64(snap.Segments[0].Address) || seg0["is_expandable"] != true || seg0["segment_type"] != snap.Segments[0].Pool {
		t.Errorf("segment 0: %v", seg0)
	}
	traces := top["device_traces"].([]any)[0].([]any)
	var actions []string
	for _, e := range traces {
		actions = append(actions, e.(map[string]any)["action"].(string))
	}
	want := "segment_map alloc segment_map alloc free_requested free_completed segment_unmap oom"
	if got := strings.Join(actions, " "); got != want {
		t.Errorf("actions %q, want %q", got, want)
	}
	last := traces[len(traces)-1].(map[string]any)
	if _, ok := last["device_free"]; !ok {
		t.Errorf("oom entry lacks device_free: %v", last)
	}
	first := traces[0].(map[string]any)
	if fr := first["frames"].([]any); len(fr) == 0 || !strings.Contains(fr[0].(map[string]any)["name"].(string), "mustMalloc") {
		t.Errorf("frames %v", first["frames"])
	}
	settings := top["allocator_settings"].(map[string]any)
	if settings["expandable_segments"] != true || asInt(settings["max_split_size"]) != -1 {
		t.Errorf("settings %v", settings)
	}

	ref := filepath.Join("..", "..", "shared", "reference", "torch-2.11", "snapshot_d.pickle")
	data, err := os.ReadFile(ref)
	if err != nil {
		t.Skipf("reference pickle not available (%v); structure not compared", err)
	}
	rv, err := unpickle(data)
	if err != nil {
		t.Fatalf("reading PyTorch's pickle: %v", err)
	}
	rtop := rv.(map[string]any)
	rsegs := rtop["segments"].([]any)
	rtraces := rtop["device_traces"].([]any)[0].([]any)
	if len(rsegs) == 0 || len(rtraces) == 0 {
		t.Fatal("reference pickle has no segments or traces")
	}
	missing := func(what string, ref, got any, optional ...string) {
		t.Helper()
		have := map[string]bool{}
		for _, k := range keysOf(got) {
			have[k] = true
		}
		skip := map[string]bool{}
		for _, k := range optional {
			skip[k] = true
		}
		for _, k := range keysOf(ref) {
			if !have[k] && !skip[k] {
				t.Errorf("%s lacks key %q that PyTorch writes (PyTorch: %v, memlab: %v)", what, k, keysOf(ref), keysOf(got))
			}
		}
	}
	missing("snapshot", rtop, top)
	missing("segment", rsegs[0], seg0)
	missing("block", rsegs[0].(map[string]any)["blocks"].([]any)[0], seg0["blocks"].([]any)[0])
	var rAlloc map[string]any
	for _, e := range rtraces {
		if e.(map[string]any)["action"] == "alloc" {
			rAlloc = e.(map[string]any)
			break
		}
	}
	missing("trace entry", rAlloc, traces[1], "compile_context", "user_metadata")
	missing("allocator_settings", rtop["allocator_settings"], settings)
}
