package ch4

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"memlab.dev/memlab/device/sim"
	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot/plotdata"
	"memlab.dev/memlab/model"
	"memlab.dev/memlab/pool"
	"memlab.dev/memlab/tensor"
)

// This file is notebook 04's plumbing: what its cells call but do not teach
// (reading values back, counting allocator calls, running one batch, a fresh
// device of a given size). The forward pass itself stays in the notebook's
// cells, and these functions take it as an argument, so that a learner's edit
// of it changes what they measure.

// First returns t's first element (float32).
func First(t *tensor.Tensor) float32 { return memlab.Must(t.Float32s())[0] }

// Values returns t's elements (float32) and releases t.
func Values(t *tensor.Tensor) []float32 {
	v := memlab.Must(t.Float32s())
	memlab.Check(t.Release())
	return v
}

// MaxDiff is the largest elementwise difference between a and b (float32).
func MaxDiff(a, b *tensor.Tensor) float64 {
	x, y := memlab.Must(a.Float32s()), memlab.Must(b.Float32s())
	d := 0.0
	for i := range min(len(x), len(y)) {
		d = math.Max(d, math.Abs(float64(x[i]-y[i])))
	}
	return d
}

// AllocCalls is allocation.all.allocated: requests to the caching allocator.
func AllocCalls(l *memlab.Lab) int64 { return l.MemoryStats()["allocation.all.allocated"] }

// Mallocs is num_device_alloc: the cudaMallocs among them.
func Mallocs(l *memlab.Lab) int64 { return l.MemoryStats()["num_device_alloc"] }

// Median returns the median of ds (0 for none).
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// Percent is 100·(1 − part/whole): the share of whole that part saves
// (negative: part is larger).
func Percent(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * (1 - float64(part)/float64(whole))
}

// noKernels computes nothing: every kernel returns at once, leaving device
// memory as it was. Allocation does not depend on values, so a pass run with
// them makes exactly the allocator calls, and reaches exactly the peaks, that
// it makes with real kernels — at any size, in milliseconds.
type noKernels struct{}

func (noKernels) CopyFromHost(tensor.Ptr, []byte) error { return nil }
func (noKernels) CopyToHost(dst []byte, _ tensor.Ptr) error {
	clear(dst)
	return nil
}
func (noKernels) Fill(tensor.Strided, float64) error                          { return nil }
func (noKernels) Random(tensor.Strided, uint64, bool, float64, float64) error { return nil }
func (noKernels) Copy(_, _ tensor.Strided) error                              { return nil }
func (noKernels) Unary(tensor.UnaryOp, tensor.Strided, tensor.Strided, float64) error {
	return nil
}
func (noKernels) Binary(tensor.BinaryOp, tensor.Strided, tensor.Strided, tensor.Strided) error {
	return nil
}
func (noKernels) Reduce(tensor.ReduceOp, tensor.Strided, tensor.Strided, int) error { return nil }
func (noKernels) Softmax(_, _ tensor.Strided) error                                 { return nil }
func (noKernels) LayerNorm(_, _, _, _ tensor.Strided, _ float64) error              { return nil }
func (noKernels) Matmul(_, _, _ tensor.Strided) error                               { return nil }
func (noKernels) Embedding(_, _, _ tensor.Strided) error                            { return nil }
func (noKernels) Synchronize() error                                                { return nil }

// MemoryOnly makes l, if its device is the simulator, account memory without
// computing: its kernels do nothing, so a pass at BERT-base's size runs in
// milliseconds with the same allocator calls and peaks as with values (the
// tensors hold zeros instead). On a GPU it changes nothing: the kernels run.
// It reports whether the lab is now memory-only.
func MemoryOnly(l *memlab.Lab) bool {
	if l.Device().Kind() != sim.Kind {
		return false
	}
	l.Kernels = noKernels{}
	return true
}

// OnDevice runs pass on a fresh simulated device of capacity bytes (no CUDA
// context; 0: the default device), memory only ([MemoryOnly]), and returns
// what pass returns (a peak), the peak reserved, and the out-of-memory error
// if the pass did not fit.
func OnDevice(capacity int64, pass func(l *memlab.Lab) int64) (peak, reserved int64, err error) {
	l, err := memlab.Open(memlab.SimConfig(sim.Config{Capacity: uint64(capacity), NoContext: capacity > 0}), memlab.AllocConf(""), memlab.NotCurrent())
	if err != nil {
		return 0, 0, fmt.Errorf("ch4: %w", err)
	}
	defer l.Close()
	MemoryOnly(l)
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok && memlab.IsOutOfMemory(e) {
				err = e
				return
			}
			panic(r)
		}
	}()
	peak = pass(l)
	return peak, l.MaxMemoryReserved(), nil
}

// Fits is "fits", or the operation that ran out of memory and what it asked
// for, in the workbook's edition.
func Fits(err error) string {
	if err == nil {
		return lang.Text("fits")
	}
	op, _, _ := strings.Cut(strings.TrimPrefix(err.Error(), "tensor: "), ":")
	_, tried, _ := strings.Cut(err.Error(), "Tried to allocate ")
	tried, _, _ = strings.Cut(tried, ". ")
	return fmt.Sprintf(lang.Text("out of memory in %s, asking for %s"), op, tried)
}

// Generate is the notebook's generation loop: it runs prompts [B][S] and
// decode-1 more tokens with the weights w on l (the KV arena, if it pools,
// from arenas) and returns the peak of each forward pass
// (max_memory_allocated) and the tokens.
type Generate func(l *memlab.Lab, w model.Weights, arenas *pool.TensorPool, prompts [][]int64, decode int) (peaks []int64, tokens [][]int64)

// BatchRun is what [RunBatch] measured: the peak above the weights in each
// forward pass and over all of them, the allocator calls and cudaMallocs.
type BatchRun struct {
	Name           string
	Passes         []int64
	Peak           int64
	Calls, Mallocs int64
	Tokens         [][]int64
}

// RunBatch opens a lab, loads the small model and runs gen on batch prompts
// of seq tokens each, generating decode tokens; name labels the run.
func RunBatch(name string, gen Generate, batch, seq, decode int) (BatchRun, error) {
	l, err := memlab.Open(memlab.AllocConf(""), memlab.NotCurrent())
	if err != nil {
		return BatchRun{}, fmt.Errorf("ch4: %w", err)
	}
	defer l.Close()
	size, err := model.SizeByName("small")
	if err != nil {
		return BatchRun{}, fmt.Errorf("ch4: %w", err)
	}
	cfg := size.Config
	m, err := model.New(l, cfg)
	if err != nil {
		return BatchRun{}, fmt.Errorf("ch4: %w", err)
	}
	defer m.Release()
	arenas, err := pool.NewTensorPool(l, tensor.Float32, []int{2 * cfg.Layers, batch, cfg.Heads, seq + decode, cfg.HeadDim()}, 0)
	if err != nil {
		return BatchRun{}, fmt.Errorf("ch4: %w", err)
	}
	defer arenas.Release()
	reqs, err := model.Workload{Requests: batch, PromptMin: seq, PromptMax: seq, DecodeMin: 1, DecodeMax: 1, Seed: 1}.Make(cfg.Vocab)
	if err != nil {
		return BatchRun{}, fmt.Errorf("ch4: %w", err)
	}
	prompts := make([][]int64, batch)
	for i, r := range reqs {
		prompts[i] = r.Prompt
	}
	weights, calls, mallocs := l.MemoryAllocated(), AllocCalls(l), Mallocs(l)
	r := BatchRun{Name: name}
	peaks, tokens := gen(l, m.Weights(), arenas, prompts, decode)
	for _, p := range peaks {
		r.Passes = append(r.Passes, p-weights)
		r.Peak = max(r.Peak, p-weights)
	}
	r.Calls, r.Mallocs, r.Tokens = AllocCalls(l)-calls, Mallocs(l)-mallocs, tokens
	return r, nil
}

// SameTokens reports whether r generated the tokens o did.
func (r BatchRun) SameTokens(o BatchRun) bool {
	return slices.EqualFunc(r.Tokens, o.Tokens, slices.Equal)
}

// Curve is r's peaks per pass as a plot series.
func (r BatchRun) Curve() plotdata.Series {
	s := plotdata.Series{Name: r.Name}
	for i, p := range r.Passes {
		s.X, s.Y = append(s.X, float64(i)), append(s.Y, p)
	}
	return s
}

// BERTBase is BERT-base's encoder shapes (hidden 768, 12 heads, MLP 3072,
// WordPiece vocabulary, 512 positions) with layers layers: an encoder's
// layers run one after another and keep nothing, so one layer reaches the
// whole pass's peak above the weights (TestBERTBaseOneLayerPeak checks it).
func BERTBase(layers int) model.Config {
	return model.Config{Vocab: 30522, Dim: 768, Heads: 12, Layers: layers, Hidden: 3072, MaxLen: 512, Seed: 1}
}

// Curves are the runs' peaks per pass, one series each.
func Curves(runs []BatchRun) []plotdata.Series {
	var s []plotdata.Series
	for _, r := range runs {
		s = append(s, r.Curve())
	}
	return s
}

// AttentionName is "eager" or "fused", in the workbook's edition.
func AttentionName(fused bool) string {
	if fused {
		return lang.Text("fused")
	}
	return lang.Text("eager")
}

// ScoresToMLP is, for BERT-base at seq tokens, how large one sequence's
// score matrix (heads·seq·seq) is against one MLP activation (seq·3072):
// "0.5×" at 128 tokens, "2.0×" at 512; with fused attention, which never
// holds the matrix, "blocks".
func ScoresToMLP(seq int, fused bool) string {
	if fused {
		return lang.Text("blocks")
	}
	c := BERTBase(1)
	return fmt.Sprintf("%.1f×", float64(c.Heads*seq*seq)/float64(seq*c.Hidden))
}

// NearTwelve is the verdict on the chapter's 12 %: it holds in a measured
// case that saves between 8 % and 16 % (12 % give or take a third); Holds
// if every case does, DoesNotHold if none does, Depends otherwise.
func NearTwelve(saved []float64) memlab.Verdict {
	n := 0
	for _, s := range saved {
		if s >= 8 && s <= 16 {
			n++
		}
	}
	switch {
	case n == len(saved) && n > 0:
		return memlab.Holds
	case n == 0:
		return memlab.DoesNotHold
	}
	return memlab.Depends
}

// Blocks counts the blocks of l's segments (allocated or free) in a
// snapshot, as torch.cuda.memory_snapshot() lists them.
func Blocks(l *memlab.Lab) int {
	n := 0
	for _, s := range l.Snapshot().Segments {
		n += len(s.Blocks)
	}
	return n
}

// LiveOrRecorded labels a measured line: "live" for a run in this process,
// "recorded" for one read from the H200 recordings.
func LiveOrRecorded(recorded bool) string {
	if recorded {
		return lang.Text("recorded")
	}
	return lang.Text("live")
}

// LatencyEvidence is the token-latency figure a verdict on the chapter's
// 5–10 % rests on: on a GPU, the live runs' median (live); on the
// simulator, whose times are its CPU kernels', the recorded large run's
// kv-cache saving against its baseline.
func LatencyEvidence(device string, live float64, rec RecordedRuns) (source string, saved float64) {
	if !strings.HasPrefix(device, sim.Kind) {
		return fmt.Sprintf(lang.Text("live on %s, median of the runs"), device), live
	}
	if large, ok := rec.Size("large"); ok {
		v, _ := large.Result.Compare(model.KVCache, model.Baseline, TokenLatency)
		return fmt.Sprintf(lang.Text("recorded on %s, large model (the simulator's CPU times say nothing of a GPU's)"), large.Result.Device), v
	}
	return lang.Text("live on the simulator"), live
}

// Essence is the verdict on the chapter's essence (shorter lives for
// temporaries, no needless copies) from the chapter mode against the
// baseline: Holds if it lowers both the allocator calls and the peak above
// the weights, PartlyHolds if only the calls, DoesNotHold if neither.
func Essence(chapter, base InferenceRow) memlab.Verdict {
	switch {
	case chapter.AllocCalls < base.AllocCalls && chapter.Working < base.Working:
		return memlab.Holds
	case chapter.AllocCalls < base.AllocCalls:
		return memlab.PartlyHolds
	}
	return memlab.DoesNotHold
}

// Say prints one line, format translated into the workbook's edition (lang's
// catalog) and its arguments as memlab.Labels gives them (labels in the
// edition's words, errors as memlab.ErrorText prints them), as the notebook's
// cells print what is not a Measured line.
func Say(format string, args ...any) {
	fmt.Println(fmt.Sprintf(lang.Text(format), memlab.Labels(lang.Current(), args)...))
}

// SizeName is a model size's name as the edition's "%s model" formats take
// it: "small" in English; in Chinese the catalog's "small model", "小模型",
// which the Chinese formats print without a word of their own (a plain
// "small" is the small pool there, 小块池).
func SizeName(name string) string {
	if w := lang.Text(name + " model"); w != name+" model" {
		return w
	}
	return name
}

// ModeName is a mode's name in the workbook's edition, each part of a
// compound one ("chapter+pooled-scores") looked up in lang's catalog.
func ModeName(m model.Mode) string {
	parts := strings.Split(m.String(), "+")
	for i, p := range parts {
		parts[i] = lang.Text(p)
	}
	return strings.Join(parts, "+")
}

// T is words (a table's headers, a plot's labels) in the workbook's edition.
func T(words ...string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = lang.Text(w)
	}
	return out
}
