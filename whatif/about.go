package whatif

import (
	"fmt"
	"strings"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/snapshot"
)

// About describes what a replay ran on, for the header of its output: the PyTorch
// version the snapshot's keys show, the device size assumed, and the history's
// events, streams and pools.
type About struct {
	// PyTorch is what the snapshot's keys show of the PyTorch that wrote it
	// ([snapshot.Snapshot.VersionHint]; "" when they show nothing).
	PyTorch string `json:"pytorch,omitempty"`
	// TotalMemory is the device size the replay assumed (Options.TotalMemory, or
	// H200Memory).
	TotalMemory int64 `json:"total_memory"`
	// Events counts the trace entries replayed, all devices; Devices the devices
	// with history.
	Events  int `json:"events"`
	Devices int `json:"devices"`
	// Streams counts the distinct streams of the replayed entries.
	Streams int `json:"streams"`
	// Pools lists the private pools (CUDA graphs, torch.cuda.MemPool) the
	// snapshot names, in the segments it holds at the end and in its trace
	// entries' pool ids where it has them; the default pool (0, 0) is not listed.
	Pools [][2]uint64 `json:"pools"`
	// Usable lists, per device whose recorded run ran out of device memory, what its
	// OOMs say the program could reserve there; the replay's device holds no more
	// (UsableMemory.Held).
	Usable []UsableMemory `json:"usable,omitempty"`
}

// Describe returns what a replay of s under opts runs on (see [About]).
func Describe(s *snapshot.Snapshot, opts Options) About {
	ab := describe(s, opts)
	for d, tr := range s.Traces {
		if len(tr) == 0 {
			continue
		}
		if u := usableOn(s, d); u.bounds(ab.TotalMemory) {
			ab.Usable = append(ab.Usable, *u)
		}
	}
	return ab
}

// describe is Describe without the usable memory, which Replay has from its histories.
func describe(s *snapshot.Snapshot, opts Options) About {
	ab := About{PyTorch: s.VersionHint(), TotalMemory: opts.TotalMemory, Pools: [][2]uint64{}}
	if ab.TotalMemory <= 0 {
		ab.TotalMemory = H200Memory
	}
	streams := map[uint64]bool{}
	pools := map[[2]uint64]bool{}
	addPool := func(id [2]uint64) {
		if id != ([2]uint64{}) && !pools[id] {
			pools[id] = true
			ab.Pools = append(ab.Pools, id)
		}
	}
	for _, seg := range s.Segments {
		addPool(seg.PoolID)
	}
	for _, tr := range s.Traces {
		if len(tr) == 0 {
			continue
		}
		ab.Devices++
		ab.Events += len(tr)
		for i := range tr {
			streams[tr[i].Stream] = true
			if tr[i].HasPool() {
				addPool(tr[i].Pool())
			}
		}
	}
	ab.Streams = len(streams)
	return ab
}

// String is the header line: "PyTorch 2.10 or later · device 139.8 GiB (H200)
// assumed · 37816 events · 1 stream · no private pool".
func (a About) String() string {
	var parts []string
	if a.PyTorch != "" {
		parts = append(parts, "PyTorch "+a.PyTorch)
	} else {
		parts = append(parts, "PyTorch version not shown")
	}
	dev := "device " + allocator.FormatSize(a.TotalMemory)
	if a.TotalMemory == H200Memory {
		dev += " (H200)"
	}
	parts = append(parts, dev+" assumed")
	for _, u := range a.Usable {
		parts = append(parts, u.String())
	}
	ev := plural(a.Events, "event", "events")
	if a.Devices > 1 {
		ev += fmt.Sprintf(" on %d devices", a.Devices)
	}
	parts = append(parts, ev, plural(a.Streams, "stream", "streams"))
	switch len(a.Pools) {
	case 0:
		parts = append(parts, "no private pool")
	default:
		ids := make([]string, len(a.Pools))
		for i, p := range a.Pools {
			ids[i] = fmt.Sprintf("(%d, %d)", p[0], p[1])
		}
		parts = append(parts, plural(len(a.Pools), "private pool", "private pools")+" "+strings.Join(ids, " "))
	}
	return strings.Join(parts, " · ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
