package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"memlab.dev/memlab/allocator"
)

// Difference is the first place a replay disagrees with the ground truth.
type Difference struct {
	Op    int    // index of the op (-1 for the final summary)
	Field string // e.g. "stats.reserved_bytes.all.current", "segments[2].blocks[0]"
	Want  string // PyTorch's value
	Got   string // memlab's value
}

// String describes the difference on one line (the summary case on several).
func (d *Difference) String() string {
	if d.Op < 0 && strings.HasPrefix(d.Field, "allocator_settings") {
		return fmt.Sprintf("%s: PyTorch parsed the conf as %s, memlab as %s", d.Field, d.Want, d.Got)
	}
	if d.Op < 0 {
		return fmt.Sprintf("final summary differs: %s\n--- want (PyTorch)\n%s\n--- got (memlab)\n%s", d.Field, d.Want, d.Got)
	}
	return fmt.Sprintf("op %d: %s: want %s, got %s", d.Op, d.Field, d.Want, d.Got)
}

// CheckResult is the outcome of Check.
type CheckResult struct {
	Ops     int         // ops in the trace
	Matched int         // ops whose state matched, before the first difference
	Diff    *Difference // nil when everything matched
	// SummaryChecked is true when an expected summary was available and compared.
	SummaryChecked   bool
	GuessedAddresses int
}

// OK reports whether every op and the summary matched.
func (r *CheckResult) OK() bool { return r.Diff == nil }

// Check replays a ground-truth trace and compares every op's state with PyTorch's:
// memory_allocated, memory_reserved, the max_ values, every recorded stats key,
// seg_sizes, each segment's pool, expandable flag and blocks (size, state, and the
// requested size of allocated blocks), oom and msg; then the final MemorySummary with
// the recorded summary, byte for byte. It stops at the first difference.
func Check(t *Trace, opts Options) (*CheckResult, error) {
	if t == nil || !t.GroundTruth() || len(t.States) != len(t.Ops) {
		return nil, errors.New("replay: check needs a ground-truth file with one state line per op")
	}
	res := &CheckResult{Ops: len(t.Ops)}
	if opts.Conf == nil {
		d, err := compareSettings(t.Header)
		if err != nil {
			return nil, err
		}
		if d != nil {
			res.Diff = d
			return res, nil
		}
	}
	user := opts.States
	opts.States = func(got State) {
		if user != nil {
			user(got)
		}
		if res.Diff != nil {
			return
		}
		if d := compareState(&t.States[got.I], &got); d != nil {
			res.Diff = d
			return
		}
		res.Matched++
	}
	run, err := Run(t, opts)
	if err != nil {
		return nil, err
	}
	res.GuessedAddresses = run.GuessedAddresses
	if res.Diff == nil && t.Summary != "" {
		res.SummaryChecked = true
		if run.Summary != t.Summary {
			res.Diff = &Difference{Op: -1, Field: firstLineDiff(t.Summary, run.Summary), Want: t.Summary, Got: run.Summary}
		}
	}
	return res, nil
}

// compareSettings checks memlab's reading of the header's conf against the
// allocator_settings PyTorch reported for it.
func compareSettings(h *Header) (*Difference, error) {
	if len(h.AllocatorSettings) == 0 {
		return nil, nil
	}
	var ps struct {
		MaxSplitSize *int64          `json:"max_split_size"`
		GC           *float64        `json:"garbage_collection_threshold"`
		Expandable   *bool           `json:"expandable_segments"`
		Roundup      map[string]int  `json:"roundup_power2_divisions"`
		Conf         json.RawMessage `json:"PYTORCH_CUDA_ALLOC_CONF"`
	}
	if err := json.Unmarshal(h.AllocatorSettings, &ps); err != nil {
		return nil, nil // a version that reports settings differently: nothing to compare
	}
	cfg, err := allocator.ParseConfig(h.Conf)
	if err != nil {
		return nil, fmt.Errorf("replay: header conf: %w", err)
	}
	diff := func(field string, w, g any) *Difference {
		return &Difference{Op: -1, Field: "allocator_settings." + field, Want: fmt.Sprint(w), Got: fmt.Sprint(g)}
	}
	ms := int64(-1)
	if cfg.MaxSplitSize > 0 {
		ms = cfg.MaxSplitSize
	}
	if ps.MaxSplitSize != nil && *ps.MaxSplitSize != ms {
		return diff("max_split_size", *ps.MaxSplitSize, ms), nil
	}
	if ps.GC != nil && *ps.GC != cfg.GarbageCollectionThreshold {
		return diff("garbage_collection_threshold", *ps.GC, cfg.GarbageCollectionThreshold), nil
	}
	if ps.Expandable != nil && *ps.Expandable != cfg.ExpandableSegments {
		return diff("expandable_segments", *ps.Expandable, cfg.ExpandableSegments), nil
	}
	if ps.Roundup != nil {
		var want [allocator.RoundupIntervals]int
		for i := range want {
			want[i] = ps.Roundup[strconv.Itoa(1<<i)]
		}
		if want != cfg.RoundupPower2Divisions {
			return diff("roundup_power2_divisions", want, cfg.RoundupPower2Divisions), nil
		}
	}
	return nil, nil
}

func firstLineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d: want %q, got %q", i+1, a, b)
		}
	}
	return "identical lines (trailing bytes differ)"
}

func i64(p *int64) string {
	if p == nil {
		return "(absent)"
	}
	return fmt.Sprint(*p)
}

func compareState(want, got *State) *Difference {
	diff := func(field string, w, g any) *Difference {
		return &Difference{Op: want.I, Field: field, Want: fmt.Sprint(w), Got: fmt.Sprint(g)}
	}
	for _, f := range []struct {
		name string
		w, g *int64
	}{
		{"memory_allocated", want.MemoryAllocated, got.MemoryAllocated},
		{"memory_reserved", want.MemoryReserved, got.MemoryReserved},
		{"max_memory_allocated", want.MaxMemoryAllocated, got.MaxMemoryAllocated},
		{"max_memory_reserved", want.MaxMemoryReserved, got.MaxMemoryReserved},
	} {
		if f.w != nil && (f.g == nil || *f.w != *f.g) {
			return diff(f.name, i64(f.w), i64(f.g))
		}
	}
	keys := make([]string, 0, len(want.Stats))
	for k := range want.Stats {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		g, ok := got.Stats[k]
		if !ok {
			return diff("stats."+k, want.Stats[k], "(absent)")
		}
		if g != want.Stats[k] {
			return diff("stats."+k, want.Stats[k], g)
		}
	}
	if want.OOM != got.OOM {
		return diff("oom", want.OOM, got.OOM)
	}
	if want.Msg != got.Msg {
		return diff("msg", want.Msg, got.Msg)
	}
	if want.hasSegSizes {
		if fmt.Sprint(want.SegSizes) != fmt.Sprint(got.SegSizes) {
			return diff("seg_sizes", want.SegSizes, got.SegSizes)
		}
	}
	if want.Segments != nil {
		if len(want.Segments) != len(got.Segments) {
			return diff("len(segments)", len(want.Segments), len(got.Segments))
		}
		for i := range want.Segments {
			ws, gs := &want.Segments[i], &got.Segments[i]
			p := fmt.Sprintf("segments[%d]", i)
			if ws.Total != gs.Total {
				return diff(p+".total", ws.Total, gs.Total)
			}
			if ws.Type != gs.Type {
				return diff(p+".type", ws.Type, gs.Type)
			}
			if ws.Exp != gs.Exp {
				return diff(p+".exp", ws.Exp, gs.Exp)
			}
			if len(ws.Blocks) != len(gs.Blocks) {
				return diff(p+".blocks", blocksString(ws.Blocks), blocksString(gs.Blocks))
			}
			for j := range ws.Blocks {
				wb, gb := ws.Blocks[j], gs.Blocks[j]
				if wb.Size != gb.Size || wb.State != gb.State || (wb.State == "A" && wb.Requested != gb.Requested) {
					return diff(fmt.Sprintf("%s.blocks[%d]", p, j), blocksString(ws.Blocks), blocksString(gs.Blocks))
				}
			}
		}
	}
	return nil
}

func blocksString(bs []BlockState) string {
	var b strings.Builder
	b.WriteString("[")
	for i, x := range bs {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%d%s", x.Size, x.State)
		if x.State == "A" {
			fmt.Fprintf(&b, "(%d)", x.Requested)
		}
	}
	b.WriteString("]")
	return b.String()
}
