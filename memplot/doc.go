// Package memplot draws the pictures of GPU memory that the memlab notebooks
// show: memory curves (allocated, reserved and driver-used bytes over events or
// time, with labelled phases), segment maps (each cached segment a bar, its
// blocks coloured allocated, inactive-split or free, as PyTorch's memory_viz
// allocator-state view draws them), the fragmentation gauge (largest free block
// against total free bytes) and grouped bar comparisons of variants.
//
// Every constructor returns a [*Figure]: a gonum/plot [plot.Plot] with a size.
// [Figure.Show] displays it inline in a GoNB notebook and writes a PNG file
// elsewhere; [Figure.Save] writes PNG, SVG or PDF by file extension.
//
// memplot knows nothing about allocators: it draws plain values ([Sample],
// [Segment], [Gauge], [BarSeries]), defined in package plotdata so that
// package memlab can record them without linking gonum/plot. memlab's
// recordings are drawn by passing them here, and shown with memlab.Show:
//
//	memlab.Show(memplot.Curve("…", steps))                 // a Recorder or Steps: [Curve], [AllocatorCurve]
//	memlab.Show(memplot.SegmentMap("…", l.Segments()))      // the lab's segments now
//	memlab.Show(memplot.FragmentationCurve("…", "", rec.Gauges()))
//	memlab.Show(memplot.Bars("…", "KiB", vs.Exprs, vs.Bars()...))
package memplot
