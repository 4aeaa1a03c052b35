package model

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"memlab.dev/memlab/pool"
	"memlab.dev/memlab/tensor"
)

// Mode is a set of the optimisations of chapter 4; every combination gives
// the same logits. The zero Mode is Baseline.
type Mode uint8

const (
	// InPlace scales and masks attention scores, applies GELU and adds
	// residuals in place (section 4.1) instead of allocating each result.
	InPlace Mode = 1 << iota
	// Views splits heads with views (section 4.2) where Baseline copies them
	// with .contiguous() before and after the transpose, as naive ports do.
	Views
	// KVCache keeps keys and values in a cache preallocated for the longest
	// request, its arena taken from a TensorPool shared by the requests
	// (section 4.3), where Baseline grows them with Cat every step.
	KVCache
	// LastLogits computes the output projection for the sampled position
	// only (a view of the last row), where Baseline computes it for every
	// prompt position.
	LastLogits
	// PooledScores takes each layer's attention scores and their softmax
	// from two buffers of a TensorPool sized for the longest request
	// (section 4.4's pooled attention-score buffers), writes them with the
	// out= forms tensor.MatmulInto and tensor.SoftmaxInto, scales and masks
	// the scores in their buffer, and returns both buffers after the
	// probabilities have met the values. Without it every pass allocates
	// its scores, their scaled and masked versions and the probabilities.
	// It is not in Chapter: see Chapter.
	PooledScores
)

const (
	// Baseline is the straightforward port: every operation out of place,
	// heads copied, the KV cache grown with Cat, logits for every position.
	Baseline Mode = 0
	// Chapter applies exactly the three techniques chapter 4 combines in its
	// "20–30 %" claim: in-place operations, views and pooling, the pool
	// being section 4.3's TensorPool of KV-cache arenas. PooledScores, the
	// chapter's second use of a pool (4.4), stays out of it so that
	// "chapter" means what it meant in the runs recorded before
	// PooledScores existed; Chapter|PooledScores is compared beside it.
	Chapter = InPlace | Views | KVCache
	// Optimised applies Chapter and memlab's own extra, LastLogits, which
	// the chapter does not name; like Chapter it leaves out PooledScores, so
	// that recorded "optimised" runs keep their meaning.
	Optimised = Chapter | LastLogits
	// allModes is every optimisation bit.
	allModes = Optimised | PooledScores
)

// Modes lists the modes chapter 4 compares: the baseline, each of the
// chapter's techniques alone, pooled attention scores alone, the three
// together (Chapter) and with pooled scores, memlab's extra LastLogits
// alone, all but InPlace (to see what in-place adds once the others have
// moved the peak), and everything together.
var Modes = []Mode{Baseline, InPlace, Views, KVCache, PooledScores, Chapter, Chapter | PooledScores, LastLogits, Optimised &^ InPlace, Optimised}

// String names the mode: "baseline", "chapter", "optimised", or its
// optimisations joined by "+", such as "in-place+views", starting with
// "optimised" or "chapter" when it holds those, as in "chapter+pooled-scores".
func (m Mode) String() string {
	switch m {
	case Baseline:
		return "baseline"
	case Chapter:
		return "chapter"
	case Optimised:
		return "optimised"
	}
	var parts []string
	for _, named := range []Mode{Optimised, Chapter} { // "chapter+pooled-scores"
		if m&named == named {
			parts = append(parts, named.String())
			m &^= named
			break
		}
	}
	for _, f := range []struct {
		bit  Mode
		name string
	}{{InPlace, "in-place"}, {Views, "views"}, {KVCache, "kv-cache"}, {LastLogits, "last-logits"}, {PooledScores, "pooled-scores"}} {
		if m&f.bit != 0 {
			parts = append(parts, f.name)
			m &^= f.bit
		}
	}
	if m != 0 {
		parts = append(parts, fmt.Sprintf("Mode(%#x)", uint8(m)))
	}
	return strings.Join(parts, "+")
}

// ParseMode reads a mode as String writes it.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "baseline":
		return Baseline, nil
	case "chapter":
		return Chapter, nil
	case "optimised", "optimized":
		return Optimised, nil
	}
	var m Mode
	for _, part := range strings.Split(s, "+") {
		switch part {
		case "in-place":
			m |= InPlace
		case "views":
			m |= Views
		case "kv-cache":
			m |= KVCache
		case "last-logits":
			m |= LastLogits
		case "pooled-scores":
			m |= PooledScores
		case "chapter":
			m |= Chapter
		case "optimised", "optimized":
			m |= Optimised
		default:
			return 0, fmt.Errorf("model: unknown mode %q (want baseline, or chapter, optimised, in-place, views, kv-cache, last-logits, pooled-scores joined by +)", s)
		}
	}
	return m, nil
}

// MarshalText writes the mode as String does, for JSON files of results.
func (m Mode) MarshalText() ([]byte, error) {
	if m&^allModes != 0 {
		return nil, fmt.Errorf("model: unknown mode %#x", uint8(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText reads a mode as ParseMode does.
func (m *Mode) UnmarshalText(b []byte) error {
	v, err := ParseMode(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// kvState is the KV cache of one request: preallocated with KVCache, grown
// by Cat otherwise.
type kvState struct {
	cache *pool.KVCache    // with KVCache
	k, v  []*tensor.Tensor // without: per layer [Heads, len, HeadDim]
	// scores is the engine's pool of attention-score buffers, with
	// PooledScores.
	scores *pool.TensorPool
}

func (kv *kvState) release() error {
	var errs []error
	for i := range kv.k {
		errs = append(errs, tensor.ReleaseLive(kv.k[i], kv.v[i]))
		kv.k[i], kv.v[i] = nil, nil
	}
	return errors.Join(errs...)
}

// pass is one forward call: its scope releases whatever an error leaves
// behind; on success every temporary is released as soon as it is dead, as
// Python's reference counting does, so that peaks are those of the real
// program.
type pass struct {
	m    *Model
	mode Mode
	s    *tensor.Scope
}

func (p *pass) has(o Mode) bool { return p.mode&o != 0 }

func (p *pass) track(t *tensor.Tensor, err error) (*tensor.Tensor, error) { return p.s.Track(t, err) }

// forward runs tokens ids at positions pos, pos+1, … through the model,
// appending their keys and values to kv, and returns the logits of the last
// position.
func (m *Model) forward(mode Mode, ids []int64, pos int, kv *kvState) (logits []float32, err error) {
	n := len(ids)
	if n == 0 {
		return nil, errors.New("model: forward: no tokens")
	}
	if pos+n > m.cfg.MaxLen {
		return nil, fmt.Errorf("model: forward: positions up to %d, the model has %d", pos+n, m.cfg.MaxLen)
	}
	if m.released {
		return nil, errors.New("model: forward: model is released")
	}
	p := &pass{m: m, mode: mode, s: tensor.NewScope()}
	defer func() { err = errors.Join(err, p.s.Release()) }()

	idx, err := p.track(tensor.FromInt64(m.dev, ids, n))
	if err != nil {
		return nil, err
	}
	h, err := p.track(tensor.Embedding(m.wte, idx))
	if err != nil {
		return nil, err
	}
	pe, err := p.track(m.wpe.Narrow(0, pos, n)) // a view of the position table
	if err != nil {
		return nil, err
	}
	if h, err = p.add(h, pe); err != nil {
		return nil, err
	}
	if err := tensor.ReleaseLive(idx, pe); err != nil {
		return nil, err
	}
	var mask *tensor.Tensor
	if n > 1 {
		if mask, err = p.track(causalMask(m.dev, n, pos)); err != nil {
			return nil, err
		}
	}
	for l := range m.blocks {
		if h, err = p.attention(l, h, mask, kv); err != nil {
			return nil, fmt.Errorf("model: layer %d attention: %w", l, err)
		}
		if h, err = p.mlp(l, h); err != nil {
			return nil, fmt.Errorf("model: layer %d MLP: %w", l, err)
		}
	}
	if err := tensor.ReleaseLive(mask); err != nil {
		return nil, err
	}
	return p.logits(h)
}

// causalMask returns the [n, pos+n] additive mask that lets the token at
// position pos+i see keys 0 … pos+i.
func causalMask(dev tensor.Device, n, pos int) (*tensor.Tensor, error) {
	L := pos + n
	data := make([]float32, n*L)
	inf := float32(math.Inf(-1))
	for i := 0; i < n; i++ {
		for j := pos + i + 1; j < L; j++ {
			data[i*L+j] = inf
		}
	}
	return tensor.FromFloat32(dev, data, n, L)
}

// add returns h + x: in place with InPlace (h's storage is the residual
// stream or the scores, used by nothing else), a new tensor otherwise (and h
// is released).
func (p *pass) add(h, x *tensor.Tensor) (*tensor.Tensor, error) {
	if p.has(InPlace) {
		return h, h.Add_(x)
	}
	out, err := p.track(h.Add(x))
	if err != nil {
		return nil, err
	}
	return out, tensor.ReleaseLive(h)
}

// attention is h + Wo·attn(layernorm(h)), with the keys and values of the new
// tokens appended to kv.
func (p *pass) attention(l int, h, mask *tensor.Tensor, kv *kvState) (*tensor.Tensor, error) {
	b, cfg := &p.m.blocks[l], p.m.cfg
	n, D := h.Shape()[0], cfg.Dim
	a, err := p.track(h.LayerNorm(b.ln1G, b.ln1B, eps))
	if err != nil {
		return nil, err
	}
	qkv, err := p.track(a.Matmul(b.wqkv)) // [n, 3D]
	if err != nil {
		return nil, err
	}
	if err := tensor.ReleaseLive(a); err != nil {
		return nil, err
	}
	var qkvHeads [3]*tensor.Tensor // each [H, n, hd]
	for i := range qkvHeads {
		if qkvHeads[i], err = p.splitHeads(qkv, i*D, n); err != nil {
			return nil, err
		}
	}
	if err := tensor.ReleaseLive(qkv); err != nil { // with Views, q, k and v keep its storage
		return nil, err
	}
	q, k, v := qkvHeads[0], qkvHeads[1], qkvHeads[2]
	K, V, err := p.cached(l, k, v, kv) // [H, L, hd]
	if err != nil {
		return nil, err
	}
	Kt, err := p.track(K.Transpose(1, 2)) // a view
	if err != nil {
		return nil, err
	}
	var o *tensor.Tensor // [H, n, hd]
	if p.has(PooledScores) {
		if o, err = p.track(PooledAttention(q, Kt, V, mask, kv.scores)); err != nil {
			return nil, err
		}
		if err := tensor.ReleaseLive(q, Kt); err != nil {
			return nil, err
		}
	} else if o, err = p.attend(q, Kt, V, mask); err != nil {
		return nil, err
	}
	if p.has(KVCache) { // otherwise K and V are the cache itself
		if err := tensor.ReleaseLive(K, V); err != nil {
			return nil, err
		}
	}
	merged, err := p.mergeHeads(o, n, D) // [n, D]
	if err != nil {
		return nil, err
	}
	proj, err := p.track(merged.Matmul(b.wo))
	if err != nil {
		return nil, err
	}
	if err := tensor.ReleaseLive(merged); err != nil {
		return nil, err
	}
	if h, err = p.add(h, proj); err != nil {
		return nil, err
	}
	return h, tensor.ReleaseLive(proj)
}

// attend returns softmax(q Kᵀ/√hd + mask) V, allocating the scores, their
// scaled and masked versions (in place with InPlace) and the
// probabilities. It consumes q and Kt.
func (p *pass) attend(q, Kt, V, mask *tensor.Tensor) (*tensor.Tensor, error) {
	scores, err := p.track(q.Matmul(Kt)) // [H, n, L]
	if err != nil {
		return nil, err
	}
	if err := tensor.ReleaseLive(q, Kt); err != nil {
		return nil, err
	}
	if scores, err = p.scale(scores, p.scoreScale()); err != nil {
		return nil, err
	}
	if mask != nil {
		if scores, err = p.add(scores, mask); err != nil {
			return nil, err
		}
	}
	probs, err := p.track(scores.Softmax(-1))
	if err != nil {
		return nil, err
	}
	if err := tensor.ReleaseLive(scores); err != nil {
		return nil, err
	}
	o, err := p.track(probs.Matmul(V))
	if err != nil {
		return nil, err
	}
	return o, tensor.ReleaseLive(probs)
}

// scoreScale is the attention scores' factor, 1/√HeadDim.
func (p *pass) scoreScale() float64 { return 1 / math.Sqrt(float64(p.m.cfg.HeadDim())) }

// PooledAttention is softmax(q Kᵀ/√hd + mask) V for q [.., n, hd], Kt
// [.., hd, L] (the keys transposed) and V [.., L, hd], with the scores and
// the probabilities in two buffers from scores, a pool of flat buffers (the
// engine's, PassOptions.Scores: Heads × MaxLen × MaxLen elements), of which
// it uses the first elements as [.., n, L], as PyTorch code writes
// torch.matmul(q, k_t, out=buf[:h*n*l].view(h, n, l)). The scores are scaled
// and masked in their buffer, the only copy there is; both buffers go back
// to the pool before it returns, on error too. It returns a new tensor and
// leaves q, Kt and V to the caller. It is what [PooledScores] changes in a
// forward pass, the model's own or one given as a [Forward].
func PooledAttention(q, Kt, V, mask *tensor.Tensor, scores *pool.TensorPool) (o *tensor.Tensor, err error) {
	if scores == nil {
		return nil, errors.New("model: pooled-scores mode without a pool of score buffers")
	}
	qs, ks := q.Shape(), Kt.Shape()
	if len(qs) < 2 || len(ks) != len(qs) {
		return nil, fmt.Errorf("model: PooledAttention: queries %v and transposed keys %v: want [.., n, hd] and [.., hd, L]", qs, ks)
	}
	shape := append(slices.Clone(qs[:len(qs)-1]), ks[len(ks)-1]) // [.., n, L]
	numel := 1
	for _, d := range shape {
		numel *= d
	}
	var bufs, views []*tensor.Tensor
	defer func() {
		errs := []error{err, tensor.ReleaseLive(views...)} // views first: Put refuses a viewed buffer
		for _, b := range bufs {
			errs = append(errs, scores.Put(b))
		}
		err = errors.Join(errs...)
	}()
	buffer := func() (*tensor.Tensor, error) {
		b, err := scores.Get()
		if err != nil {
			return nil, err
		}
		bufs = append(bufs, b)
		if numel > b.Numel() {
			return nil, fmt.Errorf("model: attention scores %v do not fit a pooled buffer of %d elements", shape, b.Numel())
		}
		pre, err := b.Narrow(0, 0, numel)
		if err != nil {
			return nil, err
		}
		views = append(views, pre)
		v, err := pre.View(shape...)
		if err != nil {
			return nil, err
		}
		views = append(views, v)
		return v, nil
	}
	s, err := buffer()
	if err != nil {
		return nil, err
	}
	if err := tensor.MatmulInto(s, q, Kt); err != nil {
		return nil, err
	}
	if err := s.Scale_(1 / math.Sqrt(float64(qs[len(qs)-1]))); err != nil {
		return nil, err
	}
	if mask != nil {
		if err := s.Add_(mask); err != nil {
			return nil, err
		}
	}
	probs, err := buffer()
	if err != nil {
		return nil, err
	}
	if err := tensor.SoftmaxInto(probs, s, -1); err != nil {
		return nil, err
	}
	return probs.Matmul(V)
}

// splitHeads returns columns [at, at+D) of qkv as [H, n, hd]. With Views it
// only makes views; otherwise it copies twice, as ports that write
// x.contiguous().view(...).transpose(0, 1).contiguous() do.
func (p *pass) splitHeads(qkv *tensor.Tensor, at, n int) (*tensor.Tensor, error) {
	cfg := p.m.cfg
	x, err := p.track(qkv.Narrow(1, at, cfg.Dim))
	if err != nil {
		return nil, err
	}
	steps := []func(*tensor.Tensor) (*tensor.Tensor, error){
		func(t *tensor.Tensor) (*tensor.Tensor, error) { return t.View(n, cfg.Heads, cfg.HeadDim()) },
		func(t *tensor.Tensor) (*tensor.Tensor, error) { return t.Transpose(0, 1) },
	}
	if !p.has(Views) {
		contig := func(t *tensor.Tensor) (*tensor.Tensor, error) { return t.Contiguous() }
		steps = []func(*tensor.Tensor) (*tensor.Tensor, error){contig, steps[0], steps[1], contig}
	}
	for _, step := range steps {
		y, err := p.track(step(x))
		if err != nil {
			return nil, err
		}
		if err := tensor.ReleaseLive(x); err != nil {
			return nil, err
		}
		x = y
	}
	return x, nil
}

// cached appends k and v ([H, n, hd]) to layer l's cache and returns all the
// keys and values so far ([H, L, hd]). It consumes k and v.
func (p *pass) cached(l int, k, v *tensor.Tensor, kv *kvState) (K, V *tensor.Tensor, err error) {
	if p.has(KVCache) {
		if err := kv.cache.Append(l, k, v); err != nil {
			return nil, nil, err
		}
		if err := tensor.ReleaseLive(k, v); err != nil {
			return nil, nil, err
		}
		if K, err = p.track(kv.cache.Keys(l)); err != nil {
			return nil, nil, err
		}
		V, err = p.track(kv.cache.Values(l))
		return K, V, err
	}
	// torch.cat growth: a new [H, L, hd] tensor per step, the old one freed.
	grow := func(old, x *tensor.Tensor) (*tensor.Tensor, error) {
		if old == nil {
			return p.s.Keep(x), nil
		}
		y, err := tensor.Cat([]*tensor.Tensor{old, x}, 1)
		if err != nil {
			return nil, err
		}
		return p.s.Keep(y), tensor.ReleaseLive(old, x) // y may have joined x's scope
	}
	if K, err = grow(kv.k[l], k); err != nil {
		return nil, nil, err
	}
	kv.k[l] = K
	if V, err = grow(kv.v[l], v); err != nil {
		return nil, nil, err
	}
	kv.v[l] = V
	return K, V, nil
}

// scale multiplies x by alpha: in place with InPlace.
func (p *pass) scale(x *tensor.Tensor, alpha float64) (*tensor.Tensor, error) {
	if p.has(InPlace) {
		return x, x.Scale_(alpha)
	}
	y, err := p.track(x.Scale(alpha))
	if err != nil {
		return nil, err
	}
	return y, tensor.ReleaseLive(x)
}

// mergeHeads turns o [H, n, hd] into [n, D]. The transpose is not viewable
// as [n, D] when n > 1, so every mode copies then; Views' Reshape copies only
// then, and the baseline's .contiguous().view() is the naive port's spelling
// of the same.
func (p *pass) mergeHeads(o *tensor.Tensor, n, D int) (*tensor.Tensor, error) {
	ot, err := p.track(o.Transpose(0, 1))
	if err != nil {
		return nil, err
	}
	var out *tensor.Tensor
	if p.has(Views) {
		out, err = p.track(ot.Reshape(n, D))
	} else {
		var c *tensor.Tensor
		if c, err = p.track(ot.Contiguous()); err == nil {
			out, err = p.track(c.View(n, D))
			err = errors.Join(err, tensor.ReleaseLive(c))
		}
	}
	if err != nil {
		return nil, err
	}
	return out, tensor.ReleaseLive(o, ot)
}

// mlp is h + W2·gelu(W1·layernorm(h)).
func (p *pass) mlp(l int, h *tensor.Tensor) (*tensor.Tensor, error) {
	b := &p.m.blocks[l]
	a, err := p.track(h.LayerNorm(b.ln2G, b.ln2B, eps))
	if err != nil {
		return nil, err
	}
	u, err := p.track(a.Matmul(b.w1)) // [n, Hidden]
	if err != nil {
		return nil, err
	}
	if err := tensor.ReleaseLive(a); err != nil {
		return nil, err
	}
	if p.has(InPlace) {
		err = u.Gelu_()
	} else {
		var g *tensor.Tensor
		if g, err = p.track(u.Gelu()); err == nil {
			err = tensor.ReleaseLive(u)
			u = g
		}
	}
	if err != nil {
		return nil, err
	}
	d, err := p.track(u.Matmul(b.w2))
	if err != nil {
		return nil, err
	}
	if err := tensor.ReleaseLive(u); err != nil {
		return nil, err
	}
	if h, err = p.add(h, d); err != nil {
		return nil, err
	}
	return h, tensor.ReleaseLive(d)
}

// logits applies the final layernorm and the tied output projection and
// returns the last position's logits. LastLogits narrows to the last
// position first (a view); otherwise every position's logits are computed,
// as a port that returns the whole [n, Vocab] tensor does.
func (p *pass) logits(h *tensor.Tensor) ([]float32, error) {
	m := p.m
	n := h.Shape()[0]
	x := h
	var err error
	if p.has(LastLogits) && n > 1 {
		if x, err = p.track(h.Narrow(0, n-1, 1)); err != nil {
			return nil, err
		}
		if err := tensor.ReleaseLive(h); err != nil {
			return nil, err
		}
	}
	hf, err := p.track(x.LayerNorm(m.lnfG, m.lnfB, eps))
	if err != nil {
		return nil, err
	}
	if err := tensor.ReleaseLive(x); err != nil {
		return nil, err
	}
	wt, err := p.track(m.wte.T()) // [Dim, Vocab], a view
	if err != nil {
		return nil, err
	}
	lg, err := p.track(hf.Matmul(wt))
	if err != nil {
		return nil, err
	}
	if err := tensor.ReleaseLive(hf, wt); err != nil {
		return nil, err
	}
	last := lg
	if r := lg.Shape()[0]; r > 1 {
		if last, err = p.track(lg.Narrow(0, r-1, 1)); err != nil {
			return nil, err
		}
	}
	out, err := last.Float32s()
	if err != nil {
		return nil, err
	}
	return out, tensor.ReleaseLive(last, lg)
}
