package explore

import "testing"

// BenchmarkView is what notebook 05's history cell costs beyond loading the
// snapshot: the replay into per-event states, then the view (every kept
// frame's segment map and the curve, encoded). A slider step costs nothing on
// the Go side: the browser swaps in a frame the view already holds.
func BenchmarkView(b *testing.B) {
	s := load(b, "gpt2_train__default.pickle")
	for b.Loop() {
		h, err := FromSnapshot("GPT-2", s)
		if err != nil {
			b.Fatal(err)
		}
		page, err := h.HTML(h.FragmentationPeak(), "")
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(page))/(1<<20), "MiB/view")
		b.ReportMetric(float64(len(h.Frames())), "frames")
	}
}

// BenchmarkReplay is the replay alone.
func BenchmarkReplay(b *testing.B) {
	s := load(b, "gpt2_train__default.pickle")
	for b.Loop() {
		if _, err := FromSnapshot("GPT-2", s); err != nil {
			b.Fatal(err)
		}
	}
}
