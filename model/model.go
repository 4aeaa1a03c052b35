// Package model is a small decoder-only transformer (GPT-2 style: token and
// position embeddings, N blocks of [layernorm, multi-head causal attention
// with a KV cache, residual, layernorm, MLP with GELU, residual], a final
// layernorm and logits tied to the token embedding) that runs in several
// modes on the same weights:
//
//   - [Baseline] is what a straightforward port does: every operation
//     out of place, .contiguous() after splitting heads, the KV cache grown
//     with torch.cat every step, logits for every prompt position;
//   - [Optimised] applies chapter 4: in-place scale, mask, GELU and residual
//     adds ([InPlace]), views instead of copies ([Views]), a KV cache
//     preallocated per request whose arena comes from a [pool.TensorPool]
//     shared by the requests ([KVCache]), and logits only for the position
//     that is sampled ([LastLogits]); any subset of these is a Mode too;
//   - [PooledScores] takes the attention scores and their softmax from two
//     buffers of a [pool.TensorPool] sized for the longest request, written
//     with [tensor.MatmulInto] and [tensor.SoftmaxInto]; it is compared
//     beside [Chapter] (Chapter|PooledScores) rather than folded into it.
//
// Every mode produces the same logits; package experiments/ch4 measures what
// each saves in memory and time. An [Engine] serves variable-length requests
// ([Request], drawn by a [Workload]) greedily, timing each forward pass.
package model

import (
	"errors"
	"fmt"

	"memlab.dev/memlab/tensor"
)

// Model holds a transformer's weights on one device.
type Model struct {
	cfg Config
	dev tensor.Device

	wte, wpe    *tensor.Tensor // [Vocab, Dim], [MaxLen, Dim]
	blocks      []block
	lnfG, lnfB  *tensor.Tensor // [Dim]
	weights     []*tensor.Tensor
	weightBytes int64
	released    bool
}

type block struct {
	ln1G, ln1B *tensor.Tensor // [Dim]
	wqkv       *tensor.Tensor // [Dim, 3·Dim]: queries, keys, values side by side
	wo         *tensor.Tensor // [Dim, Dim]
	ln2G, ln2B *tensor.Tensor // [Dim]
	w1         *tensor.Tensor // [Dim, Hidden]
	w2         *tensor.Tensor // [Hidden, Dim]
}

// eps is the layernorm epsilon (PyTorch's default).
const eps = 1e-5

// initStd is the standard deviation of the random weights (GPT-2's 0.02).
const initStd = 0.02

// New allocates a model's weights on dev: matrices from tensor.Randn with
// seeds derived from cfg.Seed, scaled to a standard deviation of 0.02;
// layernorm gains 1 and biases 0.
func New(dev tensor.Device, cfg Config) (m *Model, err error) {
	if dev == nil {
		return nil, errors.New("model: New: nil device")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m = &Model{cfg: cfg, dev: dev}
	// The returns below set m to nil before this runs: release through a copy.
	built := m
	defer func() {
		if err != nil {
			err = errors.Join(fmt.Errorf("model: New: %w", err), built.Release())
			m = nil
		}
	}()
	seed := cfg.Seed * 1000
	randn := func(shape ...int) (*tensor.Tensor, error) {
		seed++
		t, err := tensor.Randn(dev, seed, tensor.Float32, shape...)
		if err != nil {
			return nil, err
		}
		m.keep(t)
		return t, t.Scale_(initStd)
	}
	full := func(v float64) (*tensor.Tensor, error) {
		t, err := tensor.Full(dev, tensor.Float32, v, cfg.Dim)
		if err == nil {
			m.keep(t)
		}
		return t, err
	}
	D := cfg.Dim
	if m.wte, err = randn(cfg.Vocab, D); err != nil {
		return nil, err
	}
	if m.wpe, err = randn(cfg.MaxLen, D); err != nil {
		return nil, err
	}
	m.blocks = make([]block, cfg.Layers)
	for i := range m.blocks {
		b := &m.blocks[i]
		for _, w := range []struct {
			p     **tensor.Tensor
			shape []int
			v     float64 // for layernorm parameters
		}{
			{&b.ln1G, nil, 1}, {&b.ln1B, nil, 0}, {&b.wqkv, []int{D, 3 * D}, 0}, {&b.wo, []int{D, D}, 0},
			{&b.ln2G, nil, 1}, {&b.ln2B, nil, 0}, {&b.w1, []int{D, cfg.Hidden}, 0}, {&b.w2, []int{cfg.Hidden, D}, 0},
		} {
			if w.shape == nil {
				*w.p, err = full(w.v)
			} else {
				*w.p, err = randn(w.shape...)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	if m.lnfG, err = full(1); err != nil {
		return nil, err
	}
	if m.lnfB, err = full(0); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *Model) keep(t *tensor.Tensor) {
	m.weights = append(m.weights, t)
	m.weightBytes += t.Nbytes()
}

// Config returns the model's sizes.
func (m *Model) Config() Config { return m.cfg }

// Device returns the device holding the weights.
func (m *Model) Device() tensor.Device { return m.dev }

// WeightBytes returns the bytes of all weights.
func (m *Model) WeightBytes() int64 { return m.weightBytes }

// Release frees the weights. Further calls do nothing.
func (m *Model) Release() error {
	if m.released {
		return nil
	}
	m.released = true
	err := tensor.ReleaseAll(m.weights...)
	m.weights = nil
	return err
}

// Weights are a model's weight tensors, for code that runs the forward pass
// itself (notebook 04 writes it out in cells). They belong to the model:
// read them, do not write or release them.
type Weights struct {
	Config     Config
	Wte, Wpe   *tensor.Tensor // [Vocab, Dim], [MaxLen, Dim]
	Blocks     []BlockWeights
	LnfG, LnfB *tensor.Tensor // [Dim]
}

// BlockWeights are one transformer block's weights.
type BlockWeights struct {
	LN1G, LN1B *tensor.Tensor // [Dim]
	Wqkv       *tensor.Tensor // [Dim, 3·Dim]: queries, keys, values side by side
	Wo         *tensor.Tensor // [Dim, Dim]
	LN2G, LN2B *tensor.Tensor // [Dim]
	W1         *tensor.Tensor // [Dim, Hidden]
	W2         *tensor.Tensor // [Hidden, Dim]
}

// Weights returns the model's weight tensors.
func (m *Model) Weights() Weights {
	w := Weights{Config: m.cfg, Wte: m.wte, Wpe: m.wpe, LnfG: m.lnfG, LnfB: m.lnfB}
	for _, b := range m.blocks {
		w.Blocks = append(w.Blocks, BlockWeights{b.ln1G, b.ln1B, b.wqkv, b.wo, b.ln2G, b.ln2B, b.w1, b.w2})
	}
	return w
}

// Eps is the layernorm epsilon the model uses (PyTorch's default).
const Eps = eps
