// Package replay drives memlab's caching allocator through allocation traces and
// compares the result, op by op, with ground truth recorded from real PyTorch by
// shared/tools/replay_torch.py.
//
// A trace is either a ground-truth file (JSON lines, optionally gzipped: a header with
// the op list, conf, cap and device size, then one state line per op) or a bare JSON op
// list. Ops are short lists: ["a", nbytes] allocates (ids 0, 1, 2… in order, an OOM
// still takes an id), ["f", id] frees, ["e"] empties the cache, ["r"] resets peak
// stats, ["s"] is a marker, ["frac", x] sets the per-process memory fraction;
// ["as", nbytes, stream] allocates on a side stream and ["rs", id, stream] is
// record_stream. A replay takes every op's GPU work as finished before the next
// op (the recorders synchronize after each), so an allocation first completes
// every free still waiting on another stream, as PyTorch's malloc does when it
// finds their events done.
//
// With a ground-truth file every device allocation gets the address the real GPU gave
// it (the header's new_segs), so ties between equal-size free blocks break as they did
// on the GPU. Bare op lists get addresses from a deterministic simulated device.
//
// A trace's decompressed size is bounded ([DefaultMaxBytes], [ReadMax]) and so are
// its ops ([MaxOps]), and it is read a line at a time: a gzip file that expands
// beyond the bound is an error, not an exhausted memory.
package replay

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"

	"memlab.dev/memlab/internal/gunzip"
)

// Op kinds.
const (
	OpAlloc      = "a"
	OpFree       = "f"
	OpEmptyCache = "e"
	OpResetPeak  = "r"
	OpMarker     = "s"
	OpFraction   = "frac"
	// OpAllocStream allocates on a side stream: ["as", nbytes, stream], stream
	// 1, 2… (0 is the default stream, as for "a"). It takes an allocation id
	// as "a" does.
	OpAllocStream = "as"
	// OpRecordStream is Tensor.record_stream: ["rs", id, stream] marks
	// allocation id as used on that stream, so that its free waits for it.
	OpRecordStream = "rs"
)

// Op is one trace operation.
type Op struct {
	Kind     string
	N        int64   // bytes for "a" and "as", allocation id for "f" and "rs"
	Fraction float64 // for "frac"
	Stream   int64   // for "as" and "rs"
}

// MarshalJSON writes the op in the trace's list form, e.g. ["a",1024].
func (o Op) MarshalJSON() ([]byte, error) {
	switch o.Kind {
	case OpAlloc, OpFree:
		return []byte(`["` + o.Kind + `",` + strconv.FormatInt(o.N, 10) + `]`), nil
	case OpFraction:
		return json.Marshal([]any{o.Kind, o.Fraction})
	case OpAllocStream, OpRecordStream:
		return []byte(`["` + o.Kind + `",` + strconv.FormatInt(o.N, 10) + `,` + strconv.FormatInt(o.Stream, 10) + `]`), nil
	default:
		return []byte(`["` + o.Kind + `"]`), nil
	}
}

// String is the list form, e.g. ["a",1024].
func (o Op) String() string {
	b, _ := o.MarshalJSON()
	return string(b)
}

// UnmarshalJSON reads the list form.
func (o *Op) UnmarshalJSON(b []byte) error {
	var parts []json.RawMessage
	if err := json.Unmarshal(b, &parts); err != nil || len(parts) == 0 {
		return fmt.Errorf("replay: op %s: want a list like [\"a\", 1024]", b)
	}
	var kind string
	if err := json.Unmarshal(parts[0], &kind); err != nil {
		return fmt.Errorf("replay: op %s: first element must be a string", b)
	}
	*o = Op{Kind: kind}
	// A JSON number starts with a digit or '-'; json.Unmarshal would read null as 0.
	isNumber := func(raw json.RawMessage) bool {
		raw = bytes.TrimSpace(raw)
		return len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9')
	}
	switch kind {
	case OpAlloc, OpFree:
		if len(parts) != 2 || !isNumber(parts[1]) {
			return fmt.Errorf("replay: op %s: %q takes one integer", b, kind)
		}
		var f float64
		if err := json.Unmarshal(parts[1], &f); err != nil {
			return fmt.Errorf("replay: op %s: %q takes one integer", b, kind)
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(parts[1])), 10, 64)
		if err != nil {
			if f != float64(int64(f)) {
				return fmt.Errorf("replay: op %s: %q takes one integer", b, kind)
			}
			n = int64(f)
		}
		if n < 0 {
			return fmt.Errorf("replay: op %s: negative value", b)
		}
		o.N = n
	case OpAllocStream, OpRecordStream:
		var v [2]int64
		for k := range v {
			if len(parts) != 3 || !isNumber(parts[k+1]) {
				return fmt.Errorf("replay: op %s: %q takes two integers", b, kind)
			}
			n, err := strconv.ParseInt(string(bytes.TrimSpace(parts[k+1])), 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("replay: op %s: %q takes two non-negative integers", b, kind)
			}
			v[k] = n
		}
		o.N, o.Stream = v[0], v[1]
	case OpFraction:
		if len(parts) != 2 || !isNumber(parts[1]) {
			return fmt.Errorf("replay: op %s: \"frac\" takes a number in [0, 1]", b)
		}
		if err := json.Unmarshal(parts[1], &o.Fraction); err != nil || o.Fraction < 0 || o.Fraction > 1 {
			return fmt.Errorf("replay: op %s: \"frac\" takes a number in [0, 1]", b)
		}
	case OpEmptyCache, OpResetPeak, OpMarker:
		if len(parts) != 1 {
			return fmt.Errorf("replay: op %s: %q takes no argument", b, kind)
		}
	default:
		return fmt.Errorf("replay: op %s: unknown kind %q (want a, as, f, rs, e, r, s or frac)", b, kind)
	}
	return nil
}

// Header is the first line of a ground-truth file.
type Header struct {
	Kind              string          `json:"kind"`
	Trace             string          `json:"trace"`
	Conf              string          `json:"conf"`
	CapGiB            *float64        `json:"cap_gib"`
	AllowedBytes      *int64          `json:"allowed_bytes"`
	Torch             string          `json:"torch"`
	DeviceIndex       int             `json:"device"`
	DeviceName        string          `json:"device_name"`
	TotalMemory       int64           `json:"total_memory"`
	MemGetInfo        []int64         `json:"mem_get_info"`
	AllocatorSettings json.RawMessage `json:"allocator_settings,omitempty"`
	Ops               []Op            `json:"ops"`
}

// SegState is one segment of a state line: address, size, pool ("L" or "S"),
// expandable flag and blocks as [size, state, requested_size] with state "A", "P", "I".
type SegState struct {
	Addr   uint64       `json:"addr"`
	Total  int64        `json:"total"`
	Type   string       `json:"type"`
	Exp    bool         `json:"exp"`
	Blocks []BlockState `json:"blocks"`
}

// BlockState is [size, state, requested_size].
type BlockState struct {
	Size      int64
	State     string
	Requested int64
}

// MarshalJSON writes the list form.
func (b BlockState) MarshalJSON() ([]byte, error) {
	return []byte("[" + strconv.FormatInt(b.Size, 10) + `,"` + b.State + `",` + strconv.FormatInt(b.Requested, 10) + "]"), nil
}

// UnmarshalJSON reads the list form.
func (b *BlockState) UnmarshalJSON(data []byte) error {
	var raw [3]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("replay: block %s: want [size, state, requested]", data)
	}
	if err := json.Unmarshal(raw[0], &b.Size); err != nil {
		return fmt.Errorf("replay: block %s: bad size", data)
	}
	if err := json.Unmarshal(raw[1], &b.State); err != nil {
		return fmt.Errorf("replay: block %s: bad state", data)
	}
	if err := json.Unmarshal(raw[2], &b.Requested); err != nil {
		return fmt.Errorf("replay: block %s: bad requested size", data)
	}
	return nil
}

// State is one op line: the allocator state right after op I.
type State struct {
	Kind               string           `json:"kind"`
	I                  int              `json:"i"`
	Op                 Op               `json:"op"`
	ID                 *int             `json:"id,omitempty"`
	Ptr                *uint64          `json:"ptr,omitempty"`
	MemoryAllocated    *int64           `json:"memory_allocated,omitempty"`
	MemoryReserved     *int64           `json:"memory_reserved,omitempty"`
	MaxMemoryAllocated *int64           `json:"max_memory_allocated,omitempty"`
	MaxMemoryReserved  *int64           `json:"max_memory_reserved,omitempty"`
	Stats              map[string]int64 `json:"stats,omitempty"`
	SegSizes           []int64          `json:"seg_sizes"`
	Segments           []SegState       `json:"segments,omitempty"`
	NewSegs            [][2]uint64      `json:"new_segs,omitempty"`
	GoneSegs           [][2]uint64      `json:"gone_segs,omitempty"`
	OOM                bool             `json:"oom,omitempty"`
	Msg                string           `json:"msg,omitempty"`
	Noop               bool             `json:"noop,omitempty"`

	hasSegSizes bool
}

// Trace is a parsed trace: ops, and for ground truth the header and expected states.
type Trace struct {
	Name     string
	Header   *Header // nil for a bare op list
	Ops      []Op
	Baseline *State
	States   []State // one per op, for ground truth
	// NewSegs holds, per op, the device allocations the GPU made during it (address,
	// size): the address oracle. It survives dropping States to save memory.
	// A nil entry means the line did not record them (replay_torch.py --snapshot-every).
	NewSegs [][][2]uint64
	// Ptrs holds, per op, the address PyTorch returned for an allocation (0 if none):
	// a new segment's address, when the allocation made one.
	Ptrs    []uint64
	Summary string // expected final MemorySummary, when known ("" otherwise)
}

// GroundTruth reports whether the trace carries PyTorch's recorded states.
func (t *Trace) GroundTruth() bool { return t.Header != nil }

// DefaultMaxBytes bounds a trace's size once decompressed (256 MiB; PyTorch's
// ground-truth files shipped with memlab are below 30 MB), so that a small gzip
// file that expands to gigabytes (a gzip bomb) is an error, not an exhausted memory:
// what a trace decodes to takes a few times its text, and a trace at the bound
// stays well under 4 GiB of address space.
const DefaultMaxBytes = 256 << 20

// ReadFile reads a ground-truth file (.jsonl or .jsonl.gz) or a bare JSON op list,
// of at most DefaultMaxBytes once decompressed (see ReadFileMax).
// For X.jsonl.gz it also reads X.summary.txt beside it, if present.
func ReadFile(path string) (*Trace, error) { return ReadFileMax(path, DefaultMaxBytes) }

// ReadFileMax is ReadFile with a bound on the trace's decompressed size (≤ 0:
// DefaultMaxBytes).
func ReadFileMax(path string, maxBytes int64) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	t, err := ReadMax(f, maxBytes)
	if err != nil {
		return nil, fmt.Errorf("replay: %s: %w", path, err)
	}
	t.Name = path
	if t.GroundTruth() {
		base := path
		for _, ext := range []string{".gz", ".jsonl", ".json"} {
			if len(base) > len(ext) && base[len(base)-len(ext):] == ext {
				base = base[:len(base)-len(ext)]
			}
		}
		if s, err := os.ReadFile(base + ".summary.txt"); err == nil {
			t.Summary = string(s)
		}
	}
	return t, nil
}

// Read parses a trace from r, gzipped or not, of at most DefaultMaxBytes once
// decompressed.
func Read(r io.Reader) (*Trace, error) { return ReadMax(r, DefaultMaxBytes) }

// ReadMax is Read with a bound on the trace's decompressed size (≤ 0:
// DefaultMaxBytes): a larger trace is an error that names the bound. Gzip is
// known by its magic bytes and read as internal/gunzip reads it: one member,
// nothing after it. The trace is read a line at a time, never whole, and a trace
// of more than [MaxOps] ops (its header's list, its op lines, a bare list) is an
// error before they are decoded, so that what a trace costs in memory is bounded
// by a few times its bound, whatever it holds (a gzip bomb of tiny ops or of empty
// lines included).
func ReadMax(r io.Reader, maxBytes int64) (*Trace, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	br := bufio.NewReaderSize(r, 1<<16)
	var in io.Reader = br
	zr, gz, err := gunzip.NewReader(br)
	if err != nil {
		return nil, err
	}
	if gz {
		in = zr
	}
	lim := &io.LimitedReader{R: in, N: maxBytes + 1}
	lr := bufio.NewReaderSize(lim, 1<<16)
	tooLarge := func() error {
		return &gunzip.TooLargeError{What: "the trace", Limit: maxBytes, Why: "the limit on a trace's size"}
	}
	tooMany := func(where string) error {
		return fmt.Errorf("%s: more than %d ops (replay.MaxOps, 1000 times PyTorch's largest shipped trace; a gzip bomb?)", where, MaxOps)
	}
	// the first byte that is not space says which form the trace has
	for {
		b, err := lr.ReadByte()
		if err == io.EOF {
			if lim.N <= 0 {
				return nil, tooLarge()
			}
			return nil, errors.New("empty trace")
		}
		if err != nil {
			return nil, err
		}
		if b == ' ' || b == '\t' || b == '\n' || b == '\r' {
			continue
		}
		lr.UnreadByte()
		break
	}
	if first, _ := lr.Peek(1); len(first) == 1 && first[0] == '[' {
		data, err := io.ReadAll(lr)
		if err != nil {
			return nil, err
		}
		if lim.N <= 0 {
			return nil, tooLarge()
		}
		if bytes.Count(data, []byte("[")) > MaxOps+1 {
			return nil, tooMany("bare op list")
		}
		var ops []Op
		if err := json.Unmarshal(data, &ops); err != nil {
			return nil, fmt.Errorf("bare op list: %w", err)
		}
		return &Trace{Ops: ops}, nil
	}
	t := &Trace{}
	var line []byte
	for n := 0; ; n++ {
		line = line[:0]
		var rerr error
		for {
			chunk, err := lr.ReadSlice('\n')
			line = append(line, chunk...)
			if err == bufio.ErrBufferFull {
				continue
			}
			rerr = err
			break
		}
		if rerr != nil && rerr != io.EOF {
			return nil, rerr
		}
		if lim.N <= 0 {
			return nil, tooLarge()
		}
		if l := bytes.TrimSpace(line); len(l) > 0 {
			if err := t.parseLine(n, l, tooMany); err != nil {
				return nil, err
			}
		}
		if rerr == io.EOF {
			break
		}
	}
	if t.Header == nil {
		return nil, errors.New("no header line")
	}
	if len(t.States) != 0 && len(t.States) != len(t.Ops) {
		return nil, fmt.Errorf("%d op lines for %d ops", len(t.States), len(t.Ops))
	}
	for i := range t.States {
		if t.States[i].I != i {
			return nil, fmt.Errorf("op line %d has i=%d", i, t.States[i].I)
		}
		if err := t.States[i].check(t.Ops[i]); err != nil {
			return nil, fmt.Errorf("op line %d: %w", i, err)
		}
		t.NewSegs = append(t.NewSegs, t.States[i].NewSegs)
		var p uint64
		if t.States[i].Ptr != nil {
			p = *t.States[i].Ptr
		}
		t.Ptrs = append(t.Ptrs, p)
	}
	return t, nil
}

// check refuses a header whose device figures cannot be right.
func (h *Header) check() error {
	if h.TotalMemory <= 0 {
		return fmt.Errorf("total_memory %d: the device size must be positive", h.TotalMemory)
	}
	if len(h.MemGetInfo) != 0 {
		if len(h.MemGetInfo) != 2 || h.MemGetInfo[0] < 0 || h.MemGetInfo[0] > h.MemGetInfo[1] || h.MemGetInfo[1] != h.TotalMemory {
			return fmt.Errorf("mem_get_info %v: want [free, total] with 0 <= free <= total = total_memory %d", h.MemGetInfo, h.TotalMemory)
		}
	}
	if h.CapGiB != nil && !(*h.CapGiB > 0) {
		return fmt.Errorf("cap_gib %v: a cap must be positive (leave it out for none)", *h.CapGiB)
	}
	return nil
}

// check refuses an op line whose recorded addresses cannot be right: a pointer of
// 0 for an allocation of some bytes, new segments at address 0, empty or
// overlapping, overlapping segments.
func (s *State) check(op Op) error {
	if s.Ptr != nil && *s.Ptr == 0 && (op.Kind == OpAlloc || op.Kind == OpAllocStream) && op.N > 0 && !s.OOM {
		return fmt.Errorf("ptr 0 for a %d-byte allocation", op.N)
	}
	for _, seg := range s.NewSegs {
		switch {
		case seg[0] == 0:
			return fmt.Errorf("new segment at address 0")
		case seg[1] == 0:
			return fmt.Errorf("new segment of 0 bytes at %#x", seg[0])
		case seg[0]+seg[1] < seg[0]:
			return fmt.Errorf("new segment %#x+%d runs past the address space", seg[0], seg[1])
		}
	}
	if a, b, ok := overlap(s.NewSegs); ok {
		return fmt.Errorf("new segments %#x+%d and %#x+%d overlap", a[0], a[1], b[0], b[1])
	}
	segs := make([][2]uint64, 0, len(s.Segments))
	for _, seg := range s.Segments {
		if seg.Total < 0 {
			return fmt.Errorf("segment at %#x has negative size %d", seg.Addr, seg.Total)
		}
		segs = append(segs, [2]uint64{seg.Addr, uint64(seg.Total)})
	}
	if a, b, ok := overlap(segs); ok {
		return fmt.Errorf("segments %#x+%d and %#x+%d overlap", a[0], a[1], b[0], b[1])
	}
	return nil
}

// overlap returns two of the ranges (address, size) that overlap, if any.
func overlap(ranges [][2]uint64) (a, b [2]uint64, ok bool) {
	sorted := slices.Clone(ranges)
	slices.SortFunc(sorted, func(x, y [2]uint64) int { return cmp.Compare(x[0], y[0]) })
	for i := 1; i < len(sorted); i++ {
		if prev := sorted[i-1]; prev[0]+prev[1] > sorted[i][0] {
			return prev, sorted[i], true
		}
	}
	return a, b, false
}

// MaxOps bounds the ops of a trace ([ReadMax]): 1000 times the 4000 of PyTorch's
// largest shipped ground-truth trace.
const MaxOps = 4_000_000

// parseLine decodes line n (0-based, not empty) of a JSON-lines trace into t;
// tooMany is the error of a trace of more than MaxOps ops.
func (t *Trace) parseLine(n int, line []byte, tooMany func(string) error) error {
	var kind struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(line, &kind); err != nil {
		return fmt.Errorf("line %d: %w", n+1, err)
	}
	switch kind.Kind {
	case "header":
		if t.Header != nil {
			return fmt.Errorf("line %d: a second header", n+1)
		}
		// every op is a list: count them before decoding any
		if bytes.Count(line, []byte("[")) > MaxOps+2 {
			return tooMany(fmt.Sprintf("line %d (header)", n+1))
		}
		var h Header
		if err := json.Unmarshal(line, &h); err != nil {
			return fmt.Errorf("line %d (header): %w", n+1, err)
		}
		if err := h.check(); err != nil {
			return fmt.Errorf("line %d (header): %w", n+1, err)
		}
		t.Header = &h
		t.Ops = h.Ops
	case "baseline", "op":
		if kind.Kind == "op" && len(t.States) >= MaxOps {
			return tooMany(fmt.Sprintf("line %d", n+1))
		}
		var s State
		if err := json.Unmarshal(line, &s); err != nil {
			return fmt.Errorf("line %d: %w", n+1, err)
		}
		s.hasSegSizes = bytes.Contains(line, []byte(`"seg_sizes"`))
		if kind.Kind == "baseline" {
			if t.Baseline != nil {
				return fmt.Errorf("line %d: a second baseline", n+1)
			}
			t.Baseline = &s
		} else {
			t.States = append(t.States, s)
		}
	case "footer":
	default:
		return fmt.Errorf("line %d: unknown kind %q", n+1, kind.Kind)
	}
	return nil
}
