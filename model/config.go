package model

import (
	"fmt"
	"math/rand/v2"
)

// Config sizes a decoder-only transformer.
type Config struct {
	Vocab  int // vocabulary size
	Dim    int // model width (d_model)
	Heads  int // attention heads; Dim must be a multiple
	Layers int // transformer blocks
	Hidden int // MLP width, usually 4 × Dim
	MaxLen int // most positions (prompt + generated tokens)
	// Seed makes the weights: the same seed gives the same weights on every
	// device.
	Seed uint64
}

// HeadDim is Dim / Heads.
func (c Config) HeadDim() int { return c.Dim / c.Heads }

// Validate reports the first size that makes no model.
func (c Config) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"Vocab", c.Vocab}, {"Dim", c.Dim}, {"Heads", c.Heads}, {"Layers", c.Layers}, {"Hidden", c.Hidden}, {"MaxLen", c.MaxLen}} {
		if f.v < 1 {
			return fmt.Errorf("model: Config.%s = %d, must be at least 1", f.name, f.v)
		}
	}
	if c.Dim%c.Heads != 0 {
		return fmt.Errorf("model: Config.Dim = %d is not a multiple of Heads = %d", c.Dim, c.Heads)
	}
	return nil
}

// Params returns the number of weights.
func (c Config) Params() int {
	perLayer := 4*c.Dim + c.Dim*3*c.Dim + c.Dim*c.Dim + c.Dim*c.Hidden + c.Hidden*c.Dim
	return c.Vocab*c.Dim + c.MaxLen*c.Dim + c.Layers*perLayer + 2*c.Dim
}

// Workload is a set of variable-length requests: each has a prompt and a
// number of tokens to generate, drawn uniformly from the given ranges
// (inclusive) with Seed.
type Workload struct {
	Requests             int
	PromptMin, PromptMax int
	DecodeMin, DecodeMax int
	Seed                 uint64
}

// Request is one generation request: the prompt's token ids and how many
// tokens to generate after it.
type Request struct {
	Prompt []int64
	Decode int
}

// Len is the number of positions the request occupies: its prompt plus the
// tokens it generates.
func (r Request) Len() int { return len(r.Prompt) + r.Decode }

// Make draws the workload's requests for a vocabulary of vocab tokens. The
// same workload gives the same requests.
func (w Workload) Make(vocab int) ([]Request, error) {
	switch {
	case w.Requests < 1:
		return nil, fmt.Errorf("model: Workload.Requests = %d, must be at least 1", w.Requests)
	case w.PromptMin < 1 || w.PromptMax < w.PromptMin:
		return nil, fmt.Errorf("model: Workload prompt lengths [%d, %d] must satisfy 1 ≤ min ≤ max", w.PromptMin, w.PromptMax)
	case w.DecodeMin < 1 || w.DecodeMax < w.DecodeMin:
		return nil, fmt.Errorf("model: Workload decode lengths [%d, %d] must satisfy 1 ≤ min ≤ max", w.DecodeMin, w.DecodeMax)
	case vocab < 1:
		return nil, fmt.Errorf("model: Workload.Make: vocab = %d, must be at least 1", vocab)
	case w.PromptMax > maxWorkloadTokens/w.Requests || w.DecodeMax > maxWorkloadTokens:
		// Make holds every prompt in host memory: refuse what would exhaust it
		// (or overflow MaxLen) rather than crash the process.
		return nil, fmt.Errorf("model: Workload of %d requests, prompts up to %d and decodes up to %d tokens is too large (at most %d tokens in all)", w.Requests, w.PromptMax, w.DecodeMax, maxWorkloadTokens)
	}
	rng := rand.New(rand.NewPCG(w.Seed, 0x6d656d6c6162))
	reqs := make([]Request, w.Requests)
	for i := range reqs {
		p := w.PromptMin + rng.IntN(w.PromptMax-w.PromptMin+1)
		d := w.DecodeMin + rng.IntN(w.DecodeMax-w.DecodeMin+1)
		prompt := make([]int64, p)
		for j := range prompt {
			prompt[j] = int64(rng.IntN(vocab))
		}
		reqs[i] = Request{Prompt: prompt, Decode: d}
	}
	return reqs, nil
}

// maxWorkloadTokens bounds the prompt tokens Make draws (2 GiB of ids), far
// beyond any model here.
const maxWorkloadTokens = 1 << 28

// MaxLen is the longest request of the workload: PromptMax + DecodeMax.
func (w Workload) MaxLen() int { return w.PromptMax + w.DecodeMax }

// Size is a named pair of model and workload sizes.
type Size struct {
	Name     string
	Config   Config
	Workload Workload
}

// Sizes are the presets the chapter uses: "small" runs the whole chapter-4
// notebook on the simulated device's CPU kernels in seconds; "large" is for a
// GPU.
var Sizes = []Size{
	{"tiny", Config{Vocab: 64, Dim: 32, Heads: 2, Layers: 2, Hidden: 128, MaxLen: 32, Seed: 1},
		Workload{Requests: 3, PromptMin: 3, PromptMax: 10, DecodeMin: 2, DecodeMax: 6, Seed: 1}},
	{"small", Config{Vocab: 2048, Dim: 128, Heads: 4, Layers: 2, Hidden: 512, MaxLen: 128, Seed: 1},
		Workload{Requests: 8, PromptMin: 16, PromptMax: 64, DecodeMin: 8, DecodeMax: 32, Seed: 1}},
	{"large", Config{Vocab: 32000, Dim: 1024, Heads: 16, Layers: 12, Hidden: 4096, MaxLen: 2048, Seed: 1},
		Workload{Requests: 16, PromptMin: 128, PromptMax: 1024, DecodeMin: 64, DecodeMax: 256, Seed: 1}},
}

// SizeByName returns the preset called name.
func SizeByName(name string) (Size, error) {
	for _, s := range Sizes {
		if s.Name == name {
			return s, nil
		}
	}
	names := make([]string, len(Sizes))
	for i, s := range Sizes {
		names[i] = s.Name
	}
	return Size{}, fmt.Errorf("model: unknown size %q (have %v)", name, names)
}
