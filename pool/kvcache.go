package pool

import (
	"errors"
	"fmt"
	"sync"

	"memlab.dev/memlab/tensor"
)

// ErrCacheFull is wrapped by Append when the new tokens do not fit in a
// KVCache's maximum length or a PagedKVCache's free blocks.
var ErrCacheFull = errors.New("pool: KV cache full")

// KVCache is the key/value cache of one sequence being decoded, preallocated
// for a maximum length: one arena of shape [layers, 2, heads, maxLen, headDim]
// (index 0 of the second dimension holds keys, 1 values), so that decoding
// makes no allocation for the cache, unlike growing it with torch.cat every
// step. Append copies new keys and values into views of the arena; Keys and
// Values return views up to the current length; Reset empties it for the next
// sequence without freeing anything.
//
// A KVCache is safe for concurrent use.
type KVCache struct {
	layers, heads, maxLen, headDim int

	arena *tensor.Tensor
	owned bool // Release releases arena

	mu       sync.Mutex
	lens     []int // tokens cached per layer
	released bool
}

// NewKVCache allocates a cache of layers × (keys, values) × heads × maxLen ×
// headDim elements of dtype on dev, in one allocation.
func NewKVCache(dev tensor.Device, dtype tensor.DType, layers, heads, maxLen, headDim int) (*KVCache, error) {
	if err := positive("NewKVCache", "layers", layers, "heads", heads, "maxLen", maxLen, "headDim", headDim); err != nil {
		return nil, err
	}
	arena, err := tensor.Empty(dev, dtype, layers, 2, heads, maxLen, headDim)
	if err != nil {
		return nil, fmt.Errorf("pool: NewKVCache: %w", err)
	}
	c, err := NewKVCacheIn(arena)
	if err != nil {
		return nil, errors.Join(err, arena.Release())
	}
	c.owned = true
	return c, nil
}

// KVCacheArenaShape returns the shape of the arena a KVCache of these sizes
// uses: [layers, 2, heads, maxLen, headDim]. A TensorPool of that shape hands
// out arenas for NewKVCacheIn, so that requests reuse one another's caches.
func KVCacheArenaShape(layers, heads, maxLen, headDim int) []int {
	return []int{layers, 2, heads, maxLen, headDim}
}

// NewKVCacheIn makes a cache over arena, a contiguous tensor of shape [layers,
// 2, heads, maxLen, headDim] the caller owns (for example one from a
// TensorPool): Release then leaves the arena alone. The cache starts empty
// whatever the arena holds.
func NewKVCacheIn(arena *tensor.Tensor) (*KVCache, error) {
	if arena == nil {
		return nil, errors.New("pool: NewKVCacheIn: nil arena")
	}
	if arena.Released() {
		return nil, fmt.Errorf("pool: NewKVCacheIn: %w", tensor.ErrReleased)
	}
	s := arena.Shape()
	if len(s) != 5 || s[1] != 2 {
		return nil, fmt.Errorf("pool: NewKVCacheIn: arena shape %v, want [layers, 2, heads, maxLen, headDim]", s)
	}
	if err := positive("NewKVCacheIn", "layers", s[0], "heads", s[2], "maxLen", s[3], "headDim", s[4]); err != nil {
		return nil, err
	}
	if !arena.IsContiguous() {
		return nil, fmt.Errorf("pool: NewKVCacheIn: arena with strides %v is not contiguous", arena.Strides())
	}
	return &KVCache{layers: s[0], heads: s[2], maxLen: s[3], headDim: s[4], arena: arena, lens: make([]int, s[0])}, nil
}

// Layers returns the number of layers the cache holds.
func (c *KVCache) Layers() int { return c.layers }

// Heads returns the number of attention heads the cache holds.
func (c *KVCache) Heads() int { return c.heads }

// MaxLen returns the most tokens the cache holds per layer.
func (c *KVCache) MaxLen() int { return c.maxLen }

// HeadDim returns the size of one head's key and value vectors.
func (c *KVCache) HeadDim() int { return c.headDim }

// Nbytes returns the device bytes of the cache's arena.
func (c *KVCache) Nbytes() int64 { return c.arena.Nbytes() }

// Len returns the number of tokens cached for layer.
func (c *KVCache) Len(layer int) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check("Len", layer); err != nil {
		return 0, err
	}
	return c.lens[layer], nil
}

// Append copies the keys and values of n new tokens, k and v of shape [heads,
// n, headDim] and the cache's dtype, after the tokens already cached for
// layer. It fails with ErrCacheFull, changing nothing, when they do not fit.
func (c *KVCache) Append(layer int, k, v *tensor.Tensor) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check("Append", layer); err != nil {
		return err
	}
	n, err := tokens("KVCache.Append", c.heads, c.headDim, c.arena.DType(), k, v)
	if err != nil {
		return err
	}
	at := c.lens[layer]
	if at+n > c.maxLen {
		return fmt.Errorf("pool: KVCache.Append: layer %d: %d cached + %d new tokens > max length %d: %w", layer, at, n, c.maxLen, ErrCacheFull)
	}
	for i, src := range []*tensor.Tensor{k, v} {
		if err := copyInto(c.arena, []int{layer, i}, at, src, 0, n); err != nil {
			return fmt.Errorf("pool: KVCache.Append: layer %d: %w", layer, err)
		}
	}
	c.lens[layer] = at + n
	return nil
}

// Keys returns a view of the keys cached for layer, shape [heads, Len(layer),
// headDim] (strided: its rows are maxLen apart). The caller releases it; it
// reads what later Appends and Resets write.
func (c *KVCache) Keys(layer int) (*tensor.Tensor, error) { return c.view("Keys", layer, 0) }

// Values returns a view of the values cached for layer, as Keys.
func (c *KVCache) Values(layer int) (*tensor.Tensor, error) { return c.view("Values", layer, 1) }

func (c *KVCache) view(op string, layer, which int) (*tensor.Tensor, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(op, layer); err != nil {
		return nil, err
	}
	t, err := subview(c.arena, []int{layer, which}, 0, c.lens[layer])
	if err != nil {
		return nil, fmt.Errorf("pool: KVCache.%s: %w", op, err)
	}
	return t, nil
}

// Reset empties the cache for the next sequence, keeping its memory.
func (c *KVCache) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.lens)
}

// Release frees the arena if NewKVCache allocated it (an arena given to
// NewKVCacheIn stays the caller's). Further calls do nothing; other methods
// fail afterwards. Views returned by Keys and Values keep the arena's memory
// alive until they are released too.
func (c *KVCache) Release() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.released {
		return nil
	}
	c.released = true
	if c.owned {
		return c.arena.Release()
	}
	return nil
}

func (c *KVCache) check(op string, layer int) error {
	if c.released {
		return fmt.Errorf("pool: KVCache.%s: cache is released", op)
	}
	if layer < 0 || layer >= c.layers {
		return fmt.Errorf("pool: KVCache.%s: layer %d out of range [0, %d)", op, layer, c.layers)
	}
	return nil
}

// positive checks that each named size (name, value pairs) is at least 1.
func positive(op string, kv ...any) error {
	for i := 0; i < len(kv); i += 2 {
		if v := kv[i+1].(int); v < 1 {
			return fmt.Errorf("pool: %s: %s = %d, must be at least 1", op, kv[i], v)
		}
	}
	return nil
}

// tokens checks that k and v are live [heads, n, headDim] tensors of dtype
// and returns n.
func tokens(op string, heads, headDim int, dtype tensor.DType, k, v *tensor.Tensor) (int, error) {
	if k == nil || v == nil {
		return 0, fmt.Errorf("pool: %s: nil keys or values", op)
	}
	if k.Released() || v.Released() {
		return 0, fmt.Errorf("pool: %s: %w", op, tensor.ErrReleased)
	}
	ks, vs := k.Shape(), v.Shape()
	if !ks.Equal(vs) {
		return 0, fmt.Errorf("pool: %s: keys %v and values %v differ in shape", op, ks, vs)
	}
	if len(ks) != 3 || ks[0] != heads || ks[2] != headDim {
		return 0, fmt.Errorf("pool: %s: keys of shape %v, want [%d, n, %d] ([heads, tokens, headDim])", op, ks, heads, headDim)
	}
	if k.DType() != dtype || v.DType() != dtype {
		return 0, fmt.Errorf("pool: %s: keys %v and values %v, cache holds %v", op, k.DType(), v.DType(), dtype)
	}
	return ks[1], nil
}

// subview returns arena[index...][:, start:start+n, :]: the leading
// dimensions selected by index, then n tokens of the token dimension (the
// second of the three left). Intermediate handles are released.
func subview(arena *tensor.Tensor, index []int, start, n int) (*tensor.Tensor, error) {
	t := arena
	for _, i := range index {
		next, err := t.Select(0, i)
		if t != arena {
			err = errors.Join(err, t.Release())
		}
		if err != nil {
			return nil, errors.Join(err, tensor.ReleaseAll(next))
		}
		t = next
	}
	out, err := t.Narrow(1, start, n)
	if t != arena {
		err = errors.Join(err, t.Release())
	}
	if err != nil {
		return nil, errors.Join(err, tensor.ReleaseAll(out))
	}
	return out, nil
}

// copyInto copies tokens [from, from+n) of src ([heads, tokens, headDim]) to
// tokens [at, at+n) of arena[index...].
func copyInto(arena *tensor.Tensor, index []int, at int, src *tensor.Tensor, from, n int) error {
	dst, err := subview(arena, index, at, n)
	if err != nil {
		return err
	}
	s := src
	if from != 0 || n != src.Shape()[1] {
		if s, err = src.Narrow(1, from, n); err != nil {
			return errors.Join(err, dst.Release())
		}
	}
	err = dst.CopyFrom(s)
	if s != src {
		err = errors.Join(err, s.Release())
	}
	return errors.Join(err, dst.Release())
}
