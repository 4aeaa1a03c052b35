package ch4

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot/plotdata"
	"memlab.dev/memlab/pool"
	"memlab.dev/memlab/tensor"
)

// KVWorkload is a stream of sequences decoded together, for [KVStrategies]:
// up to Concurrent at a time, each started when another finishes, each
// growing one token per step to a length drawn from [MinLen, MaxLen].
type KVWorkload struct {
	Sequences, Concurrent int
	MinLen, MaxLen        int
	Heads, HeadDim        int
	BlockSize             int // of the paged cache
	Seed                  uint64
}

// DefaultKVWorkload is small enough for the simulated device's CPU kernels.
var DefaultKVWorkload = KVWorkload{Sequences: 16, Concurrent: 4, MinLen: 16, MaxLen: 320, Heads: 8, HeadDim: 128, BlockSize: 16, Seed: 4}

// KVRow is one strategy of [KVStrategies].
type KVRow struct {
	Strategy                  string
	AllocCalls, DeviceMallocs int64
	// PeakAllocated is memory_allocated's peak above the start;
	// PeakReserved is memory_reserved's peak.
	PeakAllocated, PeakReserved int64
	// PeakHeld is the most bytes set aside for keys and values at once:
	// the allocated cache tensors, or for the paged cache the blocks in use.
	PeakHeld int64
	// MaxWaste is the most token slots held but unused at once: the
	// unfilled tails of the caches (internal fragmentation). External
	// fragmentation is none inside the paged arena, by construction; for the
	// other two it is in the caching allocator, as reserved memory above
	// allocated.
	MaxWaste int
	Median   time.Duration // median time of one decoding step (every live sequence appends a token)
	Held     []int64       // bytes held for keys and values after each step
	// Segments is the caching allocator's state after the step at which
	// allocated memory peaked, for a segment map; SegmentsReserved is
	// memory_reserved then.
	Segments         []plotdata.Segment
	SegmentsReserved int64
}

// KVResult is what [KVStrategies] measured.
type KVResult struct {
	Workload      KVWorkload
	TokenBytes    int64   // bytes of one token's keys and values
	PeakUseful    int64   // the most bytes of keys and values live at once
	Useful        []int64 // bytes of live keys and values after each step
	ArenaBytes    int64   // the paged cache's arena
	PagedMaxWaste int     // bound: (BlockSize−1) × Concurrent tokens
	Rows          []KVRow
}

// KVStrategies decodes the workload's sequences with three KV caches, each on
// a fresh device: grown with torch.cat every step, preallocated for MaxLen
// per sequence (pool.KVCache), and paged (one pool.PagedKVCache whose arena
// holds Concurrent × MaxLen tokens).
func KVStrategies(s Setup, w KVWorkload) (res KVResult, err error) {
	if w.Sequences < 1 || w.Concurrent < 1 || w.MinLen < 1 || w.MaxLen < w.MinLen || w.Heads < 1 || w.HeadDim < 1 || w.BlockSize < 1 {
		return res, fmt.Errorf("ch4: KVStrategies: invalid workload %+v", w)
	}
	res.Workload = w
	res.TokenBytes = int64(2 * w.Heads * w.HeadDim * 4)
	rng := rand.New(rand.NewPCG(w.Seed, 4))
	lens := make([]int, w.Sequences)
	for i := range lens {
		lens[i] = w.MinLen + rng.IntN(w.MaxLen-w.MinLen+1)
	}
	blocksPerSeq := (w.MaxLen + w.BlockSize - 1) / w.BlockSize
	res.PagedMaxWaste = (w.BlockSize - 1) * w.Concurrent
	for _, strat := range []kvStrategy{&catKV{}, &preKV{}, &pagedKV{blocks: w.Concurrent * blocksPerSeq}} {
		row, useful, err := runKV(s, w, lens, strat)
		if err != nil {
			return res, fmt.Errorf("ch4: KVStrategies: %s: %w", strat.name(), err)
		}
		if p, ok := strat.(*pagedKV); ok {
			res.ArenaBytes = int64(p.blocks) * p.blockBytes
		}
		res.Useful = useful // the same for every strategy
		res.Rows = append(res.Rows, row)
	}
	for _, u := range res.Useful {
		res.PeakUseful = max(res.PeakUseful, u)
	}
	return res, nil
}

// kvStrategy is one way of keeping the sequences' keys and values.
type kvStrategy interface {
	name() string
	open(b *Bench, w KVWorkload) error
	start(seq int) error
	appendToken(seq int, k, v *tensor.Tensor) error
	finish(seq int) error
	held() int64 // bytes set aside now
	waste() int  // token slots held but unused now
	close() error
}

func runKV(s Setup, w KVWorkload, lens []int, strat kvStrategy) (row KVRow, useful []int64, err error) {
	b, err := s.Open()
	if err != nil {
		return row, nil, err
	}
	defer func() { err = errors.Join(err, b.Close()) }()
	tok, err := tensor.Randn(b, 9, tensor.Float32, w.Heads, 1, w.HeadDim)
	if err != nil {
		return row, nil, err
	}
	defer func() { err = errors.Join(err, tok.Release()) }()
	base := b.MemoryAllocated()
	b.ResetPeakMemoryStats()
	c0 := b.counters()
	if err := strat.open(b, w); err != nil {
		return row, nil, err
	}
	defer func() { err = errors.Join(err, strat.close()) }()
	row.Strategy = strat.name()
	tokenBytes := int64(2 * w.Heads * w.HeadDim * 4)
	maxAllocated := int64(0) // after a step
	cur := map[int]int{}     // live sequence -> tokens so far
	next := 0
	var times []time.Duration
	for next < len(lens) || len(cur) > 0 {
		for len(cur) < w.Concurrent && next < len(lens) {
			if err := strat.start(next); err != nil {
				return row, nil, err
			}
			cur[next] = 0
			next++
		}
		t0 := time.Now()
		live := int64(0)
		for _, seq := range slices.Sorted(maps.Keys(cur)) { // a fixed order: the allocator's choices depend on it
			if err := strat.appendToken(seq, tok, tok); err != nil {
				return row, nil, fmt.Errorf("sequence %d, token %d: %w", seq, cur[seq], err)
			}
			cur[seq]++
			live += int64(cur[seq])
		}
		if a := b.MemoryAllocated(); a > maxAllocated {
			maxAllocated, row.Segments, row.SegmentsReserved = a, memlab.Segments(b.Snapshot()), b.MemoryReserved()
		}
		row.PeakHeld = max(row.PeakHeld, strat.held())
		row.MaxWaste = max(row.MaxWaste, strat.waste())
		row.Held = append(row.Held, strat.held())
		useful = append(useful, live*tokenBytes)
		for _, seq := range slices.Sorted(maps.Keys(cur)) {
			if cur[seq] == lens[seq] {
				if err := strat.finish(seq); err != nil {
					return row, nil, err
				}
				delete(cur, seq)
			}
		}
		times = append(times, time.Since(t0))
	}
	c := b.counters().since(c0)
	row.AllocCalls, row.DeviceMallocs = c.allocs, c.deviceAllocs
	row.PeakAllocated = b.MaxMemoryAllocated() - base
	row.PeakReserved = b.MaxMemoryReserved()
	row.Median = median(times)
	return row, useful, nil
}

// catKV grows each sequence's keys and values with torch.cat.
type catKV struct {
	k, v  map[int]*tensor.Tensor
	bytes int64
}

func (c *catKV) name() string { return "torch.cat growth" }
func (c *catKV) open(*Bench, KVWorkload) error {
	c.k, c.v = map[int]*tensor.Tensor{}, map[int]*tensor.Tensor{}
	return nil
}
func (c *catKV) start(int) error { return nil }
func (c *catKV) appendToken(seq int, k, v *tensor.Tensor) error {
	for _, kv := range []struct {
		m map[int]*tensor.Tensor
		x *tensor.Tensor
	}{{c.k, k}, {c.v, v}} {
		old := kv.m[seq]
		var next *tensor.Tensor
		var err error
		if old == nil {
			next, err = kv.x.Clone()
		} else {
			next, err = tensor.Cat([]*tensor.Tensor{old, kv.x}, 1)
		}
		if err != nil {
			return err
		}
		c.bytes += next.Nbytes()
		if old != nil {
			c.bytes -= old.Nbytes()
			if err := old.Release(); err != nil {
				return err
			}
		}
		kv.m[seq] = next
	}
	return nil
}
func (c *catKV) finish(seq int) error {
	c.bytes -= c.k[seq].Nbytes() + c.v[seq].Nbytes()
	err := tensor.ReleaseLive(c.k[seq], c.v[seq])
	delete(c.k, seq)
	delete(c.v, seq)
	return err
}
func (c *catKV) held() int64 { return c.bytes }
func (c *catKV) waste() int  { return 0 }
func (c *catKV) close() error {
	var errs []error
	for seq := range c.k {
		errs = append(errs, c.finish(seq))
	}
	return errors.Join(errs...)
}

// preKV gives each sequence a KVCache of MaxLen tokens.
type preKV struct {
	b      *Bench
	w      KVWorkload
	caches map[int]*pool.KVCache
}

func (p *preKV) name() string { return "preallocated (KVCache)" }
func (p *preKV) open(b *Bench, w KVWorkload) error {
	p.b, p.w, p.caches = b, w, map[int]*pool.KVCache{}
	return nil
}
func (p *preKV) start(seq int) error {
	c, err := pool.NewKVCache(p.b, tensor.Float32, 1, p.w.Heads, p.w.MaxLen, p.w.HeadDim)
	if err != nil {
		return err
	}
	p.caches[seq] = c
	return nil
}
func (p *preKV) appendToken(seq int, k, v *tensor.Tensor) error { return p.caches[seq].Append(0, k, v) }
func (p *preKV) finish(seq int) error {
	err := p.caches[seq].Release()
	delete(p.caches, seq)
	return err
}
func (p *preKV) held() int64 {
	var n int64
	for _, c := range p.caches {
		n += c.Nbytes()
	}
	return n
}
func (p *preKV) waste() int {
	n := 0
	for _, c := range p.caches {
		l, _ := c.Len(0)
		n += c.MaxLen() - l
	}
	return n
}
func (p *preKV) close() error {
	var errs []error
	for seq := range p.caches {
		errs = append(errs, p.finish(seq))
	}
	return errors.Join(errs...)
}

// pagedKV serves every sequence from one PagedKVCache.
type pagedKV struct {
	blocks     int
	c          *pool.PagedKVCache
	blockBytes int64
}

func (p *pagedKV) name() string { return "paged (PagedKVCache)" }
func (p *pagedKV) open(b *Bench, w KVWorkload) error {
	var err error
	p.c, err = pool.NewPagedKVCache(b, tensor.Float32, pool.PagedConfig{Layers: 1, Heads: w.Heads, HeadDim: w.HeadDim, BlockSize: w.BlockSize, Blocks: p.blocks})
	p.blockBytes = int64(2 * w.Heads * w.BlockSize * w.HeadDim * 4)
	return err
}
func (p *pagedKV) start(seq int) error                            { return p.c.Allocate(seq) }
func (p *pagedKV) appendToken(seq int, k, v *tensor.Tensor) error { return p.c.Append(seq, 0, k, v) }
func (p *pagedKV) finish(seq int) error                           { return p.c.Free(seq) }
func (p *pagedKV) held() int64                                    { return int64(p.c.Stats().Used) * p.blockBytes }
func (p *pagedKV) waste() int                                     { return p.c.Stats().Waste }
func (p *pagedKV) close() error {
	if p.c == nil {
		return nil
	}
	return p.c.Release()
}

// Row returns the row of the strategy whose name starts with prefix.
func (r KVResult) Row(prefix string) (KVRow, bool) {
	for _, row := range r.Rows {
		if strings.HasPrefix(row.Strategy, prefix) {
			return row, true
		}
	}
	return KVRow{}, false
}

// String prints the table.
func (r KVResult) String() string {
	var b strings.Builder
	fmt.Fprintln(&b, r.caption())
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "strategy\tallocator calls\tcudaMalloc\tpeak allocated\tpeak reserved\tpeak held for KV\tmax unused slots\tmedian step\t")
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%d\t%s\t\n", row.Strategy, row.AllocCalls, row.DeviceMallocs,
			mib(row.PeakAllocated), mib(row.PeakReserved), mib(row.PeakHeld), row.MaxWaste, us(row.Median))
	}
	tw.Flush()
	return b.String()
}

// caption says what ran: the workload and the peak of live keys and values.
func (r KVResult) caption() string {
	w := r.Workload
	return fmt.Sprintf(lang.Text("%d sequences of %d–%d tokens, %d at a time; %d heads × %d dims (%d bytes of K+V per token); paged blocks of %d tokens, arena %s")+"\n"+lang.Text("peak of live keys and values: %s"),
		w.Sequences, w.MinLen, w.MaxLen, w.Concurrent, w.Heads, w.HeadDim, r.TokenBytes, w.BlockSize, mib(r.ArenaBytes), mib(r.PeakUseful))
}

// Table returns String's table as a notebook table (HTML in GoNB).
func (r KVResult) Table() *memlab.Table {
	t := memlab.NewTable(T("strategy", "allocator calls", "cudaMalloc", "peak allocated", "peak reserved", "peak held for KV", "max unused slots", "median step")...)
	t.Caption = r.caption()
	for _, row := range r.Rows {
		t.Row(lang.Text(row.Strategy), row.AllocCalls, row.DeviceMallocs, mib(row.PeakAllocated), mib(row.PeakReserved), mib(row.PeakHeld), row.MaxWaste, us(row.Median))
	}
	return t
}
