package explore

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"strings"
	"sync"

	"github.com/janpfeifer/gonb/gonbui"
	"gonum.org/v1/plot/vg"

	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/snapshot"
)

// FromLab is the history the lab's allocator recorded, as [FromSnapshot] reads
// it. Recording must have been switched on before the workload allocated:
// l.Allocator().RecordHistory(allocator.HistoryOptions{Enabled: true}), as
// torch.cuda.memory._record_memory_history() in PyTorch.
func FromLab(title string, l *memlab.Lab) (*History, error) {
	if l == nil {
		return nil, errors.New("explore: nil lab")
	}
	s := l.Snapshot()
	if len(s.Trace) == 0 {
		return nil, errors.New("explore: the lab's allocator recorded no history: call l.Allocator().RecordHistory(allocator.HistoryOptions{Enabled: true}) before the workload")
	}
	return FromSnapshot(title, snapshot.FromAllocator(s))
}

// Sizes of the two pictures, side by side in a notebook.
const (
	mapWidth    = 6 * vg.Inch
	curveWidth  = 6 * vg.Inch
	curveHeight = 3.2 * vg.Inch
	// mapMaxHeight bounds the segment map's height.
	mapMaxHeight = 8.5 * vg.Inch
)

// Map draws the segments after event i (one of [History.Frames]).
func (h *History) Map(i int) (*memplot.Figure, error) {
	segs, err := h.Segments(i)
	if err != nil {
		return nil, err
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("explore: no segments after event %d: the allocator holds no memory there", i)
	}
	f, err := memplot.SegmentMap(fmt.Sprintf(lang.Text("segments after event %d"), i), segs)
	if err != nil {
		return nil, fmt.Errorf("explore: %w", err)
	}
	f.Width = mapWidth
	// At most as tall as a screen, so that the slider, the curve and the map
	// are seen together: forty segments get rows of a fifth of an inch.
	f.Height = min(f.Height, mapMaxHeight)
	return f, nil
}

// Curve draws allocated and reserved memory over the events, with a dashed
// line at event at (−1: none).
func (h *History) Curve(at int) (*memplot.Figure, error) {
	tl := h.Timeline()
	if at >= 0 {
		tl.Marks = append(tl.Marks, memplot.Mark{X: float64(at), Label: fmt.Sprintf("event %d", at)})
	}
	title := h.Title
	if title == "" {
		title = "allocator history"
	}
	f, err := memplot.MemoryCurve(title, tl)
	if err != nil {
		return nil, fmt.Errorf("explore: %w", err)
	}
	f.Width, f.Height = curveWidth, curveHeight
	return f, nil
}

// Describe says what event i did and the memory after it, in one line.
func (h *History) Describe(i int) string {
	e := h.trace[i]
	what := e.Action.String()
	switch e.Action {
	case snapshot.ActionAlloc, snapshot.ActionFreeRequested, snapshot.ActionFreeCompleted,
		snapshot.ActionSegmentAlloc, snapshot.ActionSegmentFree, snapshot.ActionSegmentMap, snapshot.ActionSegmentUnmap, snapshot.ActionOOM:
		what += " " + memlab.FormatBytes(e.Size)
	}
	return fmt.Sprintf(lang.Text("event %d of %d: %s; allocated %s, reserved %s, inactive split %s"),
		i, h.Len(), what, memlab.FormatBytes(h.Allocated(i)), memlab.FormatBytes(h.Reserved(i)), memlab.FormatBytes(h.InactiveSplit(i)))
}

// Show displays a history, taking its constructor's results directly:
// explore.Show(explore.FromSnapshot(title, s)). In a notebook it is an explorable view: a slider
// over the kept events ([History.Frames]) shows the segment map after each,
// beside the memory curve with a cursor at that event. The view is drawn
// once, when the cell runs, and moves in the browser alone, so the cell ends
// at once and the slider works after it. Where no script runs (a notebook
// rendered to a page, or a run without Jupyter) it shows a static frame: the
// fragmentation peak, with a caption saying so.
func Show(h *History, err error) {
	memlab.Check(err)
	if h == nil {
		panic("explore: Show(nil history)")
	}
	h.Show()
}

// Show displays the history; see the function [Show].
func (h *History) Show() {
	at := h.FragmentationPeak()
	caption := fmt.Sprintf(lang.Text("A static frame of the slider over this history's %d events: the state after event %d, the fragmentation peak (the most memory free in segments that also hold live blocks)."), h.Len(), at)
	if h.InactiveSplit(at) == 0 {
		caption = fmt.Sprintf(lang.Text("A static frame of the slider over this history's %d events: the state after event %d, the reserved peak (no memory is ever free in a segment that also holds live blocks)."), h.Len(), at)
	}
	if !gonbui.IsNotebook {
		memlab.Show(h.Map(at))
		memlab.Show(h.Curve(at))
		memlab.ShowText(memlab.WrapText(caption+"\n"+h.Describe(at)) + "\n")
		return
	}
	page, err := h.HTML(at, caption)
	memlab.Check(err)
	gonbui.DisplayHTML(page)
	gonbui.Sync()
}

// HTML is the explorable view as one HTML fragment, its script included:
// the static frame at event at with its caption, which the script turns into
// the slider.
func (h *History) HTML(at int, caption string) (string, error) {
	frames := h.Frames()
	start := -1
	for k, ev := range frames {
		if ev == at {
			start = k
		}
	}
	if start < 0 {
		return "", fmt.Errorf("explore: event %d is not a kept frame", at)
	}
	curve, err := h.Curve(-1)
	if err != nil {
		return "", err
	}
	box, err := curve.DataBox()
	if err != nil {
		return "", err
	}
	curvePNG, err := curve.PNG()
	if err != nil {
		return "", err
	}
	maps := make([]string, len(frames))
	errs := make([]error, len(frames))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for k, ev := range frames {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if segs, _ := h.Segments(ev); len(segs) == 0 {
				maps[k] = emptyMap(ev)
				return
			}
			f, err := h.Map(ev)
			if err == nil {
				var png []byte
				if png, err = f.PNG(); err == nil {
					png, err = smallPNG(png)
				}
				if err == nil {
					maps[k] = "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
				}
			}
			errs[k] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	var b strings.Builder
	id := viewID()
	fmt.Fprintf(&b, `<div class="memlab-explore" id="%s" style="font-size:13px">`, id)
	fmt.Fprintf(&b, `<div class="memlab-explore-controls" style="display:none;margin:6px 0"><input class="memlab-explore-slider" type="range" min="0" max="%d" value="%d" style="width:560px;vertical-align:middle"> </div>`, len(frames)-1, start)
	fmt.Fprintf(&b, `<div class="memlab-explore-label" style="font-family:monospace">%s</div>`, html.EscapeString(h.Describe(at)))
	fmt.Fprintf(&b, `<div class="memlab-explore-caption" style="font-style:italic">%s</div>`, html.EscapeString(caption))
	b.WriteString(`<div style="display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start">`)
	fmt.Fprintf(&b, `<div style="position:relative;flex:none"><img class="memlab-explore-curve" alt="memory curve" src="data:image/png;base64,%s" style="display:block;width:%.0fpx">`,
		base64.StdEncoding.EncodeToString(curvePNG), float64(curve.Width.Dots(96)))
	fmt.Fprintf(&b, `<div class="memlab-explore-cursor" style="position:absolute;left:%.3f%%;top:%.3f%%;height:%.3f%%;border-left:2px solid #d62728"></div></div>`,
		100*box.X(float64(at)), 100*box.Top, 100*(box.Bottom-box.Top))
	fmt.Fprintf(&b, `<img class="memlab-explore-map" alt="segment map" src="%s" style="display:block;flex:none;width:%.0fpx">`, maps[start], float64(mapWidth.Dots(96)))
	b.WriteString(`</div>`)
	// The script finds its view by its id, so that two views in one page
	// never mix.
	b.WriteString(`<script>(function(){`)
	fmt.Fprintf(&b, `var v=document.getElementById(%s);if(!v)return;`, jsString(id))
	// The static frame's map is in the page once: the script takes it from
	// the image.
	inPage := maps[start]
	maps[start] = ""
	fmt.Fprintf(&b, `var maps=[%s];`, quoteAll(maps))
	maps[start] = inPage
	xs := make([]string, len(frames))
	labels := make([]string, len(frames))
	for k, ev := range frames {
		xs[k] = fmt.Sprintf("%.3f", 100*box.X(float64(ev)))
		labels[k] = h.Describe(ev)
	}
	fmt.Fprintf(&b, `var xs=[%s];var labels=[%s];`, strings.Join(xs, ","), quoteAll(labels))
	moving := fmt.Sprintf(lang.Text("Move the slider through %d of the %d events (the peaks and out-of-memory events among them): the segment map shows the segments after the event, and the red line marks it on the memory curve."), len(frames), h.Len())
	if len(frames) == h.Len() {
		moving = fmt.Sprintf(lang.Text("Move the slider through the %d events: the segment map shows the segments after the event, and the red line marks it on the memory curve."), h.Len())
	}
	fmt.Fprintf(&b, `var moving=%s;`, jsString(moving))
	b.WriteString(`var q=function(c){return v.querySelector('.memlab-explore-'+c)};`)
	b.WriteString(`var sl=q('slider'),img=q('map'),cur=q('cursor'),lab=q('label');`)
	fmt.Fprintf(&b, `maps[%d]=img.src;`, start)
	b.WriteString(`q('controls').style.display='block';q('caption').textContent=moving;`)
	b.WriteString(`sl.addEventListener('input',function(){var k=+sl.value;img.src=maps[k];cur.style.left=xs[k]+'%';lab.textContent=labels[k];});`)
	b.WriteString(`})();</script></div>`)
	return b.String(), nil
}

// emptyMap is the frame of an event after which the allocator holds no
// segment (an empty_cache that released them all): a line of text, as an
// SVG image.
func emptyMap(event int) string {
	svg := fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="576" height="60"><text x="10" y="35" font-family="serif" font-size="16">%s</text></svg>`,
		html.EscapeString(fmt.Sprintf(lang.Text("no segments after event %d: the allocator holds no memory"), event)))
	return "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(svg))
}

// viewID is a page-unique id for a view: random, since views made by
// different cell runs (different processes) share one page.
func viewID() string {
	var r [8]byte
	rand.Read(r[:])
	return "memlab-explore-" + hex.EncodeToString(r[:])
}

// quoteAll writes strings as a JavaScript array's items.
func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = jsString(s)
	}
	return strings.Join(q, ",")
}

// jsString quotes s for a script inside HTML: no quote, backslash, line break
// or "</" can end the string or the script early.
func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '<', '>', '&', '\r', '\u2028', '\u2029':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
