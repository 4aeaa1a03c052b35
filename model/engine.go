package model

import (
	"errors"
	"fmt"
	"math"
	"time"

	"memlab.dev/memlab/pool"
	"memlab.dev/memlab/tensor"
)

// Timer runs f and returns how long it took on the device: device.Device's
// Time (CUDA events on a GPU, the wall clock on the simulator).
type Timer func(f func() error) (time.Duration, error)

// wallClock is the Timer used when none is given.
func wallClock(f func() error) (time.Duration, error) {
	t0 := time.Now()
	err := f()
	return time.Since(t0), err
}

// EngineOptions configures an Engine.
type EngineOptions struct {
	// MaxLen is the longest request the engine serves, the length of the KV
	// cache the KVCache mode preallocates; 0 means the model's MaxLen.
	MaxLen int
	// Timer times each forward call; nil means the host's wall clock.
	Timer Timer
	// KeepLogits makes Generate return every step's logits.
	KeepLogits bool
	// Forward, if set, is a forward pass of the caller's that Generate runs
	// in place of the model's own (in every mode it returns a Pass for).
	Forward Forward
}

// Forward returns a Pass that runs one request's forward passes over w in
// the mode of o, honouring every bit of it with the resources o hands over
// from the engine's pools; a nil Pass makes the engine run the model's own
// pass instead. A notebook's forward pass comes in this way, so that what a
// learner edits is what the engine measures.
type Forward func(w Weights, o PassOptions) (Pass, error)

// PassOptions are what an engine gives a [Forward] for one request: its mode
// and, for the modes that pool memory, the buffers from the engine's pools.
type PassOptions struct {
	Mode Mode
	// Arena is the request's KV-cache arena with KVCache (nil without), of
	// shape [pool.KVCacheArenaShape]: layer l's keys at [l, 0], its values
	// at [l, 1]. The engine puts it back after Release.
	Arena *tensor.Tensor
	// Scores is the engine's pool of attention-score buffers with
	// PooledScores (nil without), for [PooledAttention].
	Scores *pool.TensorPool
}

// Pass is one request's forward passes, from a [Forward].
type Pass interface {
	// Step runs tokens ids at positions pos, pos+1, … and returns the
	// logits of the last of them.
	Step(ids []int64, pos int) ([]float32, error)
	// Release frees what the request kept (its KV cache, for one).
	Release() error
}

// Engine generates tokens for requests in one Mode. With KVCache it keeps a
// TensorPool of KV-cache arenas, so that every request after the first
// reuses an earlier one's cache memory. Generate is safe for concurrent use:
// each call has a KV cache of its own (with KVCache, its own arena from the
// pool, which then holds as many arenas as requests ran at once).
type Engine struct {
	m      *Model
	mode   Mode
	opts   EngineOptions
	arenas *pool.TensorPool // with KVCache only
	scores *pool.TensorPool // attention-score buffers, with PooledScores only
}

// Generation is what Generate produced for one request.
type Generation struct {
	Tokens []int64     // the generated tokens (greedy: the largest logit)
	Logits [][]float32 // the logits each token was chosen from, with KeepLogits
	// LastLogits are the logits the last token was chosen from.
	LastLogits []float32
	// Prefill is the time of the forward pass over the prompt, which also
	// gives the first token (time to first token).
	Prefill time.Duration
	// Steps is the time of each later forward pass over one token.
	Steps []time.Duration
}

// NewEngine returns an engine running m in mode.
func (m *Model) NewEngine(mode Mode, opts EngineOptions) (*Engine, error) {
	if mode&^allModes != 0 {
		return nil, fmt.Errorf("model: NewEngine: unknown mode %#x", uint8(mode))
	}
	if opts.MaxLen == 0 {
		opts.MaxLen = m.cfg.MaxLen
	}
	if opts.MaxLen < 1 || opts.MaxLen > m.cfg.MaxLen {
		return nil, fmt.Errorf("model: NewEngine: MaxLen = %d, must be in [1, %d] (the model's MaxLen)", opts.MaxLen, m.cfg.MaxLen)
	}
	if opts.Timer == nil {
		opts.Timer = wallClock
	}
	e := &Engine{m: m, mode: mode, opts: opts}
	if mode&KVCache != 0 {
		cfg := m.cfg
		shape := pool.KVCacheArenaShape(cfg.Layers, cfg.Heads, opts.MaxLen, cfg.HeadDim())
		var err error
		if e.arenas, err = pool.NewTensorPool(m.dev, tensor.Float32, shape, 0); err != nil {
			return nil, fmt.Errorf("model: NewEngine: %w", err)
		}
	}
	if mode&PooledScores != 0 {
		// A forward pass over n tokens after pos cached ones has [Heads, n,
		// pos+n] scores, at most Heads × MaxLen × MaxLen elements.
		cfg := m.cfg
		if opts.MaxLen > math.MaxInt32 || cfg.Heads > math.MaxInt/opts.MaxLen/opts.MaxLen {
			return nil, errors.Join(fmt.Errorf("model: NewEngine: score buffers of %d heads × %d × %d positions overflow int", cfg.Heads, opts.MaxLen, opts.MaxLen), e.Release())
		}
		var err error
		if e.scores, err = pool.NewTensorPool(m.dev, tensor.Float32, []int{cfg.Heads * opts.MaxLen * opts.MaxLen}, 0); err != nil {
			return nil, errors.Join(fmt.Errorf("model: NewEngine: %w", err), e.Release())
		}
	}
	return e, nil
}

// Mode returns the engine's mode.
func (e *Engine) Mode() Mode { return e.mode }

// PoolStats returns the statistics of the KV-arena pool (zero without
// KVCache).
func (e *Engine) PoolStats() pool.Stats {
	if e.arenas == nil {
		return pool.Stats{}
	}
	return e.arenas.Stats()
}

// ScorePoolStats returns the statistics of the pool of attention-score
// buffers (zero without PooledScores): each layer of each forward pass gets
// two buffers and puts them back.
func (e *Engine) ScorePoolStats() pool.Stats {
	if e.scores == nil {
		return pool.Stats{}
	}
	return e.scores.Stats()
}

// Generate runs the prompt through the model, then generates req.Decode
// tokens greedily, feeding each back one at a time.
func (e *Engine) Generate(req Request) (g Generation, err error) {
	cfg := e.m.cfg
	if len(req.Prompt) == 0 || req.Decode < 1 {
		return g, fmt.Errorf("model: Generate: request with a %d-token prompt and %d tokens to generate; need at least 1 of each", len(req.Prompt), req.Decode)
	}
	// Decode alone first: the sum Len may overflow and pass the check below.
	if req.Decode > e.opts.MaxLen {
		return g, fmt.Errorf("model: Generate: request of %d tokens to generate, the engine serves at most %d positions", req.Decode, e.opts.MaxLen)
	}
	// The last generated token is not fed back, so the cache holds Len()-1.
	if n := req.Len() - 1; n > e.opts.MaxLen {
		return g, fmt.Errorf("model: Generate: request of %d positions, the engine serves at most %d", n, e.opts.MaxLen)
	}
	for i, id := range req.Prompt {
		if id < 0 || id >= int64(cfg.Vocab) {
			return g, fmt.Errorf("model: Generate: prompt token %d is %d, outside the vocabulary [0, %d)", i, id, cfg.Vocab)
		}
	}
	kv := &kvState{scores: e.scores}
	var arena *tensor.Tensor
	if e.mode&KVCache != 0 {
		if arena, err = e.arenas.Get(); err != nil {
			return g, fmt.Errorf("model: Generate: %w", err)
		}
		defer func() { err = errors.Join(err, e.arenas.Put(arena)) }()
	}
	var p Pass
	if e.opts.Forward != nil {
		if p, err = e.opts.Forward(e.m.Weights(), PassOptions{Mode: e.mode, Arena: arena, Scores: e.scores}); err != nil {
			return g, fmt.Errorf("model: Generate: %w", err)
		}
	}
	switch {
	case p != nil:
		defer func() { err = errors.Join(err, p.Release()) }()
	case arena != nil:
		if kv.cache, err = pool.NewKVCacheIn(arena); err != nil {
			return g, fmt.Errorf("model: Generate: %w", err)
		}
		defer func() { err = errors.Join(err, kv.cache.Release()) }()
	default:
		kv.k, kv.v = make([]*tensor.Tensor, cfg.Layers), make([]*tensor.Tensor, cfg.Layers)
		defer func() { err = errors.Join(err, kv.release()) }()
	}
	step := func(ids []int64, pos int) (int64, time.Duration, error) {
		var logits []float32
		d, err := e.opts.Timer(func() error {
			var err error
			if p != nil {
				logits, err = p.Step(ids, pos)
			} else {
				logits, err = e.m.forward(e.mode, ids, pos, kv)
			}
			return err
		})
		if err != nil {
			return 0, 0, err
		}
		if e.opts.KeepLogits {
			g.Logits = append(g.Logits, logits)
		}
		g.LastLogits = logits
		return argmax(logits), d, nil
	}
	tok, d, err := step(req.Prompt, 0)
	if err != nil {
		return g, err
	}
	g.Prefill = d
	g.Tokens = append(g.Tokens, tok)
	for pos := len(req.Prompt); len(g.Tokens) < req.Decode; pos++ {
		if tok, d, err = step([]int64{tok}, pos); err != nil {
			return g, err
		}
		g.Tokens = append(g.Tokens, tok)
		g.Steps = append(g.Steps, d)
	}
	return g, nil
}

// Release frees the engine's pooled KV arenas and attention-score buffers.
func (e *Engine) Release() error {
	var errs []error
	for _, p := range []*pool.TensorPool{e.arenas, e.scores} {
		if p != nil {
			errs = append(errs, p.Release())
		}
	}
	return errors.Join(errs...)
}

// argmax returns the index of the largest value (the first of equal ones).
func argmax(x []float32) int64 {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return int64(best)
}
