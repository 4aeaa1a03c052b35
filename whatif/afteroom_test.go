package whatif

import (
	"fmt"
	"math/rand"
	"testing"

	"memlab.dev/memlab/allocator"
)

// afterOOMKeys are the figures afterOOMRange bounds, with the current figure each
// one's peak follows.
var afterOOMKeys = []string{
	"inactive_split_bytes.all", "inactive_split_bytes.small_pool", "inactive_split_bytes.large_pool",
	"inactive_split.all", "inactive_split.small_pool", "inactive_split.large_pool",
}

// freeState is a small allocator state built by a fixed sequence of operations, so
// that it can be built again for every order of the frees that follow.
type freeState struct {
	conf    string
	ops     []freeStateOp
	live    []int // indices into ops of the allocations still live (allocated or pending)
	pending map[int]bool
}

type freeStateOp struct {
	size    int64 // > 0: allocate; 0: free ops[of]
	of      int
	pool    bool // allocate in the private pool
	pending bool // free: used on another stream first, so the free waits
}

// build runs the state's operations on a fresh allocator, returning it and the
// address of each allocation.
func (fs *freeState) build(t *testing.T) (*allocator.Allocator, []uint64) {
	t.Helper()
	cfg, err := allocator.ParseConfig(fs.conf)
	if err != nil {
		t.Fatal(err)
	}
	a, err := allocator.New(newDeviceMemory(1<<30), cfg)
	if err != nil {
		t.Fatal(err)
	}
	pool := allocator.PoolID{Second: 1}
	if err := a.CreateOrIncrefPool(pool); err != nil {
		t.Fatal(err)
	}
	addrs := make([]uint64, len(fs.ops))
	for i, o := range fs.ops {
		switch {
		case o.size > 0 && o.pool:
			addrs[i], err = a.MallocInPool(o.size, 0, pool)
		case o.size > 0:
			addrs[i], err = a.MallocStream(o.size, 0)
		default:
			if o.pending {
				if err := a.RecordStream(addrs[o.of], 7); err != nil {
					t.Fatal(err)
				}
			}
			err = a.Free(addrs[o.of])
		}
		if err != nil {
			t.Fatalf("%s: op %d: %v", fs.conf, i, err)
		}
	}
	return a, addrs
}

// randomFreeState makes a state of mixed small, split-large and whole-segment blocks
// in the default and a private pool, some of them pending a free, at most maxLive of
// them live.
func randomFreeState(rng *rand.Rand, conf string, maxLive int) *freeState {
	fs := &freeState{conf: conf, pending: map[int]bool{}}
	sizes := []int64{512, 3000, 200 << 10, 900 << 10, 1 << 20, 3 << 20, 5<<20 + 512, 9 << 20, 12 << 20}
	var live []int
	n := 6 + rng.Intn(14)
	for range n {
		if len(live) > 0 && rng.Intn(3) == 0 {
			k := rng.Intn(len(live))
			fs.ops = append(fs.ops, freeStateOp{of: live[k]})
			live = append(live[:k], live[k+1:]...)
			continue
		}
		live = append(live, len(fs.ops))
		fs.ops = append(fs.ops, freeStateOp{size: sizes[rng.Intn(len(sizes))], pool: rng.Intn(4) == 0})
	}
	for len(live) > maxLive {
		k := rng.Intn(len(live))
		fs.ops = append(fs.ops, freeStateOp{of: live[k]})
		live = append(live[:k], live[k+1:]...)
	}
	// some of the live ones are freed while used on another stream: pending
	for i := 0; i < len(live); i++ {
		if rng.Intn(5) == 0 {
			fs.ops = append(fs.ops, freeStateOp{of: live[i], pending: true})
			fs.pending[live[i]] = true
		}
	}
	fs.live = live
	return fs
}

// permutations calls f with every order of 0..n-1.
func permutations(n int, f func([]int)) {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			f(p)
			return
		}
		for i := k; i < n; i++ {
			p[k], p[i] = p[i], p[k]
			rec(k + 1)
			p[k], p[i] = p[i], p[k]
		}
	}
	rec(0)
}

// TestAfterOOMRangeIsReachedAndNeverExceeded checks afterOOMRange's high against
// the real allocator: from small random states (the default pool and a private one,
// small and large blocks, frees pending on another stream), every order of freeing the
// live blocks is replayed, and the most each fragmentation figure reaches over all
// orders and all moments must equal the bound (sound: never above it; tight: reached).
func TestAfterOOMRangeIsReachedAndNeverExceeded(t *testing.T) {
	rng := rand.New(rand.NewSource(20))
	states := 0
	reachedAbove := map[string]int{} // how often the bound was above the state's own figure
	for _, conf := range []string{"", "roundup_power2_divisions:4", "max_split_size_mb:21", "expandable_segments:True"} {
		for range 60 {
			fs := randomFreeState(rng, conf, 5)
			a, _ := fs.build(t)
			// the bound over the figures' current values (low 0: the state's peaks left out)
			rg := afterOOMRange(a.Snapshot(), map[string]int64{})
			bound := map[string]int64{}
			for _, k := range afterOOMKeys {
				bound[k] = rg[k+".peak"][1]
			}
			most := map[string]int64{}
			look := func(a *allocator.Allocator) {
				st := a.MemoryStats()
				for _, k := range afterOOMKeys {
					most[k] = max(most[k], st[k+".current"])
				}
			}
			look(a)
			for k, v := range most {
				if v < bound[k] {
					reachedAbove[k]++
				}
			}
			permutations(len(fs.live), func(order []int) {
				a, addrs := fs.build(t)
				for _, i := range order {
					op := fs.live[i]
					var err error
					if fs.pending[op] {
						err = a.CompleteFree(addrs[op])
					} else {
						err = a.Free(addrs[op])
					}
					if err != nil {
						t.Fatalf("%s: freeing op %d: %v", conf, op, err)
					}
					look(a)
				}
			})
			for _, k := range afterOOMKeys {
				if most[k] != bound[k] {
					t.Errorf("%s, state %d (%d live): %s reaches %d over every order of frees, the bound says %d", conf, states, len(fs.live), k, most[k], bound[k])
				}
			}
			if conf == "expandable_segments:True" && len(rg) != 0 {
				t.Errorf("expandable segments: a range %v, but they count no inactive split", rg)
			}
			states++
		}
	}
	// the states must exercise the bound: frees reach above the state's own figure
	for _, k := range []string{"inactive_split_bytes.small_pool", "inactive_split_bytes.large_pool", "inactive_split.small_pool", "inactive_split.large_pool"} {
		if reachedAbove[k] < 10 {
			t.Errorf("%s: only %d of %d states had frees reach above their own figure: the test does not exercise the bound", k, reachedAbove[k], states)
		}
	}
	t.Log(fmt.Sprintf("%d states; states whose frees reach above their own figure: %v", states, reachedAbove))
}

// TestAfterOOMRangeKeepsThePeak checks the low and high against a state's peak: the
// low is the figure at the stop, and a bound below the peak gives no range.
func TestAfterOOMRangeKeepsThePeak(t *testing.T) {
	seg := allocator.Segment{Pool: "large", TotalSize: 20 << 20, Blocks: []allocator.Block{
		{Size: 4 << 20, State: allocator.StateActiveAllocated},
		{Size: 6 << 20, State: allocator.StateInactive},
		{Size: 2 << 20, State: allocator.StateActivePendingFree},
		{Size: 8 << 20, State: allocator.StateActiveAllocated},
	}}
	snap := allocator.Snapshot{Segments: []allocator.Segment{seg}}
	rg := afterOOMRange(snap, map[string]int64{"inactive_split_bytes.all.peak": 6 << 20, "inactive_split.all.peak": 1})
	// keep the 2 MiB pending block: 18 MiB free in two runs (before and after it)
	if got := rg["inactive_split_bytes.all.peak"]; got != [2]int64{6 << 20, 18 << 20} {
		t.Errorf("bytes range %v, want [6 MiB, 18 MiB]", got)
	}
	if got := rg["inactive_split_bytes.large_pool.peak"]; got != [2]int64{0, 18 << 20} {
		t.Errorf("large pool bytes range %v, want [0, 18 MiB]", got)
	}
	if got := rg["inactive_split.all.peak"]; got != [2]int64{1, 2} {
		t.Errorf("count range %v, want [1, 2]", got)
	}
	if _, ok := rg["inactive_split_bytes.small_pool.peak"]; ok {
		t.Errorf("a small-pool range without small segments: %v", rg)
	}
	// a peak above what frees can reach: no range
	if rg := afterOOMRange(snap, map[string]int64{"inactive_split_bytes.all.peak": 30 << 20, "inactive_split_bytes.large_pool.peak": 30 << 20,
		"inactive_split.all.peak": 5, "inactive_split.large_pool.peak": 5}); rg != nil {
		t.Errorf("a peak above every bound: range %v, want none", rg)
	}
	// a segment with no live block, or an expandable one, counts nothing
	whole := allocator.Segment{Pool: "large", TotalSize: 20 << 20, Blocks: []allocator.Block{{Size: 20 << 20, State: allocator.StateInactive}}}
	exp := seg
	exp.Expandable = true
	if rg := afterOOMRange(allocator.Snapshot{Segments: []allocator.Segment{whole, exp}}, map[string]int64{}); rg != nil {
		t.Errorf("a free segment and an expandable one: range %v, want none", rg)
	}
}
