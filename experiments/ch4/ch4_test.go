package ch4_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/experiments/ch4"
	"memlab.dev/memlab/experiments/ch4/ch4plot"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/model"
	"memlab.dev/memlab/reference"
)

var setup = ch4.Setup{Device: "sim"}

func TestKVStrategies(t *testing.T) {
	w := ch4.KVWorkload{Sequences: 10, Concurrent: 3, MinLen: 3, MaxLen: 40, Heads: 2, HeadDim: 8, BlockSize: 8, Seed: 2}
	r, err := ch4.KVStrategies(setup, w)
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := r.Row("torch.cat")
	pre, _ := r.Row("preallocated")
	paged, ok := r.Row("paged")
	if !ok || len(r.Rows) != 3 {
		t.Fatalf("rows %v", r.Rows)
	}
	if paged.AllocCalls != 1 {
		t.Errorf("paged: %d allocator calls, want 1 (the arena)", paged.AllocCalls)
	}
	if pre.AllocCalls != int64(w.Sequences) {
		t.Errorf("preallocated: %d allocator calls, want one per sequence (%d)", pre.AllocCalls, w.Sequences)
	}
	if cat.AllocCalls <= pre.AllocCalls*int64(w.MinLen) {
		t.Errorf("cat: %d allocator calls, want two per token", cat.AllocCalls)
	}
	if paged.MaxWaste > r.PagedMaxWaste || pre.MaxWaste <= paged.MaxWaste {
		t.Errorf("unused slots: paged %d (bound %d), preallocated %d", paged.MaxWaste, r.PagedMaxWaste, pre.MaxWaste)
	}
	if paged.PeakHeld >= pre.PeakHeld || paged.PeakHeld < r.PeakUseful || cat.PeakHeld != r.PeakUseful {
		t.Errorf("peak held: paged %d, preallocated %d, cat %d, useful %d", paged.PeakHeld, pre.PeakHeld, cat.PeakHeld, r.PeakUseful)
	}
	if _, err := ch4plot.KV(r); err != nil {
		t.Error(err)
	}
}

func TestInference(t *testing.T) {
	// The small size, not tiny: at tiny sizes the KV cache preallocated for
	// the longest request outweighs what the other optimisations save.
	r, err := ch4.Inference(setup, "small")
	if err != nil {
		t.Fatal(err)
	}
	if !(r.MaxLogitDiff <= 1e-4) { // NaN fails too
		t.Errorf("logits differ from the baseline's by %g", r.MaxLogitDiff)
	}
	base, _ := r.Row(model.Baseline)
	opt, _ := r.Row(model.Optimised)
	if opt.Working >= base.Working {
		t.Errorf("optimised peak above weights %d ≥ baseline %d", opt.Working, base.Working)
	}
	if opt.AllocCalls >= base.AllocCalls {
		t.Errorf("optimised %d allocator calls ≥ baseline %d", opt.AllocCalls, base.AllocCalls)
	}
	inPlace, _ := r.Row(model.InPlace)
	if inPlace.Working > base.Working || inPlace.AllocCalls >= base.AllocCalls {
		t.Errorf("in-place: peak %d (baseline %d), %d calls (baseline %d)", inPlace.Working, base.Working, inPlace.AllocCalls, base.AllocCalls)
	}
	// What notebook 04 says about the small size: views alone and the
	// preallocated cache alone raise the peak; in-place adds a saving once the
	// others have moved the peak.
	views, _ := r.Row(model.Views)
	kv, _ := r.Row(model.KVCache)
	rest, _ := r.Row(model.Optimised &^ model.InPlace)
	if views.Working <= base.Working || kv.Working <= base.Working {
		t.Errorf("views %d, kv-cache %d, baseline %d: want both above the baseline", views.Working, kv.Working, base.Working)
	}
	if !(opt.Working < rest.Working && rest.Working < base.Working) {
		t.Errorf("optimised %d, all but in-place %d, baseline %d: want increasing", opt.Working, rest.Working, base.Working)
	}
	for _, row := range r.Rows {
		if row.Tokens != r.Rows[0].Tokens || row.Token <= 0 {
			t.Errorf("%v: %d tokens, median %v", row.Mode, row.Tokens, row.Token)
		}
	}
	for _, f := range []func() (any, error){
		func() (any, error) { return ch4plot.Inference(r) }, func() (any, error) { return ch4plot.Latency(r) }, func() (any, error) { return ch4plot.InferenceCurves(r) },
	} {
		if _, err := f(); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(r.String(), "20–30%") {
		t.Error("the table does not set the course's figures beside the measurements")
	}
	// The chapter's three techniques alone, without memlab's last-logits,
	// raise the peak of the small size: the views pin the QKV projection and
	// the preallocated cache is sized for the longest request.
	chapter, _ := r.Row(model.Chapter)
	if chapter.Working <= base.Working || chapter.AllocCalls >= base.AllocCalls {
		t.Errorf("chapter: peak %d (baseline %d), %d calls (baseline %d); want a higher peak and fewer calls", chapter.Working, base.Working, chapter.AllocCalls, base.AllocCalls)
	}
	claims := r.Claims()
	var chapterClaims int
	for _, c := range claims {
		if c.Mode == model.Chapter && c.Ref == model.Baseline && c.What != ch4.TokenLatency {
			chapterClaims++
		}
		if c.Mode&model.LastLogits != 0 && strings.Contains(c.Claim, "20–30%") {
			t.Errorf("the chapter's claim is compared with %v, which includes memlab's last-logits", c.Mode)
		}
	}
	if chapterClaims != 2 {
		t.Errorf("%d comparisons of the chapter mode with the baseline on memory, want 2 (above weights, total)", chapterClaims)
	}
	// Every mode makes the same forward passes: one per generated token.
	for _, row := range r.Rows {
		if len(row.StepPeak) != row.Tokens {
			t.Errorf("%v: %d pass peaks for %d tokens", row.Mode, len(row.StepPeak), row.Tokens)
		}
		if m := slices.Max(row.StepPeak); m != row.PeakAllocated {
			t.Errorf("%v: largest pass peak %d, peak %d", row.Mode, m, row.PeakAllocated)
		}
	}
	// Pooled attention scores take allocator calls off the chapter's three,
	// and their two buffers, sized for the longest request and kept by the
	// pool, add at most their own bytes to the peak (this model's peak is
	// the logits, not the scores).
	pooled, _ := r.Row(model.Chapter | model.PooledScores)
	cfg := r.Size.Config
	buffers := int64(2 * cfg.Heads * r.Size.Workload.MaxLen() * r.Size.Workload.MaxLen() * 4)
	if pooled.AllocCalls >= chapter.AllocCalls || pooled.Working > chapter.Working+buffers {
		t.Errorf("chapter+pooled-scores: %d calls, peak %d; chapter: %d calls, peak %d; want fewer calls and a peak at most the two %d-byte buffers higher", pooled.AllocCalls, pooled.Working, chapter.AllocCalls, chapter.Working, buffers/2)
	}
	f := r.Findings()
	for _, want := range []string{"chapter = in-place+views+kv-cache", "raises it by 10.9 %", "memlab's own extra, last-logits", "Pooled attention scores (the chapter's 4.4 buffers) added to them (chapter+pooled-scores)"} {
		if !strings.Contains(f, want) {
			t.Errorf("findings lack %q:\n%s", want, f)
		}
	}
}

func TestRecordedRuns(t *testing.T) {
	runs, err := ch4.LoadRecorded()
	if err != nil {
		t.Fatal(err)
	}
	// Notebook 04 and BENCHMARKS.md cite both sizes, recorded on a GPU with
	// every mode the chapter compares.
	for _, size := range []string{"small", "large"} {
		run, ok := runs.Size(size)
		if !ok {
			t.Errorf("no recorded run of the %s size", size)
			continue
		}
		if run.Result.Simulated || !strings.Contains(run.Command, "-device cuda") {
			t.Errorf("%s: recorded on %q by %q, want a GPU", size, run.Result.Device, run.Command)
		}
		// Every mode the chapter compares, except the pooled-scores modes
		// added after these runs were recorded (no GPU since): those the
		// recording must name as missing, not leave blank.
		added := map[model.Mode]bool{model.PooledScores: true, model.Chapter | model.PooledScores: true}
		missing := run.Missing()
		for _, m := range missing {
			if !added[m] {
				t.Errorf("%s: no %v row", size, m)
			}
			if !strings.Contains(run.Note(), m.String()) || !strings.Contains(run.String(), run.Note()) {
				t.Errorf("%s: the recording lacks %v and does not say so: %q", size, m, run.Note())
			}
		}
		if len(missing) > 0 && !strings.Contains(run.Note(), "this recording predates the mode") {
			t.Errorf("%s: note %q", size, run.Note())
		}
		if !strings.Contains(run.String(), "20–30%") || !strings.Contains(run.Result.Findings(), "the chapter says 5–10 %") {
			t.Errorf("%s: the recorded run does not print the course's figures", size)
		}
	}
}

func TestParseRecording(t *testing.T) {
	r, err := ch4.Inference(setup, "tiny", model.Baseline, model.Chapter)
	if err != nil {
		t.Fatal(err)
	}
	rec := ch4.NewRecording("memlab ch4 -size tiny", r)
	data, err := rec.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ch4.ParseRecording(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.String() != rec.String() || back.Result.Findings() != r.Findings() {
		t.Errorf("the recording does not print what it recorded:\n%s\nwant\n%s", back, rec)
	}
	for _, bad := range []struct{ name, json, want string }{
		{"not JSON", `{`, "unexpected end"},
		{"no header", `{"Result": {"Size": {"Name": "tiny"}, "Rows": [{"Mode": "baseline"}]}}`, "header incomplete"},
		{"no rows", `{"Command": "c", "Card": "x", "Date": "2026-12-01T00:00:00Z", "Result": {"Size": {"Name": "tiny"}}}`, "no modes"},
		{"unknown size", `{"Command": "c", "Card": "x", "Date": "2026-12-01T00:00:00Z", "Result": {"Size": {"Name": "huge"}, "Rows": [{"Mode": "baseline"}]}}`, "unknown size"},
		{"unknown mode", `{"Command": "c", "Card": "x", "Date": "2026-12-01T00:00:00Z", "Result": {"Size": {"Name": "tiny"}, "Rows": [{"Mode": "fast"}]}}`, "unknown mode"},
		{"mode twice", `{"Command": "c", "Card": "x", "Date": "2026-12-01T00:00:00Z", "Result": {"Size": {"Name": "tiny"}, "Rows": [{"Mode": "chapter"}, {"Mode": "in-place+views+kv-cache"}]}}`, "twice"},
	} {
		if _, err := ch4.ParseRecording([]byte(bad.json)); err == nil || !strings.Contains(err.Error(), bad.want) || !strings.HasPrefix(err.Error(), "ch4: ParseRecording") {
			t.Errorf("%s: %v, want an error naming %q", bad.name, err, bad.want)
		}
	}
}

// TestKVStrategiesDefault checks what notebook 04 says about the default
// workload: torch.cat growth fragments the caching allocator's cache, the
// paged cache reserves least.
func TestKVStrategiesDefault(t *testing.T) {
	r, err := ch4.KVStrategies(setup, ch4.DefaultKVWorkload)
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := r.Row("torch.cat")
	pre, _ := r.Row("preallocated")
	paged, _ := r.Row("paged")
	if !(cat.PeakReserved > pre.PeakReserved && pre.PeakReserved > paged.PeakReserved) {
		t.Errorf("peak reserved: cat %d, preallocated %d, paged %d; want decreasing", cat.PeakReserved, pre.PeakReserved, paged.PeakReserved)
	}
	if cat.DeviceMallocs <= pre.DeviceMallocs || cat.PeakAllocated <= cat.PeakHeld {
		t.Errorf("cat: %d cudaMallocs (preallocated %d), peak allocated %d, held %d", cat.DeviceMallocs, pre.DeviceMallocs, cat.PeakAllocated, cat.PeakHeld)
	}
	if w := ch4.DefaultKVWorkload; paged.MaxWaste > (w.BlockSize-1)*w.Concurrent {
		t.Errorf("paged: %d unused slots", paged.MaxWaste)
	}
	for _, prefix := range []string{"torch.cat", "paged"} {
		if _, err := ch4plot.KVSegments(r, prefix); err != nil {
			t.Error(err)
		}
	}
	if _, err := ch4plot.KVSegments(r, "nope"); err == nil {
		t.Error("KVSegments of an unknown strategy succeeded")
	}
	var catFree, pagedFree int64 // free bytes in large-pool segments at the peak step
	for _, c := range []struct {
		row  ch4.KVRow
		free *int64
	}{{cat, &catFree}, {paged, &pagedFree}} {
		for _, seg := range c.row.Segments {
			for _, b := range seg.Blocks {
				if seg.Pool == "large" && b.State != memplot.Allocated {
					*c.free += b.Size
				}
			}
		}
	}
	if catFree == 0 || pagedFree != 0 {
		t.Errorf("free large-pool bytes at the peak step: cat %d, paged %d; want some and none", catFree, pagedFree)
	}
}

// TestBenchmarksQuoteRecorded checks that BENCHMARKS.md quotes each recorded
// GPU run as the program prints it, so that its figures cannot drift from
// the files the notebook prints.
func TestBenchmarksQuoteRecorded(t *testing.T) {
	root, err := reference.Root()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := ch4.LoadRecorded()
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range runs {
		if !strings.Contains(string(doc), run.String()+"\n"+run.Result.Findings()) {
			t.Errorf("BENCHMARKS.md does not quote the recorded run %q as `memlab ch4 -recorded` prints it", run.Header())
		}
	}
}

// TestFindingsInChinese: in the Chinese edition (MEMLAB_LANG=zh-CN, as the
// notebook's Chinese edition sets it) every sentence of the notes is looked
// up in lang's catalog; none is left in English.
func TestFindingsInChinese(t *testing.T) {
	sim, err := ch4.Inference(setup, "tiny", model.Baseline, model.KVCache, model.Chapter)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := ch4.LoadRecorded()
	if err != nil {
		t.Fatal(err)
	}
	results := []ch4.InferenceResult{sim}
	for _, size := range []string{"small", "large"} {
		if run, ok := runs.Size(size); ok {
			results = append(results, run.Result)
		}
	}
	t.Setenv("MEMLAB_LANG", "zh-CN")
	var all string
	for _, r := range results {
		all += r.Findings()
	}
	for _, english := range []string{"Measured", "peak is", "above the weights", "allocator calls", "chapter says", "faster", "during the workload", "simulated device these", " alone ", "lowers it", "raises it", "unchanged", "logits equal"} {
		if strings.Contains(all, english) {
			t.Errorf("the Chinese notes hold %q:\n%s", english, all)
		}
	}
	for _, zh := range []string{"实测（微型模型", "单独使用 视图", "教材三招 = 原地+视图+kv-cache", "教材说能降 20-30 %", "教材说快 5-10 %", "教材说原地操作在 BERT 类推理上能省 12 %", "只有在 GPU 上运行才能检验", "工作负载期间的 cudaMalloc 次数", "没有任何模式调用 cudaMalloc"} {
		if !strings.Contains(all, zh) {
			t.Errorf("the Chinese notes lack %q:\n%s", zh, all)
		}
	}
}

// TestTablesSplitChapterFromExtras checks that Table holds exactly the rows
// the chapter asks for (baseline, each technique alone, the three together)
// and ExtrasTable the rest, labelled as memlab's, on the recorded H200 runs.
func TestTablesSplitChapterFromExtras(t *testing.T) {
	runs, err := ch4.LoadRecorded()
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range runs {
		modes := func(tab *memlab.Table) []string {
			var names []string
			for _, r := range tab.Rows {
				name := strings.ReplaceAll(r[0], " ", "") // "views + kv-cache" in the table
				if _, err := model.ParseMode(name); err != nil {
					t.Errorf("%s: a row of mode %q: %v", run.Result.Size.Name, r[0], err)
				}
				names = append(names, name)
			}
			return names
		}
		chapter, extras := run.Result.Table(), run.Result.ExtrasTable()
		if got, want := modes(chapter), []string{"baseline", "in-place", "views", "kv-cache", "chapter"}; !slices.Equal(got, want) {
			t.Errorf("%s: Table rows %v, want %v", run.Result.Size.Name, got, want)
		}
		got := modes(extras)
		for _, m := range got {
			if slices.Contains([]string{"baseline", "in-place", "views", "kv-cache", "chapter"}, m) {
				t.Errorf("%s: ExtrasTable has the chapter's row %s", run.Result.Size.Name, m)
			}
		}
		if len(got) == 0 || !strings.Contains(extras.Caption, "memlab's own extras") {
			t.Errorf("%s: ExtrasTable rows %v, caption %q", run.Result.Size.Name, got, extras.Caption)
		}
	}
}

// TestSimulatedMatchesRecordedSmall runs the small size on the simulated
// device in every mode of the H200 recording and checks the bytes and counts
// against it: the recorded runs (quoted by notebook 04 and BENCHMARKS.md)
// still describe what the modes compute, and allocation decisions do not
// depend on the device.
func TestSimulatedMatchesRecordedSmall(t *testing.T) {
	runs, err := ch4.LoadRecorded()
	if err != nil {
		t.Fatal(err)
	}
	rec, ok := runs.Size("small")
	if !ok {
		t.Fatal("no recorded small run")
	}
	var modes []model.Mode
	for _, row := range rec.Result.Rows {
		modes = append(modes, row.Mode)
	}
	r, err := ch4.Inference(setup, "small", modes...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range rec.Result.Rows {
		got, ok := r.Row(want.Mode)
		if !ok {
			t.Fatalf("no %v row", want.Mode)
		}
		if got.PeakAllocated != want.PeakAllocated || got.PeakReserved != want.PeakReserved || got.AllocCalls != want.AllocCalls ||
			got.DeviceMallocs != want.DeviceMallocs || !slices.Equal(got.StepPeak, want.StepPeak) {
			t.Errorf("%v: simulated peak %d, reserved %d, %d calls, %d cudaMalloc; the H200 recorded %d, %d, %d, %d (per-pass peaks equal: %v)",
				want.Mode, got.PeakAllocated, got.PeakReserved, got.AllocCalls, got.DeviceMallocs,
				want.PeakAllocated, want.PeakReserved, want.AllocCalls, want.DeviceMallocs, slices.Equal(got.StepPeak, want.StepPeak))
		}
	}
}
