package pool_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/pool"
	"memlab.dev/memlab/tensor"
)

// tokenRows returns the values of tokens [from, to) of a [heads, n, dim]
// tensor whose elements were numbered base, base+1, … in row-major order.
func tokenRows(base float32, heads, n, dim, from, to int) []float32 {
	var out []float32
	for h := 0; h < heads; h++ {
		for i := from; i < to; i++ {
			for d := 0; d < dim; d++ {
				out = append(out, base+float32((h*n+i)*dim+d))
			}
		}
	}
	return out
}

func TestKVCacheAppendKeysValues(t *testing.T) {
	l := newLab(t)
	const layers, heads, maxLen, dim = 2, 3, 8, 4
	c, err := pool.NewKVCache(l, tensor.Float32, layers, heads, maxLen, dim)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	allocs := l.MemoryStats()["allocation.all.allocated"]
	// A prompt of 5 tokens, then one decoded token, in layer 1.
	k1, v1 := seqTensor(t, l, 0, heads, 5, dim), seqTensor(t, l, 1000, heads, 5, dim)
	k2, v2 := seqTensor(t, l, 500, heads, 1, dim), seqTensor(t, l, 1500, heads, 1, dim)
	defer mustRelease(t, k1, v1, k2, v2)
	allocs += 4
	if err := errors.Join(c.Append(1, k1, v1), c.Append(1, k2, v2)); err != nil {
		t.Fatal(err)
	}
	if got := l.MemoryStats()["allocation.all.allocated"]; got != allocs {
		t.Errorf("Append allocated: allocation.all.allocated %d, want %d", got, allocs)
	}
	for _, tt := range []struct {
		name  string
		get   func(int) (*tensor.Tensor, error)
		base1 float32
		base2 float32
	}{{"keys", c.Keys, 0, 500}, {"values", c.Values, 1000, 1500}} {
		t.Run(tt.name, func(t *testing.T) {
			x, err := tt.get(1)
			if err != nil {
				t.Fatal(err)
			}
			defer mustRelease(t, x)
			if !x.Shape().Equal(tensor.Shape{heads, 6, dim}) {
				t.Fatalf("shape %v, want [3, 6, 4]", x.Shape())
			}
			if x.SharesStorage(k1) || x.SharesStorage(v1) {
				t.Fatal("the view shares the input's storage, not the arena's")
			}
			var want []float32
			for h := 0; h < heads; h++ {
				want = append(want, tokenRows(tt.base1, heads, 5, dim, 0, 5)[h*5*dim:(h+1)*5*dim]...)
				want = append(want, tokenRows(tt.base2, heads, 1, dim, 0, 1)[h*dim:(h+1)*dim]...)
			}
			if got := values(t, x); !slices.Equal(got, want) {
				t.Errorf("values\n got %v\nwant %v", got, want)
			}
			empty, err := tt.get(0)
			if err != nil {
				t.Fatal(err)
			}
			defer mustRelease(t, empty)
			if empty.Numel() != 0 {
				t.Errorf("layer 0 holds %v, want no tokens", empty.Shape())
			}
		})
	}
	if n, _ := c.Len(1); n != 6 {
		t.Errorf("Len(1) = %d, want 6", n)
	}
	c.Reset()
	if n, _ := c.Len(1); n != 0 {
		t.Errorf("Len(1) after Reset = %d", n)
	}
}

func TestKVCacheViewsShareTheArena(t *testing.T) {
	l := newLab(t)
	c, err := pool.NewKVCache(l, tensor.Float32, 1, 2, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	k, v := seqTensor(t, l, 1, 2, 2, 2), seqTensor(t, l, 1, 2, 2, 2)
	defer mustRelease(t, k, v)
	if err := c.Append(0, k, v); err != nil {
		t.Fatal(err)
	}
	keys, _ := c.Keys(0)
	vals, _ := c.Values(0)
	defer mustRelease(t, keys, vals)
	if !keys.SharesStorage(vals) || keys.SharesStorage(k) {
		t.Error("Keys and Values must be views of the one arena, not of the inputs")
	}
	if keys.IsContiguous() || keys.Strides()[0] != c.MaxLen()*c.HeadDim() {
		t.Errorf("keys of 2 of 4 positions over 2 heads: strides %v, want rows maxLen × headDim apart", keys.Strides())
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	if keys.Storage().Refs() == 0 {
		t.Error("Release freed the arena under live views")
	}
}

func TestKVCacheErrors(t *testing.T) {
	l := newLab(t)
	c, err := pool.NewKVCache(l, tensor.Float32, 2, 2, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	ok3 := seqTensor(t, l, 0, 2, 3, 3)
	ok2 := seqTensor(t, l, 0, 2, 2, 3)
	badHeads := seqTensor(t, l, 0, 3, 1, 3)
	badDim := seqTensor(t, l, 0, 2, 1, 4)
	f16, _ := tensor.Zeros(l, tensor.Float16, 2, 1, 3)
	defer mustRelease(t, ok3, ok2, badHeads, badDim, f16)
	if err := c.Append(0, ok3, ok3); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		layer int
		k, v  *tensor.Tensor
		is    error
		want  string
	}{
		{"too long", 0, ok2, ok2, pool.ErrCacheFull, "3 cached + 2 new tokens > max length 4"},
		{"layer out of range", 2, ok2, ok2, nil, "layer 2 out of range"},
		{"negative layer", -1, ok2, ok2, nil, "layer -1 out of range"},
		{"wrong heads", 1, badHeads, badHeads, nil, "want [2, n, 3]"},
		{"wrong head dim", 1, badDim, badDim, nil, "want [2, n, 3]"},
		{"k and v differ", 1, ok3, ok2, nil, "differ in shape"},
		{"wrong dtype", 1, f16, f16, nil, "float16"},
		{"nil", 1, nil, ok2, nil, "nil keys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Append(tt.layer, tt.k, tt.v)
			if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
			if n, _ := c.Len(0); n != 3 {
				t.Errorf("a failed Append changed Len(0) to %d", n)
			}
		})
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Keys(0); err == nil || !strings.Contains(err.Error(), "released") {
		t.Errorf("Keys after Release: %v", err)
	}
}

func TestNewKVCacheInRejects(t *testing.T) {
	l := newLab(t)
	good, _ := tensor.Empty(l, tensor.Float32, 1, 2, 2, 4, 8)
	threeLong, _ := tensor.Empty(l, tensor.Float32, 1, 3, 2, 4, 8)
	fourD, _ := tensor.Empty(l, tensor.Float32, 2, 2, 4, 8)
	zero, _ := tensor.Empty(l, tensor.Float32, 1, 2, 0, 4, 8)
	strided, _ := good.Transpose(3, 4)
	defer mustRelease(t, good, threeLong, fourD, zero, strided)
	tests := []struct {
		name  string
		arena *tensor.Tensor
		want  string
	}{
		{"nil", nil, "nil arena"},
		{"second dim not 2", threeLong, "want [layers, 2, heads, maxLen, headDim]"},
		{"4-D", fourD, "want [layers, 2"},
		{"no heads", zero, "heads = 0"},
		{"not contiguous", strided, "not contiguous"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := pool.NewKVCacheIn(tt.arena); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
	c, err := pool.NewKVCacheIn(good)
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxLen() != 4 || c.Heads() != 2 || c.HeadDim() != 8 || c.Layers() != 1 {
		t.Errorf("sizes %d %d %d %d", c.Layers(), c.Heads(), c.MaxLen(), c.HeadDim())
	}
	if err := c.Release(); err != nil || good.Released() {
		t.Errorf("Release of a cache over a caller's arena: %v, arena released %v", err, good.Released())
	}
}

// TestKVCacheFromTensorPool reuses one arena across requests through a
// TensorPool: the second request allocates nothing.
func TestKVCacheFromTensorPool(t *testing.T) {
	l := newLab(t)
	p, err := pool.NewTensorPool(l, tensor.Float32, pool.KVCacheArenaShape(2, 2, 16, 4), 0)
	if err != nil {
		t.Fatal(err)
	}
	k := seqTensor(t, l, 0, 2, 3, 4)
	defer mustRelease(t, k)
	for req := 0; req < 3; req++ {
		arena, err := p.Get()
		if err != nil {
			t.Fatal(err)
		}
		c, err := pool.NewKVCacheIn(arena)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Append(0, k, k); err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(c.Release(), p.Put(arena)); err != nil {
			t.Fatal(err)
		}
	}
	if st := p.Stats(); st.Misses != 1 || st.Hits != 2 {
		t.Errorf("three requests: %+v, want 1 miss and 2 hits", st)
	}
	if err := p.Release(); err != nil {
		t.Fatal(err)
	}
}
