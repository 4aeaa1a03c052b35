//go:build solution

package groundtruth

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	round "memlab.dev/memlab/exercises/04-round-size"
	segment "memlab.dev/memlab/exercises/05-segment-size"
	bestfit "memlab.dev/memlab/exercises/06-best-fit"
	split "memlab.dev/memlab/exercises/07-split"
	merge "memlab.dev/memlab/exercises/08-merge"
	stats "memlab.dev/memlab/exercises/09-stats"
	fragmentation "memlab.dev/memlab/exercises/10-fragmentation"
)

// record is one line of a ground-truth file (shared/tools/replay_torch.py).
type record struct {
	Kind              string          `json:"kind"`
	RawOp             json.RawMessage `json:"op"`
	opName            string
	opArg             uint64
	ID                int    `json:"id"`
	Ptr               uint64 `json:"ptr"`
	MemoryAllocated   uint64 `json:"memory_allocated"`
	MemoryReserved    uint64 `json:"memory_reserved"`
	Stats             map[string]int64
	Segments          []seg      `json:"segments"`
	NewSegs           [][]uint64 `json:"new_segs"`
	GoneSegs          [][]uint64 `json:"gone_segs"`
	AllocatorSettings struct {
		MaxSplitSize       int64             `json:"max_split_size"`
		ExpandableSegments bool              `json:"expandable_segments"`
		Divisions          map[string]uint64 `json:"roundup_power2_divisions"`
	} `json:"allocator_settings"`
}

// seg is one segment of a snapshot: blocks are [size, "A"|"I", requested].
type seg struct {
	Addr    uint64  `json:"addr"`
	Type    string  `json:"type"`
	Blocks  [][]any `json:"blocks"`
	decoded []block
}

// block is a decoded block with its address.
type block struct {
	addr, size, requested uint64
	allocated             bool
}

// decode fills s.decoded from s.Blocks (sizes are below 2^53, exact as float64).
func (s *seg) decode() error {
	addr := s.Addr
	for _, b := range s.Blocks {
		size, ok1 := b[0].(float64)
		state, ok2 := b[1].(string)
		if !ok1 || !ok2 || len(b) < 3 {
			return fmt.Errorf("bad block %v", b)
		}
		req, _ := b[2].(float64)
		s.decoded = append(s.decoded, block{addr: addr, size: uint64(size), requested: uint64(req), allocated: state == "A"})
		addr += uint64(size)
	}
	s.Blocks = nil
	return nil
}

// referenceDir returns the PyTorch 2.11 ground truth that ships in the
// repository, reference/torch-2.11: $MEMLAB_ROOT's when that is set, else the
// one three folders up (this module lives at exercises/ in the repository;
// being a module of its own, it cannot use package reference). Its absence
// fails the test.
func referenceDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("MEMLAB_ROOT")
	if root == "" {
		root = filepath.Join("..", "..", "..")
	}
	ref := filepath.Join(root, "reference", "torch-2.11")
	if _, err := os.Stat(ref); err != nil {
		t.Fatalf("PyTorch ground truth missing (it ships in the repository's reference/): %v", err)
	}
	return ref
}

func load(t *testing.T, path string) []record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var recs []record
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(r.RawOp) > 0 {
			var op []json.RawMessage
			if err := json.Unmarshal(r.RawOp, &op); err != nil || len(op) == 0 || json.Unmarshal(op[0], &r.opName) != nil {
				t.Fatalf("%s: bad op %s", path, r.RawOp)
			}
			if len(op) > 1 {
				if err := json.Unmarshal(op[1], &r.opArg); err != nil {
					t.Fatalf("%s: bad op %s: %v", path, r.RawOp, err)
				}
			}
		}
		for i := range r.Segments {
			if err := r.Segments[i].decode(); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestSolutionsAgreeWithPyTorch(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(referenceDir(t), "*.jsonl.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no ground-truth files in %s: %v", referenceDir(t), err)
	}
	checked, replayed := 0, 0
	for _, f := range files {
		recs := load(t, f)
		if len(recs) < 2 || recs[0].Kind != "header" {
			t.Fatalf("%s: no header", f)
		}
		h := recs[0].AllocatorSettings
		if h.ExpandableSegments {
			continue // expandable segments map pages instead of cutting segments
		}
		replayed++
		t.Run(filepath.Base(f), func(t *testing.T) {
			checked += replay(t, h.MaxSplitSize, table(t, h.Divisions), recs[1:])
		})
	}
	if checked == 0 {
		t.Fatal("no op was checked")
	}
	t.Logf("%d ops of %d recordings checked against PyTorch 2.11", checked, replayed)
}

// table turns allocator_settings.roundup_power2_divisions (keyed by the interval's
// start in MiB) into RoundSizeTable's 16 entries.
func table(t *testing.T, divs map[string]uint64) [16]uint64 {
	var tab [16]uint64
	for k, v := range divs {
		mb, err := strconv.ParseUint(k, 10, 64)
		if err != nil || mb == 0 {
			t.Fatalf("bad divisions key %q", k)
		}
		tab[bits.Len64(mb)-1] = v
	}
	return tab
}

// replay walks the op records of one trace and checks every exercise on each.
func replay(t *testing.T, maxSplit int64, divs [16]uint64, recs []record) int {
	var cfgSplit uint64
	if maxSplit > 0 {
		cfgSplit = uint64(maxSplit)
	}
	var tracker stats.Tracker
	ptrOf := map[int]uint64{}
	prev := recs[0] // the baseline
	ops := 0
	for _, r := range recs[1:] {
		if r.Kind != "op" {
			continue
		}
		ops++
		name := string(r.RawOp)
		before := blocksByAddr(t, prev.Segments)
		switch r.opName {
		case "a":
			if r.opArg == 0 {
				break // torch.empty(0) never reaches the allocator
			}
			ptrOf[r.ID] = r.Ptr
			checkAlloc(t, name, r.opArg, cfgSplit, divs, prev, r, before, &tracker)
		case "f":
			if ptr, ok := ptrOf[int(r.opArg)]; ok {
				checkFree(t, name, ptr, prev, r, &tracker)
			}
		case "e":
			for _, g := range r.GoneSegs {
				if err := tracker.Apply(stats.Event{Kind: stats.SegmentFree, Size: g[1]}); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
		}
		checkStats(t, name, r, &tracker)
		checkBreakdown(t, name, r)
		prev = r
	}
	return ops
}

// blocksByAddr indexes the blocks of a snapshot by address, with their pool.
func blocksByAddr(t *testing.T, segs []seg) map[uint64]struct {
	b    block
	pool string
} {
	m := map[uint64]struct {
		b    block
		pool string
	}{}
	for _, s := range segs {
		for _, b := range s.decoded {
			m[b.addr] = struct {
				b    block
				pool string
			}{b, s.Type}
		}
	}
	return m
}

func checkAlloc(t *testing.T, name string, request, maxSplit uint64, divs [16]uint64, prev, r record, before map[uint64]struct {
	b    block
	pool string
}, tracker *stats.Tracker) {
	t.Helper()
	rounded, err := round.RoundSizeTable(request, divs)
	if err != nil {
		t.Fatalf("%s: RoundSizeTable: %v", name, err)
	}
	pool, err := segment.PoolFor(rounded)
	if err != nil {
		t.Fatalf("%s: PoolFor: %v", name, err)
	}
	after := blocksByAddr(t, r.Segments)
	got, ok := after[r.Ptr]
	if !ok || !got.b.allocated {
		t.Fatalf("%s: no allocated block at ptr %#x in PyTorch's snapshot", name, r.Ptr)
	}
	wantType := map[segment.Pool]string{segment.SmallPool: "S", segment.LargePool: "L"}[pool]
	if got.pool != wantType {
		t.Errorf("%s: PoolFor(%d) = %v, PyTorch used a %q segment", name, rounded, pool, got.pool)
	}
	// Best fit among the free blocks of that pool before the op.
	var free []bestfit.Block
	var addrs []uint64
	for addr, e := range before {
		if !e.b.allocated && e.pool == wantType {
			free = append(free, bestfit.Block{Addr: addr, Size: e.b.size})
			addrs = append(addrs, addr)
		}
	}
	i := bestfit.BestFit(free, rounded, bestfit.Config{MaxSplitSize: maxSplit})
	var found uint64
	switch {
	case len(r.GoneSegs) > 0:
		return // the out-of-memory retry path released segments: outside these exercises
	case len(r.NewSegs) == 1:
		if i >= 0 {
			t.Errorf("%s: BestFit chose the cached block at %#x (%d bytes), but PyTorch made a new segment", name, addrs[i], free[i].Size)
		}
		segSize, err := segment.SegmentSize(rounded)
		if err != nil || segSize != r.NewSegs[0][1] {
			t.Errorf("%s: SegmentSize(%d) = %d, %v; PyTorch's new segment has %d bytes", name, rounded, segSize, err, r.NewSegs[0][1])
		}
		found = r.NewSegs[0][1]
		if err := tracker.Apply(stats.Event{Kind: stats.SegmentAlloc, Size: found}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	default:
		if i < 0 || addrs[i] != r.Ptr {
			t.Fatalf("%s: BestFit(%d bytes) = %d, PyTorch reused the block at %#x", name, rounded, i, r.Ptr)
		}
		found = free[i].Size
	}
	// Split or not: the allocated block is the rounded size or the whole block.
	sp := split.LargePool
	if pool == segment.SmallPool {
		sp = split.SmallPool
	}
	seg, err := split.Allocate([]split.Block{{Addr: r.Ptr, Size: found}}, 0, rounded, sp, split.Config{MaxSplitSize: maxSplit})
	if err != nil {
		t.Fatalf("%s: Allocate: %v", name, err)
	}
	if seg[0].Size != got.b.size {
		t.Errorf("%s: Allocate gave a %d-byte block from a %d-byte one; PyTorch's block has %d bytes", name, seg[0].Size, found, got.b.size)
	}
	if err := tracker.Apply(stats.Event{Kind: stats.Alloc, Size: got.b.size, Requested: request}); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func checkFree(t *testing.T, name string, ptr uint64, prev, r record, tracker *stats.Tracker) {
	t.Helper()
	for _, s := range prev.Segments {
		blocks := s.decoded
		i := slices.IndexFunc(blocks, func(b block) bool { return b.addr == ptr })
		if i < 0 {
			continue
		}
		in := make([]merge.Block, len(blocks))
		for k, b := range blocks {
			in[k] = merge.Block{Addr: b.addr, Size: b.size, Allocated: b.allocated}
		}
		got, err := merge.Free(in, ptr)
		if err != nil {
			t.Fatalf("%s: Free: %v", name, err)
		}
		var want []merge.Block
		for _, s2 := range r.Segments {
			if s2.Addr == s.Addr {
				for _, b := range s2.decoded {
					want = append(want, merge.Block{Addr: b.addr, Size: b.size, Allocated: b.allocated})
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: Free gave %v, PyTorch's segment is %v", name, got, want)
		}
		if err := tracker.Apply(stats.Event{Kind: stats.Free, Size: blocks[i].size, Requested: blocks[i].requested}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return
	}
	t.Fatalf("%s: no block at %#x before the free", name, ptr)
}

func checkStats(t *testing.T, name string, r record, tracker *stats.Tracker) {
	t.Helper()
	s := tracker.Stats()
	for _, c := range []struct {
		key  string
		got  uint64
		want int64
	}{
		{"allocated_bytes.all.current", s.Allocated.Current, r.Stats["allocated_bytes.all.current"]},
		{"reserved_bytes.all.current", s.Reserved.Current, r.Stats["reserved_bytes.all.current"]},
		{"requested_bytes.all.current", s.Requested.Current, r.Stats["requested_bytes.all.current"]},
		{"allocation.all.current", s.Allocations.Current, r.Stats["allocation.all.current"]},
		{"segment.all.current", s.Segments.Current, r.Stats["segment.all.current"]},
		{"allocated_bytes.all.peak", s.Allocated.Peak, r.Stats["allocated_bytes.all.peak"]},
		{"reserved_bytes.all.peak", s.Reserved.Peak, r.Stats["reserved_bytes.all.peak"]},
	} {
		if int64(c.got) != c.want {
			t.Fatalf("%s: Tracker %s = %d, PyTorch %d", name, c.key, c.got, c.want)
		}
	}
}

func checkBreakdown(t *testing.T, name string, r record) {
	t.Helper()
	var segs [][]fragmentation.Block
	for _, s := range r.Segments {
		var bs []fragmentation.Block
		for _, b := range s.decoded {
			bs = append(bs, fragmentation.Block{Size: b.size, Allocated: b.allocated})
		}
		segs = append(segs, bs)
	}
	got := fragmentation.Breakdown(segs)
	want := fragmentation.Split{
		Allocated:           uint64(r.Stats["allocated_bytes.all.current"]),
		NonReleasable:       uint64(r.Stats["inactive_split_bytes.all.current"]),
		NonReleasableBlocks: int(r.Stats["inactive_split.all.current"]),
	}
	want.Releasable = uint64(r.Stats["reserved_bytes.all.current"]) - want.Allocated - want.NonReleasable
	if got != want {
		t.Fatalf("%s: Breakdown = %+v, PyTorch %+v", name, got, want)
	}
}
