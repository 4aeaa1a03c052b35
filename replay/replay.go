package replay

import (
	"errors"
	"fmt"

	"memlab.dev/memlab/allocator"
)

// StatKeys are the memory_stats keys replay_torch.py records, in its order.
var StatKeys = []string{
	"allocated_bytes.all.current", "allocated_bytes.all.peak",
	"reserved_bytes.all.current", "reserved_bytes.all.peak",
	"active_bytes.all.current", "requested_bytes.all.current",
	"inactive_split_bytes.all.current", "inactive_split.all.current",
	"allocation.all.current", "active.all.current",
	"segment.all.current", "segment.large_pool.current",
	"segment.small_pool.current",
	"reserved_bytes.large_pool.current", "reserved_bytes.small_pool.current",
	"allocated_bytes.large_pool.current", "allocated_bytes.small_pool.current",
	"inactive_split_bytes.large_pool.current",
	"inactive_split_bytes.small_pool.current",
	"num_alloc_retries", "num_ooms", "num_sync_all_streams",
	"num_device_alloc", "num_device_free",
	"oversize_allocations.current", "oversize_segments.current",
	"max_split_size",
}

// DefaultCapacity is the simulated device size for bare op lists: the H200 the ground
// truth was recorded on (its total memory).
const DefaultCapacity = 150109880320

// Options configure a replay.
type Options struct {
	// Conf overrides the trace's allocator configuration when non-nil.
	Conf *string
	// Capacity is the simulated device size for bare op lists (0: DefaultCapacity).
	Capacity uint64
	// States, when set, is called with the state after every op. Without it Run only
	// drives the allocator (fast).
	States func(State)
	// History, when positive, records up to this many allocator events (for a
	// memory_viz snapshot of the result).
	History int
}

// Result is what a replay ends with.
type Result struct {
	Allocator *allocator.Allocator
	Summary   string // final MemorySummary()
	Ops       int
	OOMs      int
	// GuessedAddresses counts device allocations whose address was not in the
	// ground-truth record (then ties may break differently from the GPU).
	GuessedAddresses int
}

// Run replays t and returns the final allocator.
func Run(t *Trace, opts Options) (*Result, error) {
	if t == nil {
		return nil, errors.New("replay: nil trace")
	}
	conf := ""
	if t.Header != nil {
		conf = t.Header.Conf
	}
	if opts.Conf != nil {
		conf = *opts.Conf
	}
	cfg, err := allocator.ParseConfig(conf)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	var mem allocator.Memory
	var oracle *oracleMemory
	var total uint64
	if t.Header != nil {
		if err := t.Header.check(); err != nil { // Read checks it; a Trace built in code may not be
			return nil, fmt.Errorf("replay: header: %w", err)
		}
		total = uint64(t.Header.TotalMemory)
		free := total
		if len(t.Header.MemGetInfo) == 2 && t.Header.MemGetInfo[0] > 0 {
			free = uint64(t.Header.MemGetInfo[0])
		}
		oracle = newOracleMemory(total, free)
		mem = oracle
	} else {
		c := opts.Capacity
		if c == 0 {
			c = DefaultCapacity
		}
		total = c
		mem = NewSimMemory(c)
	}
	a, err := allocator.New(mem, cfg)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	if h := t.Header; h != nil && h.CapGiB != nil && *h.CapGiB > 0 {
		frac := *h.CapGiB * float64(1<<30) / float64(total)
		if frac > 1 {
			frac = 1
		}
		if err := a.SetPerProcessMemoryFraction(frac); err != nil {
			return nil, fmt.Errorf("replay: cap_gib %v: %w", *h.CapGiB, err)
		}
	}
	a.ResetPeakMemoryStats()
	a.ResetAccumulatedMemoryStats()
	if opts.History > 0 {
		a.RecordHistory(allocator.HistoryOptions{Enabled: true, MaxEntries: opts.History})
	}

	res := &Result{Allocator: a}
	ptrs := make([]uint64, 0, len(t.Ops)) // by allocation id; 0 = not live
	nextID := 0
	var prevSegs [][2]uint64
	window := 0
	for i, op := range t.Ops {
		if oracle != nil {
			// The recorded segments of this op, or of the next line that has them.
			for window < i || (window < len(t.NewSegs) && t.NewSegs[window] == nil) {
				window++
			}
			var ns [][2]uint64
			if window < len(t.NewSegs) {
				ns = t.NewSegs[window]
			}
			var ptr uint64
			if i < len(t.Ptrs) {
				ptr = t.Ptrs[i]
			}
			oracle.beginOp(ptr, ns, window)
		}
		st := State{Kind: "op", I: i, Op: op}
		record := opts.States != nil
		switch op.Kind {
		case OpAlloc, OpAllocStream:
			id := nextID
			nextID++
			if record {
				st.ID = intPtr(id)
			}
			// PyTorch's malloc first processes the events of frees that waited
			// on other streams; every op's work is done by now.
			for _, p := range a.PendingFrees() {
				if err := a.CompleteFree(p); err != nil {
					return nil, fmt.Errorf("replay: op %d %v: %w", i, op, err)
				}
			}
			var stream uint64
			if op.Kind == OpAllocStream {
				stream = uint64(op.Stream)
			}
			addr, err := a.MallocStream(op.N, stream)
			ptrs = append(ptrs, 0)
			if err != nil {
				oom, ok := asOOM(err)
				if !ok {
					return nil, fmt.Errorf("replay: op %d %v: %w", i, op, err)
				}
				st.OOM, st.Msg = true, oom.Error()
				res.OOMs++
				break
			}
			ptrs[id] = addr
			if record {
				st.Ptr = u64Ptr(addr)
			}
		case OpFree:
			id := int(op.N)
			if record {
				st.ID = intPtr(id)
			}
			if id < 0 { // Read refuses these; a Trace built in code may not
				return nil, fmt.Errorf("replay: op %d %v: allocation id %d is negative", i, op, id)
			}
			if id >= len(ptrs) || ptrs[id] == 0 {
				st.Noop = true
				break
			}
			addr := ptrs[id]
			ptrs[id] = 0
			if err := a.Free(addr); err != nil {
				return nil, fmt.Errorf("replay: op %d %v: %w", i, op, err)
			}
		case OpRecordStream:
			id := int(op.N)
			if record {
				st.ID = intPtr(id)
			}
			if id >= len(ptrs) || ptrs[id] == 0 {
				st.Noop = true
				break
			}
			if err := a.RecordStream(ptrs[id], uint64(op.Stream)); err != nil {
				return nil, fmt.Errorf("replay: op %d %v: %w", i, op, err)
			}
		case OpEmptyCache:
			if err := a.EmptyCache(); err != nil {
				return nil, fmt.Errorf("replay: op %d: %w", i, err)
			}
		case OpResetPeak:
			a.ResetPeakMemoryStats()
		case OpFraction:
			if err := a.SetPerProcessMemoryFraction(op.Fraction); err != nil {
				return nil, fmt.Errorf("replay: op %d: %w", i, err)
			}
		case OpMarker:
		default:
			return nil, fmt.Errorf("replay: op %d: unknown kind %q", i, op.Kind)
		}
		if opts.States != nil {
			prevSegs = fillState(a, &st, prevSegs)
			opts.States(st)
		}
	}
	res.Ops = len(t.Ops)
	res.Summary = a.MemorySummary(false)
	if oracle != nil {
		res.GuessedAddresses = oracle.Guessed
	}
	return res, nil
}

func intPtr(i int) *int { return &i }

func u64Ptr(u uint64) *uint64 { return &u }

func asOOM(err error) (*allocator.OutOfMemoryError, bool) {
	var oom *allocator.OutOfMemoryError
	ok := errors.As(err, &oom)
	return oom, ok
}

// fillState records the allocator's state in st, as replay_torch.py does.
func fillState(a *allocator.Allocator, st *State, prev [][2]uint64) [][2]uint64 {
	stats := a.MemoryStats()
	st.Stats = make(map[string]int64, len(StatKeys))
	for _, k := range StatKeys {
		st.Stats[k] = stats[k]
	}
	v := func(x int64) *int64 { return &x }
	st.MemoryAllocated = v(stats["allocated_bytes.all.current"])
	st.MemoryReserved = v(stats["reserved_bytes.all.current"])
	st.MaxMemoryAllocated = v(stats["allocated_bytes.all.peak"])
	st.MaxMemoryReserved = v(stats["reserved_bytes.all.peak"])
	snap := a.Snapshot()
	st.SegSizes = make([]int64, 0, len(snap.Segments))
	st.Segments = make([]SegState, 0, len(snap.Segments))
	cur := make([][2]uint64, 0, len(snap.Segments))
	for _, s := range snap.Segments {
		ss := SegState{Addr: s.Address, Total: s.TotalSize, Type: "L", Exp: s.Expandable}
		if s.Pool == "small" {
			ss.Type = "S"
		}
		for _, b := range s.Blocks {
			code := "I"
			switch b.State {
			case allocator.StateActiveAllocated:
				code = "A"
			case allocator.StateActivePendingFree:
				code = "P"
			}
			ss.Blocks = append(ss.Blocks, BlockState{Size: b.Size, State: code, Requested: b.RequestedSize})
		}
		st.SegSizes = append(st.SegSizes, s.TotalSize)
		st.Segments = append(st.Segments, ss)
		cur = append(cur, [2]uint64{s.Address, uint64(s.TotalSize)})
	}
	st.hasSegSizes = true
	st.NewSegs, st.GoneSegs = diffSegs(prev, cur), diffSegs(cur, prev)
	return cur
}

// diffSegs returns the entries of b not in a.
func diffSegs(a, b [][2]uint64) [][2]uint64 {
	in := make(map[[2]uint64]bool, len(a))
	for _, x := range a {
		in[x] = true
	}
	out := [][2]uint64{}
	for _, x := range b {
		if !in[x] {
			out = append(out, x)
		}
	}
	return out
}
