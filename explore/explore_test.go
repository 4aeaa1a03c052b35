package explore

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/experiments/ch2"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
	"memlab.dev/memlab/tensor"
)

func load(t testing.TB, name string) *snapshot.Snapshot {
	t.Helper()
	p, err := reference.Pickle(reference.Workloads211, name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// finalSegments is the snapshot's own state at its end, as the view draws it.
func finalSegments(s *snapshot.Snapshot, dev int) []memplot.Segment {
	var out []memplot.Segment
	for _, seg := range s.DeviceSegments(dev) {
		ms := memplot.Segment{Address: seg.Address}
		for _, b := range seg.Blocks {
			st := memplot.Allocated
			if b.State == snapshot.StateInactive {
				st = memplot.InactiveSplit
				if len(seg.Blocks) == 1 {
					st = memplot.Free
				}
			}
			if n := len(ms.Blocks); n > 0 && ms.Blocks[n-1].State == st && st != memplot.Allocated {
				ms.Blocks[n-1].Size += b.Size
				continue
			}
			ms.Blocks = append(ms.Blocks, memplot.Block{Size: b.Size, State: st})
		}
		out = append(out, ms)
	}
	return out
}

func describe(segs []memplot.Segment) string {
	var b strings.Builder
	for _, s := range segs {
		fmt.Fprintf(&b, "%#x:", s.Address)
		for _, bl := range s.Blocks {
			fmt.Fprintf(&b, " %d/%d", bl.Size, bl.State)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// The state the trace replays to at its last event is the snapshot's own
// final state, block by block, under every recorded setting.
func TestFinalStateMatchesSnapshot(t *testing.T) {
	for _, name := range []string{
		"gpt2_train__default.pickle",
		"gpt2_train__expandable_segments_True.pickle",
		"gpt2_train__max_split_size_mb_128.pickle",
		"gpt2_train__roundup_power2_divisions_4.pickle",
		"resnet_multiscale_train__default.pickle",
	} {
		t.Run(name, func(t *testing.T) {
			s := load(t, name)
			h, err := FromSnapshot("", s)
			if err != nil {
				t.Fatal(err)
			}
			last := h.Len() - 1
			got, err := h.Segments(last)
			if err != nil {
				t.Fatal(err)
			}
			want := finalSegments(s, h.Device)
			for i := range got {
				got[i].Pool = ""
			}
			if g, w := describe(got), describe(want); g != w {
				t.Errorf("final state differs from the snapshot's segments\ngot:\n%s\nwant:\n%s", g, w)
			}
		})
	}
}

// The curve's peaks are the ones PyTorch measured in the recorded run.
func TestPeaksArePyTorchs(t *testing.T) {
	for _, run := range []string{"gpt2_train__default", "gpt2_train__expandable_segments_True", "resnet_multiscale_train__default"} {
		h, err := FromSnapshot("", load(t, run+".pickle"))
		if err != nil {
			t.Fatal(err)
		}
		p, err := reference.File(reference.Workloads211, run+".facts.json")
		if err != nil {
			t.Fatal(err)
		}
		var facts struct {
			Stats map[string]int64 `json:"memory_stats"`
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &facts); err != nil {
			t.Fatal(err)
		}
		var peakA, peakR, peakSplit int64
		for i := 0; i < h.Len(); i++ {
			peakA, peakR, peakSplit = max(peakA, h.Allocated(i)), max(peakR, h.Reserved(i)), max(peakSplit, h.InactiveSplit(i))
		}
		for _, c := range []struct {
			key string
			got int64
		}{{"allocated_bytes.all.peak", peakA}, {"reserved_bytes.all.peak", peakR}, {"inactive_split_bytes.all.peak", peakSplit}} {
			if want := facts.Stats[c.key]; c.got != want {
				t.Errorf("%s: %s %d, PyTorch measured %d", run, c.key, c.got, want)
			}
		}
	}
}

// fragmenting runs 2.3's fragmenting loop and its failing request on a lab
// that records its history, under conf.
func fragmenting(t *testing.T, conf string) *memlab.Lab {
	t.Helper()
	l, err := memlab.Open(memlab.Budget(ch2.Device), memlab.AllocConf(conf))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	l.Allocator().RecordHistory(allocator.HistoryOptions{Enabled: true})
	keep, err := ch2.Fragmenting.Run(l, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tensor.ReleaseAll(keep...) })
	req, err := tensor.Empty(l, tensor.Uint8, ch2.Request)
	if conf == "" && !memlab.IsOutOfMemory(err) {
		t.Fatalf("the 1.5 GiB request after the fragmenting loop: %v, want out of memory", err)
	}
	if err == nil {
		t.Cleanup(func() { req.Release() })
	}
	return l
}

// A lab's history replays to the allocator's own state, and its
// fragmentation peak is 2.3's picture: six segments, each a 496 MiB hole
// beside the 16 MiB tensor that pins it.
func TestLabHistory(t *testing.T) {
	for _, conf := range []string{"", "expandable_segments:True", "max_split_size_mb:256"} {
		l := fragmenting(t, conf)
		h, err := FromLab("", l)
		if err != nil {
			t.Fatal(err)
		}
		got, err := h.Segments(h.Len() - 1)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := describe(got), describe(memlab.Segments(l.Snapshot())); g != w {
			t.Errorf("%q: the replayed final state differs from the allocator's\ngot:\n%s\nwant:\n%s", conf, g, w)
		}
		if conf != "" {
			continue
		}
		peak, err := h.Segments(h.FragmentationPeak())
		if err != nil {
			t.Fatal(err)
		}
		holes := 0
		for _, s := range peak {
			for _, b := range s.Blocks {
				if b.State == memplot.InactiveSplit && b.Size == 496<<20 {
					holes++
				}
			}
		}
		if holes != 6 || len(peak) != 6 {
			t.Errorf("at the fragmentation peak (event %d): %d segments, %d holes of 496 MiB; want 6 and 6\n%s", h.FragmentationPeak(), len(peak), holes, describe(peak))
		}
		if got := h.InactiveSplit(h.FragmentationPeak()); got != 6*496<<20 {
			t.Errorf("inactive split at the peak: %d, want %d", got, 6*496<<20)
		}
	}
}

func TestBadHistories(t *testing.T) {
	if _, err := FromSnapshot("", nil); err == nil {
		t.Error("a nil snapshot: no error")
	}
	l, err := memlab.Open(memlab.Budget(1 << 30))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := FromLab("", l); err == nil || !strings.Contains(err.Error(), "RecordHistory") {
		t.Errorf("a lab without history: %v, want an error naming RecordHistory", err)
	}
	s := load(t, "gpt2_train__default.pickle")
	late := *s
	late.Traces = [][]snapshot.TraceEntry{s.Traces[0][100:]}
	if _, err := FromSnapshot("", &late); err == nil || !strings.Contains(err.Error(), "misses the start") {
		t.Errorf("a trace that starts late: %v, want an error saying it misses the start", err)
	}
	h, err := FromSnapshot("", s)
	if err != nil {
		t.Fatal(err)
	}
	notKept := 1
	for _, f := range h.Frames() {
		if f == notKept {
			notKept++
		}
	}
	if _, err := h.Segments(notKept); err == nil {
		t.Errorf("Segments(%d), not a kept frame: no error", notKept)
	}
	if n := len(h.Frames()); n < MaxFrames || n > MaxFrames+2 {
		t.Errorf("%d frames kept of %d events; want MaxFrames (%d) and the two peaks at most", n, h.Len(), MaxFrames)
	}
}

// The view holds one segment map per kept frame and starts at the static
// frame; no text in its script can end the script early.
func TestHTML(t *testing.T) {
	l := fragmenting(t, "")
	h, err := FromLab("2.3 </script> history", l)
	if err != nil {
		t.Fatal(err)
	}
	at := h.FragmentationPeak()
	page, err := h.HTML(at, "a static frame")
	if err != nil {
		t.Fatal(err)
	}
	frames := h.Frames()
	if n := strings.Count(page, "data:image/png;base64,"); n != len(frames)+1 { // every map (the static one once), the curve
		t.Errorf("%d images in the view; want %d", n, len(frames)+1)
	}
	if want := fmt.Sprintf(`max="%d"`, len(frames)-1); !strings.Contains(page, want) {
		t.Errorf("the slider lacks %s", want)
	}
	if strings.Count(page, "</script>") != 1 {
		t.Errorf("the script is ended more than once")
	}
	if !strings.Contains(page, fmt.Sprintf("event %d of %d", at, h.Len())) {
		t.Errorf("the view does not start at the static frame's event %d", at)
	}
	if _, err := h.HTML(-5, ""); err == nil {
		t.Error("HTML at no frame: no error")
	}
}

// Outside a notebook Show shows the static frame: the map and the curve
// through the figure sink, the caption saying it is a static frame.
func TestShowOutsideNotebook(t *testing.T) {
	l := fragmenting(t, "")
	h, err := FromLab("2.3", l)
	if err != nil {
		t.Fatal(err)
	}
	var figs []string
	prev := memlab.SetFigureSink(func(f memlab.Figure) error { figs = append(figs, f.(*memplot.Figure).Title.Text); return nil })
	defer memlab.SetFigureSink(prev)
	var text string
	prevD := memlab.SetDisplaySink(func(d memlab.Display) error { text += d.Text; return nil })
	defer memlab.SetDisplaySink(prevD)
	Show(h, nil)
	if len(figs) != 2 {
		t.Errorf("Show showed %d figures %q; want the map and the curve", len(figs), figs)
	}
	if !strings.Contains(text, "static frame") || !strings.Contains(text, fmt.Sprint(h.FragmentationPeak())) {
		t.Errorf("Show's caption %q does not say it is a static frame at the peak", text)
	}
}

// jsString's quoting cannot end the string or the script early.
func TestJSString(t *testing.T) {
	got := jsString("a\"b\\c\n</script><!--&\u2028")
	if strings.ContainsAny(got[1:len(got)-1], "<>&\n\u2028") || strings.Contains(got, `a"b`) {
		t.Errorf("jsString left a quote, a tag or a line break: %s", got)
	}
	if want := `"a\"b\\c\n\u003c/script\u003e\u003c!--\u0026\u2028"`; got != want {
		t.Errorf("jsString = %s, want %s", got, want)
	}
}

// A history whose allocator ends holding nothing (empty_cache released every
// segment) still makes a view: the empty frame says there is no segment.
func TestEmptyFrame(t *testing.T) {
	l, err := memlab.Open(memlab.Budget(1 << 30))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Allocator().RecordHistory(allocator.HistoryOptions{Enabled: true})
	x, err := tensor.Empty(l, tensor.Uint8, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.EmptyCache(); err != nil {
		t.Fatal(err)
	}
	h, err := FromLab("", l)
	if err != nil {
		t.Fatal(err)
	}
	if segs, err := h.Segments(h.Len() - 1); err != nil || len(segs) != 0 {
		t.Fatalf("after empty_cache: %d segments, %v; want none", len(segs), err)
	}
	page, err := h.HTML(h.FragmentationPeak(), "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page, "data:image/svg+xml;base64,") {
		t.Error("the view has no frame for the empty state")
	}
}
