// Package plotdata holds the data memlab's figures are drawn from — memory
// timelines, series, bar values, segment maps, fragmentation gauges — without
// drawing them: package memlab records them with no plotting library linked
// (so a notebook cell that draws nothing builds quickly), and package memplot,
// which names every type here under the same name, draws them.
package plotdata

import "fmt"

// Sample is the memory state at one point of a timeline, in bytes.
type Sample struct {
	// X is where the sample lies on the x axis: an event index or a time.
	X float64
	// Allocated is the allocator's memory_allocated: bytes in live blocks.
	Allocated int64
	// Reserved is memory_reserved: bytes in segments the allocator holds.
	Reserved int64
	// DriverUsed is what the driver (and nvidia-smi) counts as used on the
	// device: total − free from cudaMemGetInfo. Negative means unknown.
	DriverUsed int64
}

// Mark labels a point of a timeline, such as the start of a phase.
type Mark struct {
	X     float64
	Label string
}

// Timeline is a recorded sequence of memory samples with phase marks.
type Timeline struct {
	Samples []Sample
	Marks   []Mark
	// XLabel names the x axis ("event", "time (ms)"); empty means "event".
	XLabel string
	// Discrete says the samples are states after discrete steps at X = 0, 1,
	// 2, …: each is drawn as a flat segment centred on its X. Otherwise each
	// sample holds from its X until the next one's (a change at an event).
	Discrete bool
	// Labels, when set, name the samples at X = 0, 1, 2, … (the steps of an
	// experiment): the x axis shows them instead of numbers.
	Labels []string
}

// Series is one named line of memplot.Lines: Y bytes at X.
type Series struct {
	Name string
	X    []float64
	Y    []int64
	// Step draws the series as a staircase of flat segments, each centred on
	// its X and reaching halfway to its neighbours: for states after discrete
	// steps, such as memory after each op.
	Step bool
}

// PerStep is a staircase of bytes after steps 1, 2, …: ys[i] at step i+1.
func PerStep(name string, ys []int64) Series {
	s := Series{Name: name, Y: ys, Step: true}
	for i := range ys {
		s.X = append(s.X, float64(i+1))
	}
	return s
}

// BarSeries is one variant of a grouped bar chart: one value per group.
type BarSeries struct {
	Name   string
	Values []float64
}

// Gauge is the fragmentation state of one variant or moment: the largest free
// block the allocator could hand out without a new device allocation, and all
// free bytes cached in its segments.
type Gauge struct {
	Label       string
	LargestFree int64
	TotalFree   int64
}

// FragSample is the fragmentation gauge at one point of a run.
type FragSample struct {
	X           float64
	Label       string // shown on the x axis when every sample has one
	LargestFree int64
	TotalFree   int64
}

// BlockState is what a block of a segment holds, for colouring a segment map.
type BlockState uint8

// Block states, as PyTorch's memory_viz allocator-state view tells them apart.
const (
	// Allocated: a live tensor's block (snapshot state "active_allocated").
	Allocated BlockState = iota
	// InactiveSplit: a free block in a segment that also holds allocated
	// blocks. EmptyCache cannot release it; it is what fragmentation is made of.
	InactiveSplit
	// Free: a free block that is a whole segment; EmptyCache releases it.
	Free
)

// String returns the state's legend name.
func (s BlockState) String() string {
	switch s {
	case Allocated:
		return "allocated"
	case InactiveSplit:
		return "inactive split (free, pinned)"
	case Free:
		return "free segment (releasable)"
	}
	return fmt.Sprintf("BlockState(%d)", uint8(s))
}

// Block is one piece of a segment, in address order.
type Block struct {
	Size  int64
	State BlockState
}

// Segment is one device allocation held by the caching allocator, cut into blocks.
type Segment struct {
	Address uint64
	// Pool is "large" or "small" (PyTorch's two pools); it is shown in the label.
	Pool   string
	Blocks []Block
}

// Size is the sum of the segment's block sizes.
func (s Segment) Size() int64 {
	var n int64
	for _, b := range s.Blocks {
		n += b.Size
	}
	return n
}

// Pair is two byte series of one variant over a shared x axis, such as the
// reserved and allocated memory of one replay.
type Pair struct {
	Name string
	X    []float64
	// Solid and Dashed are the two series, each as long as X.
	Solid, Dashed []int64
}

// PairChart is a figure of [Pair]s: several runs, each with two curves over
// one x axis, drawn by memplot.Compare.
type PairChart struct {
	Title  string
	XLabel string
	// Solid and Dashed name what the solid and the dashed curves are
	// ("reserved", "allocated").
	Solid, Dashed string
	Pairs         []Pair
}
