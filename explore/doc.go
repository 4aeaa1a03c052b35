// Package explore makes an allocator history explorable: a slider over its
// events shows the segments and blocks after each event (a segment map, as
// [memplot.SegmentMap] draws it) beside the memory curve (allocated and
// reserved bytes over the events) with a cursor at the event.
//
// A history is a PyTorch memory snapshot's trace ([FromSnapshot]) or what a
// memlab lab's allocator recorded ([FromLab]); [Show] displays it in a
// notebook cell in one line:
//
//	explore.Show(explore.FromSnapshot("GPT-2 training", s))
//
// The view is drawn when the cell runs — the states of up to [MaxFrames]
// events, sampled evenly with the peaks kept — and moves in the browser
// alone, so the cell ends at once and the slider keeps working after it. A
// GoNB widget would call back into the cell's program, which GoNB runs only
// while the cell runs: the cell would have to block (and a headless run,
// with no front end to answer, would hang). Where no script runs it shows a
// static frame, the fragmentation peak, with a caption that says so.
package explore
