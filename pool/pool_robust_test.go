package pool_test

import (
	"errors"
	"fmt"
	"testing"

	"memlab.dev/memlab/internal/robusttest"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/pool"
	"memlab.dev/memlab/tensor"
)

var noPanic = robusttest.NoPanic
var wantErr = robusttest.WantErr

// memory is what a failed call must leave as it was.
type memory struct{ allocated, reserved int64 }

func memOf(l *memlab.Lab) memory { return memory{l.MemoryAllocated(), l.MemoryReserved()} }

func TestRobustPoolConstructorsRejectBadSizes(t *testing.T) {
	l := newLab(t)
	before := memOf(l)
	ctors := []struct {
		what  string
		f     func() error
		words []string
	}{
		{"TensorPool nil device", func() error { _, err := pool.NewTensorPool(nil, tensor.Float32, []int{2}, 0); return err }, []string{"nil"}},
		{"TensorPool negative size", func() error { _, err := pool.NewTensorPool(l, tensor.Float32, []int{2, -1}, 0); return err }, []string{"-1"}},
		{"TensorPool negative limit", func() error { _, err := pool.NewTensorPool(l, tensor.Float32, []int{2}, -1); return err }, []string{"-1"}},
		{"TensorPool bad dtype", func() error { _, err := pool.NewTensorPool(l, tensor.DType(99), []int{2}, 0); return err }, []string{"dtype"}},
		{"TensorPool overflowing shape", func() error {
			_, err := pool.NewTensorPool(l, tensor.Float32, []int{1 << 40, 1 << 40}, 0)
			return err
		}, []string{"overflow"}},
		{"KVCache nil device", func() error { _, err := pool.NewKVCache(nil, tensor.Float32, 1, 1, 4, 8); return err }, []string{"nil"}},
		{"KVCache bad dtype", func() error { _, err := pool.NewKVCache(l, tensor.DType(99), 1, 1, 4, 8); return err }, []string{"dtype"}},
		{"NewKVCacheIn(nil)", func() error { _, err := pool.NewKVCacheIn(nil); return err }, []string{"nil"}},
		{"Paged nil device", func() error {
			_, err := pool.NewPagedKVCache(nil, tensor.Float32, pool.PagedConfig{Layers: 1, Heads: 1, HeadDim: 8, BlockSize: 4, Blocks: 4})
			return err
		}, []string{"nil"}},
		{"Paged overflowing", func() error {
			_, err := pool.NewPagedKVCache(l, tensor.Float32, pool.PagedConfig{Layers: 1 << 20, Heads: 1 << 20, HeadDim: 1 << 20, BlockSize: 1 << 20, Blocks: 1 << 20})
			return err
		}, []string{"overflow"}},
	}
	for _, sizes := range [][4]int{{0, 1, 4, 8}, {1, 0, 4, 8}, {1, 1, 0, 8}, {1, 1, 4, 0}, {-1, 1, 4, 8}, {1, -1, 4, 8}, {1, 1, -4, 8}, {1, 1, 4, -8}, {1 << 20, 1 << 20, 1 << 20, 1 << 20}} {
		sizes := sizes
		ctors = append(ctors, struct {
			what  string
			f     func() error
			words []string
		}{fmt.Sprintf("KVCache%v", sizes), func() error {
			c, err := pool.NewKVCache(l, tensor.Float32, sizes[0], sizes[1], sizes[2], sizes[3])
			if err == nil {
				c.Release()
			}
			return err
		}, nil})
	}
	for _, cfg := range []pool.PagedConfig{
		{Layers: 0, Heads: 1, HeadDim: 8, BlockSize: 4, Blocks: 4},
		{Layers: 1, Heads: 0, HeadDim: 8, BlockSize: 4, Blocks: 4},
		{Layers: 1, Heads: 1, HeadDim: 0, BlockSize: 4, Blocks: 4},
		{Layers: 1, Heads: 1, HeadDim: 8, BlockSize: 0, Blocks: 4},
		{Layers: 1, Heads: 1, HeadDim: 8, BlockSize: 4, Blocks: 0},
		{Layers: 1, Heads: 1, HeadDim: 8, BlockSize: -4, Blocks: 4},
		{Layers: 1, Heads: 1, HeadDim: 8, BlockSize: 4, Blocks: -1},
	} {
		cfg := cfg
		ctors = append(ctors, struct {
			what  string
			f     func() error
			words []string
		}{fmt.Sprintf("Paged%+v", cfg), func() error {
			c, err := pool.NewPagedKVCache(l, tensor.Float32, cfg)
			if err == nil {
				c.Release()
			}
			return err
		}, nil})
	}
	for _, c := range ctors {
		noPanic(t, c.what, func() {
			err := c.f()
			t.Logf("%s: %v", c.what, err)
			wantErr(t, c.what, err, c.words...)
		})
		if got := memOf(l); got != before {
			t.Errorf("%s changed memory: %+v -> %+v", c.what, before, got)
		}
	}
	// NewKVCacheIn of arenas that are not [layers, 2, heads, maxLen, headDim] and contiguous.
	bad := map[string][]int{"rank 4": {1, 2, 4, 8}, "second dim 3": {1, 3, 1, 4, 8}, "empty": {1, 2, 1, 0, 8}}
	for name, shape := range bad {
		a, err := tensor.Empty(l, tensor.Float32, shape...)
		if err != nil {
			t.Fatal(err)
		}
		noPanic(t, "NewKVCacheIn "+name, func() {
			c, err := pool.NewKVCacheIn(a)
			if err == nil {
				c.Release()
			}
			wantErr(t, "NewKVCacheIn "+name, err)
		})
		a.Release()
	}
	a, _ := tensor.Empty(l, tensor.Float32, 1, 2, 1, 4, 8)
	at, _ := a.Transpose(3, 4)
	noPanic(t, "NewKVCacheIn non-contiguous", func() {
		_, err := pool.NewKVCacheIn(at)
		wantErr(t, "NewKVCacheIn non-contiguous", err, "contiguous")
	})
	at.Release()
	a.Release()
	noPanic(t, "NewKVCacheIn released", func() {
		_, err := pool.NewKVCacheIn(a)
		wantErr(t, "NewKVCacheIn released", err, "released")
	})
}

// Put of nil, foreign, released, wrong-shape and double-put tensors: each an
// error that changes nothing.
func TestRobustPutBadTensors(t *testing.T) {
	l := newLab(t)
	p, err := pool.NewTensorPool(l, tensor.Float32, []int{4, 4}, 2)
	if err != nil {
		t.Fatal(err)
	}
	other, err := pool.NewTensorPool(l, tensor.Float32, []int{4, 4}, 0)
	if err != nil {
		t.Fatal(err)
	}
	x, err := p.Get()
	if err != nil {
		t.Fatal(err)
	}
	y, err := other.Get()
	if err != nil {
		t.Fatal(err)
	}
	view, err := x.View(16)
	if err != nil {
		t.Fatal(err)
	}
	wrong, _ := tensor.Empty(l, tensor.Float32, 2, 8)
	half, _ := tensor.Empty(l, tensor.Float16, 4, 4)
	stats, mem := p.Stats(), memOf(l)
	noPanic(t, "Put", func() {
		wantErr(t, "Put(nil)", p.Put(nil), "nil")
		if err := p.Put(y); !errors.Is(err, pool.ErrForeign) {
			t.Errorf("Put of another pool's tensor: %v", err)
		}
		if err := p.Put(view); !errors.Is(err, pool.ErrWrongShape) && !errors.Is(err, pool.ErrForeign) {
			t.Errorf("Put of a view: %v", err)
		}
		if err := p.Put(x); !errors.Is(err, pool.ErrStillViewed) {
			t.Errorf("Put of a viewed tensor: %v", err)
		}
		if err := p.Put(wrong); !errors.Is(err, pool.ErrWrongShape) {
			t.Errorf("Put of a [2, 8]: %v", err)
		}
		if err := p.Put(half); !errors.Is(err, pool.ErrWrongShape) {
			t.Errorf("Put of a float16: %v", err)
		}
	})
	if got := p.Stats(); got != stats {
		t.Errorf("failed Puts changed the stats: %+v -> %+v", stats, got)
	}
	if got := memOf(l); got != mem {
		t.Errorf("failed Puts changed memory: %+v -> %+v", mem, got)
	}
	view.Release()
	if err := p.Put(x); err != nil {
		t.Fatal(err)
	}
	if err := p.Put(x); !errors.Is(err, pool.ErrDoublePut) {
		t.Errorf("second Put: %v", err)
	}
	// A released tensor: an error, and the pool forgets it (its limit frees up).
	z, err := p.Get()
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Get()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Get(); !errors.Is(err, pool.ErrExhausted) {
		t.Errorf("Get past the limit: %v", err)
	}
	z.Release()
	wantErr(t, "Put of a released tensor", p.Put(z), "released")
	z2, err := p.Get()
	if err != nil {
		t.Errorf("Get after a released tensor was forgotten: %v", err)
	} else if err := p.Put(z2); err != nil {
		t.Error(err)
	}
	if err := p.Put(w); err != nil {
		t.Fatal(err)
	}
	wrong.Release()
	half.Release()
	if err := other.Put(y); err != nil {
		t.Fatal(err)
	}
	if err := other.Release(); err != nil {
		t.Fatal(err)
	}
	if err := p.Release(); err != nil {
		t.Fatal(err)
	}
	if err := p.Release(); err != nil {
		t.Errorf("second Release: %v", err)
	}
	if _, err := p.Get(); !errors.Is(err, pool.ErrClosed) {
		t.Errorf("Get after Release: %v", err)
	}
	if got := l.MemoryAllocated(); got != 0 {
		t.Errorf("after releasing everything %d bytes are allocated", got)
	}
}

// KVCache and PagedKVCache: bad layers, sequences, shapes and appends past
// capacity are errors that change nothing.
func TestRobustKVCacheBadCalls(t *testing.T) {
	l := newLab(t)
	c, err := pool.NewKVCache(l, tensor.Float32, 2, 2, 4, 8)
	if err != nil {
		t.Fatal(err)
	}
	k := seqTensor(t, l, 0, 2, 3, 8)
	k2 := seqTensor(t, l, 0, 2, 2, 8)
	wrongHeads := seqTensor(t, l, 0, 3, 1, 8)
	wrongDim := seqTensor(t, l, 0, 2, 1, 4)
	flat := seqTensor(t, l, 0, 16)
	half, _ := tensor.Zeros(l, tensor.Float16, 2, 1, 8)
	dead := seqTensor(t, l, 0, 2, 1, 8)
	dead.Release()
	defer mustRelease(t, k, k2, wrongHeads, wrongDim, flat, half)
	if err := c.Append(0, k, k); err != nil {
		t.Fatal(err)
	}
	mem := memOf(l)
	noPanic(t, "KVCache", func() {
		if err := c.Append(0, k2, k2); !errors.Is(err, pool.ErrCacheFull) {
			t.Errorf("Append past maxLen: %v", err)
		}
		for _, layer := range []int{-1, 2, 1 << 40} {
			wantErr(t, fmt.Sprintf("Append(layer %d)", layer), c.Append(layer, k, k), "layer")
			if _, err := c.Keys(layer); err == nil {
				t.Errorf("Keys(%d) succeeded", layer)
			}
			if _, err := c.Values(layer); err == nil {
				t.Errorf("Values(%d) succeeded", layer)
			}
			if _, err := c.Len(layer); err == nil {
				t.Errorf("Len(%d) succeeded", layer)
			}
		}
		wantErr(t, "Append(nil)", c.Append(1, nil, k), "nil")
		wantErr(t, "Append(k, nil)", c.Append(1, k, nil), "nil")
		wantErr(t, "Append(released)", c.Append(1, dead, dead), "released")
		wantErr(t, "Append(wrong heads)", c.Append(1, wrongHeads, wrongHeads))
		wantErr(t, "Append(wrong head dim)", c.Append(1, wrongDim, wrongDim))
		wantErr(t, "Append(1-D)", c.Append(1, flat, flat))
		wantErr(t, "Append(float16)", c.Append(1, half, half))
		wantErr(t, "Append(k and v of different lengths)", c.Append(1, k, k2))
	})
	if n, _ := c.Len(0); n != 3 {
		t.Errorf("failed appends changed layer 0's length to %d", n)
	}
	if n, _ := c.Len(1); n != 0 {
		t.Errorf("failed appends changed layer 1's length to %d", n)
	}
	if got := memOf(l); got != mem {
		t.Errorf("failed appends changed memory: %+v -> %+v", mem, got)
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	noPanic(t, "KVCache after Release", func() {
		wantErr(t, "Append after Release", c.Append(0, k, k))
		if _, err := c.Keys(0); err == nil {
			t.Error("Keys after Release succeeded")
		}
		c.Reset()
		if err := c.Release(); err != nil {
			t.Errorf("second Release: %v", err)
		}
	})

	pc, err := pool.NewPagedKVCache(l, tensor.Float32, pool.PagedConfig{Layers: 2, Heads: 2, HeadDim: 8, BlockSize: 2, Blocks: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Allocate(7); err != nil {
		t.Fatal(err)
	}
	if err := pc.Append(7, 0, k2, k2); err != nil {
		t.Fatal(err)
	}
	stats, mem := pc.Stats(), memOf(l)
	noPanic(t, "PagedKVCache", func() {
		wantErr(t, "Allocate twice", pc.Allocate(7), "7")
		if err := pc.Append(7, 0, k, k); !errors.Is(err, pool.ErrCacheFull) { // needs 2 more blocks, 1 free
			t.Errorf("Append past the free blocks: %v", err)
		}
		for _, seq := range []int{-1, 8} {
			wantErr(t, "Append to unknown seq", pc.Append(seq, 0, k2, k2), fmt.Sprint(seq))
			wantErr(t, "Free unknown seq", pc.Free(seq), fmt.Sprint(seq))
			if _, err := pc.Blocks(seq); err == nil {
				t.Errorf("Blocks(%d) succeeded", seq)
			}
			if _, err := pc.Len(seq); err == nil {
				t.Errorf("Len(%d) succeeded", seq)
			}
			if _, _, err := pc.Gather(seq, 0); err == nil {
				t.Errorf("Gather(%d) succeeded", seq)
			}
		}
		for _, layer := range []int{-1, 2} {
			wantErr(t, "Append to bad layer", pc.Append(7, layer, k2, k2), "layer")
			if _, _, err := pc.Gather(7, layer); err == nil {
				t.Errorf("Gather(layer %d) succeeded", layer)
			}
		}
		wantErr(t, "Paged Append(nil)", pc.Append(7, 1, nil, k2), "nil")
		wantErr(t, "Paged Append(released)", pc.Append(7, 1, dead, dead), "released")
		wantErr(t, "Paged Append(wrong heads)", pc.Append(7, 1, wrongHeads, wrongHeads))
		wantErr(t, "Paged Append(float16)", pc.Append(7, 1, half, half))
		wantErr(t, "Paged Append(k and v differ)", pc.Append(7, 1, k, k2))
	})
	if got := pc.Stats(); got != stats {
		t.Errorf("failed calls changed the paged stats: %+v -> %+v", stats, got)
	}
	if got := memOf(l); got != mem {
		t.Errorf("failed paged calls changed memory: %+v -> %+v", mem, got)
	}
	if err := pc.Free(7); err != nil {
		t.Fatal(err)
	}
	if err := pc.Release(); err != nil {
		t.Fatal(err)
	}
	noPanic(t, "PagedKVCache after Release", func() {
		wantErr(t, "Allocate after Release", pc.Allocate(1))
		_ = pc.Stats()
		if err := pc.Release(); err != nil {
			t.Errorf("second Release: %v", err)
		}
	})
}

// Many goroutines putting back the same tensor, and releasing the pool while
// they do: exactly one Put is accepted, and the pool's accounting stays whole.
func TestRobustConcurrentDoublePut(t *testing.T) {
	l := newLab(t)
	p, err := pool.NewTensorPool(l, tensor.Float32, []int{64}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 20; round++ {
		x, err := p.Get()
		if err != nil {
			t.Fatal(err)
		}
		const n = 8
		errs := make(chan error, n)
		start := make(chan struct{})
		for range n {
			go func() {
				<-start
				errs <- p.Put(x)
			}()
		}
		close(start)
		accepted := 0
		for range n {
			err := <-errs
			switch {
			case err == nil:
				accepted++
			case !errors.Is(err, pool.ErrDoublePut):
				t.Errorf("concurrent Put: %v", err)
			}
		}
		if accepted != 1 {
			t.Fatalf("round %d: %d concurrent Puts of one tensor accepted", round, accepted)
		}
		if s := p.Stats(); s.Outstanding != 0 || s.Idle != 1 {
			t.Fatalf("round %d: stats %+v, want 1 idle and none outstanding", round, s)
		}
	}
	if err := p.Release(); err != nil {
		t.Fatal(err)
	}
	if got := l.MemoryAllocated(); got != 0 {
		t.Errorf("%d bytes allocated after Release", got)
	}
}
