package allocator

import (
	"encoding/json"
	"io"
	"sort"
	"strconv"
)

// Block states, as torch.cuda.memory_snapshot() names them.
const (
	StateActiveAllocated   = "active_allocated"
	StateActivePendingFree = "active_pending_free" // freed, waiting on other streams (RecordStream)
	StateInactive          = "inactive"
)

// Block is one block of a Segment in a Snapshot.
type Block struct {
	Address       uint64
	Size          int64
	RequestedSize int64 // of the last allocation; stale for inactive blocks, as in PyTorch
	State         string
	Frames        []Frame // where it was allocated, when history records stacks
}

// Segment is one device allocation (or, for expandable segments, one contiguous mapped
// range) in a Snapshot, with its blocks in address order.
type Segment struct {
	Address       uint64
	TotalSize     int64  // sum of the blocks' sizes
	AllocatedSize int64  // sum of allocated blocks
	ActiveSize    int64  // allocated + pending free
	RequestedSize int64  // sum of the requests of active blocks
	Pool          string // "large" or "small"
	Stream        uint64 // the stream the segment belongs to (0: the default stream)
	// PoolID is the private pool the segment belongs to (segment_pool_id), the zero
	// PoolID for the default pool.
	PoolID     PoolID
	Expandable bool
	Blocks     []Block
}

// Settings is allocator_settings as torch.cuda.memory._snapshot() reports it.
type Settings struct {
	Conf                          string
	MaxSplitSize                  int64 // -1 when unlimited
	GarbageCollectionThreshold    float64
	ExpandableSegments            bool
	PinnedNumRegisterThreads      int
	ReleaseLockOnCudaMalloc       bool
	PinnedUseCudaHostRegister     bool
	GraphCaptureRecordStreamReuse bool
	RoundupPower2Divisions        [RoundupIntervals]int
}

// Snapshot is the allocator's memory at one moment: PyTorch's memory_snapshot() view,
// plus the event history when RecordHistory is on.
type Snapshot struct {
	Device   int
	Segments []Segment // in address order
	Trace    []Event   // oldest first; empty unless history is recorded
	Settings Settings
}

// Snapshot returns the segments and blocks, in address order, and the recorded history.
// Its cost is proportional to the number of blocks.
func (a *Allocator) Snapshot() Snapshot {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := Snapshot{Device: a.device, Settings: a.settings()}
	var all []*block
	for _, p := range a.allPools() {
		all = p.blocks.appendInOrder(all)
	}
	a.active.each(func(b *block) { all = append(all, b) })
	for _, b := range a.pendingFrees {
		if b != nil {
			all = append(all, b)
		}
	}
	for _, head := range all {
		if head.prev != nil && head.prev.mapped {
			continue
		}
		seg := Segment{Address: head.addr, Pool: head.pool.name(), Stream: head.stream, PoolID: head.pool.poolID(), Expandable: head.seg != nil}
		for b := head; b != nil && b.mapped; b = b.next {
			st := StateInactive
			if b.allocated {
				st = StateActiveAllocated
			} else if b.pending {
				st = StateActivePendingFree
			}
			seg.Blocks = append(seg.Blocks, Block{Address: b.addr, Size: b.size, RequestedSize: b.requested, State: st, Frames: b.frames})
			seg.TotalSize += b.size
			if b.allocated {
				seg.AllocatedSize += b.size
			}
			if b.allocated || b.pending {
				seg.ActiveSize += b.size
				seg.RequestedSize += b.requested
			}
		}
		s.Segments = append(s.Segments, seg)
	}
	sort.Slice(s.Segments, func(i, j int) bool { return s.Segments[i].Address < s.Segments[j].Address })
	if a.hist.on {
		s.Trace = a.hist.ordered()
	}
	return s
}

func (a *Allocator) settings() Settings {
	c := a.cfg
	n := c.PinnedNumRegisterThreads
	if n <= 0 {
		n = 1
	}
	src := ""
	if c.parsed {
		src = c.raw
	} else {
		src = c.String()
	}
	return Settings{
		Conf: src, MaxSplitSize: a.stats.maxSplitSize,
		GarbageCollectionThreshold: c.GarbageCollectionThreshold,
		ExpandableSegments:         c.ExpandableSegments, PinnedNumRegisterThreads: n,
		ReleaseLockOnCudaMalloc: c.ReleaseLockOnCudaMalloc, PinnedUseCudaHostRegister: c.PinnedUseCudaHostRegister,
		GraphCaptureRecordStreamReuse: c.GraphCaptureRecordStreamReuse,
		RoundupPower2Divisions:        c.RoundupPower2Divisions,
	}
}

// TotalFree is the bytes of free (inactive) blocks in all segments.
func (s Snapshot) TotalFree() int64 {
	var n int64
	for _, seg := range s.Segments {
		for _, b := range seg.Blocks {
			if b.State == StateInactive {
				n += b.Size
			}
		}
	}
	return n
}

// LargestFreeBlock is the size of the largest free block, the biggest request the cache
// could serve without a new device allocation (ignoring pool and oversize rules).
func (s Snapshot) LargestFreeBlock() int64 {
	var m int64
	for _, seg := range s.Segments {
		for _, b := range seg.Blocks {
			if b.State == StateInactive && b.Size > m {
				m = b.Size
			}
		}
	}
	return m
}

// Fragmentation is 1 − LargestFreeBlock/TotalFree for the segments of pool ("large",
// "small" or "" for both): 0 when all free memory is one block (or there is none),
// close to 1 when it is scattered in slivers.
func (s Snapshot) Fragmentation(pool string) float64 {
	var total, largest int64
	for _, seg := range s.Segments {
		if pool != "" && seg.Pool != pool {
			continue
		}
		for _, b := range seg.Blocks {
			if b.State == StateInactive {
				total += b.Size
				if b.Size > largest {
					largest = b.Size
				}
			}
		}
	}
	if total == 0 {
		return 0
	}
	return 1 - float64(largest)/float64(total)
}

// WriteMemoryVizJSON writes the snapshot as the dict torch.cuda.memory._snapshot()
// returns — segments, device_traces, allocator_settings — in JSON, which
// pytorch.org/memory_viz opens like the pickle PyTorch writes.
func (s Snapshot) WriteMemoryVizJSON(w io.Writer) error {
	type jblock struct {
		Address       uint64  `json:"address"`
		Size          int64   `json:"size"`
		RequestedSize int64   `json:"requested_size"`
		State         string  `json:"state"`
		Frames        []Frame `json:"frames"`
	}
	type jseg struct {
		Device        int       `json:"device"`
		Address       uint64    `json:"address"`
		TotalSize     int64     `json:"total_size"`
		AllocatedSize int64     `json:"allocated_size"`
		ActiveSize    int64     `json:"active_size"`
		RequestedSize int64     `json:"requested_size"`
		Stream        uint64    `json:"stream"`
		SegmentType   string    `json:"segment_type"`
		SegmentPoolID [2]uint64 `json:"segment_pool_id"`
		IsExpandable  bool      `json:"is_expandable"`
		Frames        []Frame   `json:"frames"`
		Blocks        []jblock  `json:"blocks"`
	}
	type jtrace struct {
		Action     string  `json:"action"`
		Addr       *uint64 `json:"addr,omitempty"`
		DeviceFree *uint64 `json:"device_free,omitempty"`
		Size       int64   `json:"size"`
		Stream     uint64  `json:"stream"`
		TimeUS     int64   `json:"time_us"`
		Frames     []Frame `json:"frames"`
	}
	out := struct {
		Segments          []jseg           `json:"segments"`
		DeviceTraces      [][]jtrace       `json:"device_traces"`
		AllocatorSettings map[string]any   `json:"allocator_settings"`
		Annotations       []map[string]any `json:"external_annotations"`
	}{Segments: []jseg{}, Annotations: []map[string]any{}}
	for _, seg := range s.Segments {
		js := jseg{Device: s.Device, Address: seg.Address, TotalSize: seg.TotalSize, AllocatedSize: seg.AllocatedSize,
			ActiveSize: seg.ActiveSize, RequestedSize: seg.RequestedSize, Stream: seg.Stream, SegmentType: seg.Pool,
			SegmentPoolID: [2]uint64{seg.PoolID.First, seg.PoolID.Second},
			IsExpandable:  seg.Expandable, Frames: []Frame{}, Blocks: []jblock{}}
		for _, b := range seg.Blocks {
			f := b.Frames
			if f == nil {
				f = []Frame{}
			}
			js.Blocks = append(js.Blocks, jblock{Address: b.Address, Size: b.Size, RequestedSize: b.RequestedSize, State: b.State, Frames: f})
		}
		out.Segments = append(out.Segments, js)
	}
	traces := make([]jtrace, 0, len(s.Trace))
	for _, e := range s.Trace {
		if e.Action == ActionEmptyCache {
			continue
		}
		addr := e.Addr
		t := jtrace{Action: string(e.Action), Size: e.Size, Stream: e.Stream, TimeUS: e.Time.UnixMicro(), Frames: e.Frames}
		if e.Action == ActionOOM {
			t.DeviceFree = &addr
		} else {
			t.Addr = &addr
		}
		if t.Frames == nil {
			t.Frames = []Frame{}
		}
		traces = append(traces, t)
	}
	out.DeviceTraces = make([][]jtrace, s.Device+1)
	for i := range out.DeviceTraces {
		out.DeviceTraces[i] = []jtrace{}
	}
	out.DeviceTraces[s.Device] = traces
	rp := map[string]int{}
	for i, d := range s.Settings.RoundupPower2Divisions {
		rp[strconv.Itoa(1<<i)] = d
	}
	out.AllocatorSettings = map[string]any{
		"PYTORCH_CUDA_ALLOC_CONF":           s.Settings.Conf,
		"max_split_size":                    s.Settings.MaxSplitSize,
		"garbage_collection_threshold":      s.Settings.GarbageCollectionThreshold,
		"expandable_segments":               s.Settings.ExpandableSegments,
		"pinned_num_register_threads":       s.Settings.PinnedNumRegisterThreads,
		"release_lock_on_cudamalloc":        s.Settings.ReleaseLockOnCudaMalloc,
		"pinned_use_cuda_host_register":     s.Settings.PinnedUseCudaHostRegister,
		"graph_capture_record_stream_reuse": s.Settings.GraphCaptureRecordStreamReuse,
		"roundup_power2_divisions":          rp,
	}
	enc := json.NewEncoder(w)
	return enc.Encode(out)
}
