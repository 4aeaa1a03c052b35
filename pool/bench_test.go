package pool_test

import (
	"testing"

	"memlab.dev/memlab/pool"
	"memlab.dev/memlab/tensor"
)

// BenchmarkGetBuffer compares a TensorPool's Get and Put with allocating and
// releasing through the caching allocator (a cache hit after the first).
func BenchmarkGetBuffer(b *testing.B) {
	shape := []int{256, 1024}
	b.Run("TensorPool", func(b *testing.B) {
		l := newLab(b)
		p, err := pool.NewTensorPool(l, tensor.Float32, shape, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer p.Release()
		for b.Loop() {
			t, err := p.Get()
			if err != nil {
				b.Fatal(err)
			}
			if err := p.Put(t); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("caching allocator", func(b *testing.B) {
		l := newLab(b)
		for b.Loop() {
			t, err := tensor.Empty(l, tensor.Float32, shape...)
			if err != nil {
				b.Fatal(err)
			}
			if err := t.Release(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkKVAppend appends one token's keys and values (4 heads × 64) to a
// cache of 1024 positions, refilled from empty as it fills, three ways.
func BenchmarkKVAppend(b *testing.B) {
	const heads, dim, maxLen = 4, 64, 1024
	b.Run("KVCache", func(b *testing.B) {
		l := newLab(b)
		c, err := pool.NewKVCache(l, tensor.Float32, 1, heads, maxLen, dim)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Release()
		tok := seqTensor(b, l, 0, heads, 1, dim)
		defer tok.Release()
		for i := 0; b.Loop(); i++ {
			if i%maxLen == 0 {
				c.Reset()
			}
			if err := c.Append(0, tok, tok); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("PagedKVCache", func(b *testing.B) {
		l := newLab(b)
		c, err := pool.NewPagedKVCache(l, tensor.Float32, pool.PagedConfig{Layers: 1, Heads: heads, HeadDim: dim, BlockSize: 16, Blocks: maxLen / 16})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Release()
		tok := seqTensor(b, l, 0, heads, 1, dim)
		defer tok.Release()
		for i := 0; b.Loop(); i++ {
			if i%maxLen == 0 {
				c.Free(0)
				if err := c.Allocate(0); err != nil {
					b.Fatal(err)
				}
			}
			if err := c.Append(0, 0, tok, tok); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("torch.cat", func(b *testing.B) {
		l := newLab(b)
		tok := seqTensor(b, l, 0, heads, 1, dim)
		defer tok.Release()
		var k *tensor.Tensor
		for i := 0; b.Loop(); i++ {
			if i%maxLen == 0 {
				if k != nil {
					k.Release()
				}
				k, _ = tok.Clone()
				continue
			}
			next, err := tensor.Cat([]*tensor.Tensor{k, tok}, 1)
			if err != nil {
				b.Fatal(err)
			}
			k.Release()
			k = next
		}
		k.Release()
	})
}
