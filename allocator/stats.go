package allocator

import "sort"

// Indexes of a stat array, as PyTorch's StatType.
const (
	statAll   = 0
	statSmall = 1
	statLarge = 2
)

var statTypeNames = [3]string{"all", "small_pool", "large_pool"}

// Stat is one of PyTorch's counters: the current value, its peak since the last
// ResetPeakMemoryStats, and the totals added and removed since the last
// ResetAccumulatedMemoryStats.
type Stat struct {
	Current, Peak, Allocated, Freed int64
}

func (s *Stat) increase(n int64) {
	s.Current += n
	if s.Current > s.Peak {
		s.Peak = s.Current
	}
	s.Allocated += n
}

func (s *Stat) decrease(n int64) {
	s.Current -= n
	s.Freed += n
}

func (s *Stat) resetPeak()        { s.Peak = s.Current }
func (s *Stat) resetAccumulated() { s.Allocated, s.Freed = 0, 0 }

// statArray is a Stat for all pools, the small pool and the large pool.
type statArray [3]Stat

func (a *statArray) increase(poolIdx int, n int64) {
	a[statAll].increase(n)
	a[poolIdx].increase(n)
}

func (a *statArray) decrease(poolIdx int, n int64) {
	a[statAll].decrease(n)
	a[poolIdx].decrease(n)
}

// deviceStats mirrors PyTorch's DeviceStats.
type deviceStats struct {
	allocation, segment, active, inactiveSplit                     statArray
	allocatedBytes, reservedBytes, activeBytes, inactiveSplitBytes statArray
	requestedBytes                                                 statArray
	numAllocRetries, numOOMs, numSyncAllStreams                    int64
	numDeviceAlloc, numDeviceFree                                  int64
	oversizeAllocations, oversizeSegments                          Stat
	maxSplitSize                                                   int64
}

// arrays lists the stat arrays with their memory_stats key prefixes, in PyTorch's order.
func (s *deviceStats) arrays() []struct {
	name string
	a    *statArray
} {
	return []struct {
		name string
		a    *statArray
	}{
		{"allocation", &s.allocation}, {"segment", &s.segment}, {"active", &s.active},
		{"inactive_split", &s.inactiveSplit}, {"allocated_bytes", &s.allocatedBytes},
		{"reserved_bytes", &s.reservedBytes}, {"active_bytes", &s.activeBytes},
		{"inactive_split_bytes", &s.inactiveSplitBytes}, {"requested_bytes", &s.requestedBytes},
	}
}

func (s *deviceStats) resetPeak() {
	for _, e := range s.arrays() {
		for i := range e.a {
			e.a[i].resetPeak()
		}
	}
	s.oversizeAllocations.resetPeak()
	s.oversizeSegments.resetPeak()
}

func (s *deviceStats) resetAccumulated() {
	for _, e := range s.arrays() {
		for i := range e.a {
			e.a[i].resetAccumulated()
		}
	}
	s.numAllocRetries, s.numOOMs, s.numSyncAllStreams = 0, 0, 0
	s.numDeviceAlloc, s.numDeviceFree = 0, 0
	s.oversizeAllocations.resetAccumulated()
	s.oversizeSegments.resetAccumulated()
}

// flatten returns the stats as torch.cuda.memory_stats() does: nested keys joined by ".".
func (s *deviceStats) flatten() map[string]int64 {
	m := make(map[string]int64, 120)
	put := func(prefix string, st Stat) {
		m[prefix+".current"] = st.Current
		m[prefix+".peak"] = st.Peak
		m[prefix+".allocated"] = st.Allocated
		m[prefix+".freed"] = st.Freed
	}
	for _, e := range s.arrays() {
		for i, n := range statTypeNames {
			put(e.name+"."+n, e.a[i])
		}
	}
	put("oversize_allocations", s.oversizeAllocations)
	put("oversize_segments", s.oversizeSegments)
	m["num_alloc_retries"] = s.numAllocRetries
	m["num_ooms"] = s.numOOMs
	m["num_sync_all_streams"] = s.numSyncAllStreams
	m["num_device_alloc"] = s.numDeviceAlloc
	m["num_device_free"] = s.numDeviceFree
	m["max_split_size"] = s.maxSplitSize
	return m
}

// StatKeys returns every key MemoryStats reports, sorted as torch.cuda.memory_stats()
// orders them.
func StatKeys() []string {
	var s deviceStats
	m := s.flatten()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
