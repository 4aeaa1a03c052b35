package memplot

import "memlab.dev/memlab/memplot/plotdata"

// The data figures are drawn from, defined in package plotdata (which links no
// plotting library, so that package memlab can record them): see there.
type (
	Sample     = plotdata.Sample
	Mark       = plotdata.Mark
	Timeline   = plotdata.Timeline
	Series     = plotdata.Series
	BarSeries  = plotdata.BarSeries
	Gauge      = plotdata.Gauge
	FragSample = plotdata.FragSample
	BlockState = plotdata.BlockState
	Block      = plotdata.Block
	Segment    = plotdata.Segment
	Pair       = plotdata.Pair
	PairChart  = plotdata.PairChart
)

// Block states, as PyTorch's memory_viz allocator-state view tells them apart
// (see plotdata.Allocated).
const (
	Allocated     = plotdata.Allocated
	InactiveSplit = plotdata.InactiveSplit
	Free          = plotdata.Free
)

// PerStep is a staircase of bytes after steps 1, 2, …: ys[i] at step i+1.
func PerStep(name string, ys []int64) Series { return plotdata.PerStep(name, ys) }
