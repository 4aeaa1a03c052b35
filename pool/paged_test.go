package pool_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"memlab.dev/memlab/pool"
	"memlab.dev/memlab/tensor"
)

func newPaged(t testing.TB, l tensor.Device, cfg pool.PagedConfig) *pool.PagedKVCache {
	t.Helper()
	c, err := pool.NewPagedKVCache(l, tensor.Float32, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Release() })
	return c
}

func TestPagedAppendGather(t *testing.T) {
	l := newLab(t)
	const heads, dim, B = 2, 3, 4
	c := newPaged(t, l, pool.PagedConfig{Layers: 2, Heads: heads, HeadDim: dim, BlockSize: B, Blocks: 8})
	if err := errors.Join(c.Allocate(7), c.Allocate(9)); err != nil {
		t.Fatal(err)
	}
	// Sequence 7: a 6-token prompt then 3 single tokens, interleaved with
	// sequence 9, so that their blocks alternate in the arena.
	var wantK, wantV [][]float32 // per head, the token rows in order
	wantK, wantV = make([][]float32, heads), make([][]float32, heads)
	add := func(seq, n int, base float32) {
		k, v := seqTensor(t, l, base, heads, n, dim), seqTensor(t, l, base+0.5, heads, n, dim)
		defer mustRelease(t, k, v)
		for layer := 0; layer < 2; layer++ {
			if err := c.Append(seq, layer, k, v); err != nil {
				t.Fatal(err)
			}
		}
		if seq == 7 {
			kv, vv := values(t, k), values(t, v)
			for h := 0; h < heads; h++ {
				wantK[h] = append(wantK[h], kv[h*n*dim:(h+1)*n*dim]...)
				wantV[h] = append(wantV[h], vv[h*n*dim:(h+1)*n*dim]...)
			}
		}
	}
	add(7, 6, 0)
	add(9, 5, 100)
	for i := 0; i < 3; i++ {
		add(7, 1, float32(200+10*i))
		add(9, 1, float32(300+10*i))
	}
	if n, _ := c.Len(7); n != 9 {
		t.Fatalf("Len(7) = %d, want 9", n)
	}
	b7, _ := c.Blocks(7)
	b9, _ := c.Blocks(9)
	if len(b7) != 3 || len(b9) != 2 {
		t.Fatalf("block tables %v and %v, want 3 and 2 blocks (9 and 8 tokens of 4)", b7, b9)
	}
	if !slices.Equal(b7[:2], []int{0, 1}) {
		t.Errorf("sequence 7's prompt took blocks %v, want the lowest ids [0 1]", b7[:2])
	}
	st := c.Stats()
	want := pool.PagedStats{BlockSize: B, Blocks: 8, Used: 5, Free: 3, Sequences: 2, Tokens: 17, Waste: 3*4 - 9 + 2*4 - 8}
	if st != want {
		t.Errorf("Stats = %+v, want %+v", st, want)
	}
	for layer := 0; layer < 2; layer++ {
		k, v, err := c.Gather(7, layer)
		if err != nil {
			t.Fatal(err)
		}
		if !k.Shape().Equal(tensor.Shape{heads, 9, dim}) || !k.IsContiguous() {
			t.Errorf("Gather shape %v contiguous %v", k.Shape(), k.IsContiguous())
		}
		if got, want := values(t, k), slices.Concat(wantK...); !slices.Equal(got, want) {
			t.Errorf("layer %d keys\n got %v\nwant %v", layer, got, want)
		}
		if got, want := values(t, v), slices.Concat(wantV...); !slices.Equal(got, want) {
			t.Errorf("layer %d values\n got %v\nwant %v", layer, got, want)
		}
		mustRelease(t, k, v)
	}
	if err := c.Free(7); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Free != 6 || st.Used != 2 || st.Sequences != 1 {
		t.Errorf("after Free(7): %+v", st)
	}
}

func TestPagedErrors(t *testing.T) {
	l := newLab(t)
	c := newPaged(t, l, pool.PagedConfig{Layers: 1, Heads: 1, HeadDim: 2, BlockSize: 4, Blocks: 2})
	five := seqTensor(t, l, 0, 1, 5, 2)
	four := seqTensor(t, l, 0, 1, 4, 2)
	defer mustRelease(t, five, four)
	if err := c.Allocate(1); err != nil {
		t.Fatal(err)
	}
	if err := c.Append(1, 0, five, five); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		call func() error
		is   error
		want string
	}{
		{"allocate twice", func() error { return c.Allocate(1) }, nil, "sequence 1 already allocated"},
		{"unknown sequence", func() error { return c.Append(2, 0, four, four) }, nil, "sequence 2 is not allocated"},
		{"bad layer", func() error { return c.Append(1, 1, four, four) }, nil, "layer 1 out of range"},
		{"out of blocks", func() error { return c.Append(1, 0, four, four) }, pool.ErrCacheFull, "needs 1 more blocks, 0 free"},
		{"free unknown", func() error { return c.Free(3) }, nil, "sequence 3 is not allocated"},
		{"gather unknown", func() error { _, _, err := c.Gather(3, 0); return err }, nil, "not allocated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := c.Stats()
			err := tt.call()
			if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
			if after := c.Stats(); after != before {
				t.Errorf("a failed call changed the stats: %+v -> %+v", before, after)
			}
		})
	}
	if _, err := pool.NewPagedKVCache(l, tensor.Float32, pool.PagedConfig{Layers: 1, Heads: 1, HeadDim: 1, BlockSize: 0, Blocks: 1}); err == nil || !strings.Contains(err.Error(), "BlockSize = 0") {
		t.Errorf("BlockSize 0: %v", err)
	}
}

// TestPagedNoExternalFragmentation fills the cache with many sequences of
// random lengths, frees a random half, and checks that a new sequence gets
// exactly as many blocks as are free, whatever holes the frees left.
func TestPagedNoExternalFragmentation(t *testing.T) {
	l := newLab(t)
	const B, blocks = 4, 64
	c := newPaged(t, l, pool.PagedConfig{Layers: 1, Heads: 1, HeadDim: 1, BlockSize: B, Blocks: blocks})
	rng := rand.New(rand.NewPCG(1, 2))
	one := seqTensor(t, l, 0, 1, 1, 1)
	defer mustRelease(t, one)
	var live []int
	for seq := 0; ; seq++ {
		if err := c.Allocate(seq); err != nil {
			t.Fatal(err)
		}
		n := 1 + rng.IntN(3*B)
		x := seqTensor(t, l, 0, 1, n, 1)
		err := c.Append(seq, 0, x, x)
		mustRelease(t, x)
		if errors.Is(err, pool.ErrCacheFull) {
			if err := c.Free(seq); err != nil {
				t.Fatal(err)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, seq)
	}
	for _, seq := range live {
		if rng.IntN(2) == 0 {
			if err := c.Free(seq); err != nil {
				t.Fatal(err)
			}
		}
	}
	st := c.Stats()
	if st.Waste > st.Sequences*(B-1) {
		t.Errorf("waste %d tokens > (B-1) × %d sequences", st.Waste, st.Sequences)
	}
	free := st.Free
	if free == 0 {
		t.Fatal("the random frees freed nothing; pick another seed")
	}
	// One sequence takes every free block, token by token.
	if err := c.Allocate(-1); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < free*B; i++ {
		if err := c.Append(-1, 0, one, one); err != nil {
			t.Fatalf("token %d of %d fitting in %d free blocks: %v", i, free*B, free, err)
		}
	}
	if err := c.Append(-1, 0, one, one); !errors.Is(err, pool.ErrCacheFull) {
		t.Fatalf("one token past the free blocks: err = %v, want ErrCacheFull", err)
	}
	if st := c.Stats(); st.Free != 0 || st.Used != blocks {
		t.Errorf("after filling: %+v", st)
	}
}

// TestPagedConcurrent appends to and frees different sequences from several
// goroutines (run with -race) and checks the accounting afterwards.
func TestPagedConcurrent(t *testing.T) {
	l := newLab(t)
	c := newPaged(t, l, pool.PagedConfig{Layers: 2, Heads: 1, HeadDim: 2, BlockSize: 4, Blocks: 256})
	x := seqTensor(t, l, 0, 1, 3, 2)
	defer mustRelease(t, x)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				seq := g*100 + i
				err := c.Allocate(seq)
				for layer := 0; layer < 2 && err == nil; layer++ {
					err = c.Append(seq, layer, x, x)
				}
				if err == nil && i%2 == 0 {
					err = c.Free(seq)
				}
				if err != nil {
					errs <- fmt.Errorf("sequence %d: %w", seq, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := c.Stats()
	if st.Sequences != 40 || st.Used != 40 || st.Used+st.Free != st.Blocks || st.Tokens != 120 {
		t.Errorf("stats after the run: %+v", st)
	}
}

// FuzzPagedAccounting drives a small paged cache with a random sequence of
// Allocate, Append and Free calls and checks the block accounting after
// every call: each block is in exactly one table or the free list, each
// table has ceil(len/B) blocks, and the waste per sequence is below B.
func FuzzPagedAccounting(f *testing.F) {
	f.Add([]byte{0, 1, 5, 1, 2, 9, 2, 0, 1, 1, 3, 3})
	f.Add([]byte{1, 0, 40, 1, 1, 40, 2, 1, 1, 0, 1})
	l := newLab(f)
	const B, blocks, maxSeq = 4, 12, 4
	tok := make([]*tensor.Tensor, 2*B+1) // tok[n]: n tokens
	for n := range tok {
		tok[n] = seqTensor(f, l, 0, 1, n, 1)
	}
	f.Cleanup(func() { mustRelease(f, tok...) })
	f.Fuzz(func(t *testing.T, ops []byte) {
		c, err := pool.NewPagedKVCache(l, tensor.Float32, pool.PagedConfig{Layers: 2, Heads: 1, HeadDim: 1, BlockSize: B, Blocks: blocks})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
		lens := map[int]int{} // expected length per live sequence (both layers)
		for i := 0; i+2 < len(ops); i += 3 {
			seq := int(ops[i+1]) % maxSeq
			_, live := lens[seq]
			switch ops[i] % 3 {
			case 0:
				err := c.Allocate(seq)
				if live != (err != nil) {
					t.Fatalf("Allocate(%d) with live=%v: %v", seq, live, err)
				}
				if !live {
					lens[seq] = 0
				}
			case 1:
				n := int(ops[i+2]) % len(tok)
				free := c.Stats().Free
				err := c.Append(seq, 0, tok[n], tok[n])
				switch {
				case !live:
					if err == nil {
						t.Fatalf("Append to unallocated sequence %d succeeded", seq)
					}
				case (lens[seq]+n+B-1)/B-(lens[seq]+B-1)/B > free:
					if !errors.Is(err, pool.ErrCacheFull) {
						t.Fatalf("Append of %d tokens needing more than %d free blocks: %v", n, free, err)
					}
				default:
					if err == nil {
						err = c.Append(seq, 1, tok[n], tok[n]) // layer 1 fits in the same blocks
					}
					if err != nil {
						t.Fatalf("Append(%d, %d tokens) with %d free blocks: %v", seq, n, free, err)
					}
					lens[seq] += n
				}
			case 2:
				err := c.Free(seq)
				if live != (err == nil) {
					t.Fatalf("Free(%d) with live=%v: %v", seq, live, err)
				}
				delete(lens, seq)
			}
			checkAccounting(t, c, lens, B, blocks)
		}
	})
}

func checkAccounting(t *testing.T, c *pool.PagedKVCache, lens map[int]int, B, blocks int) {
	t.Helper()
	owner := make([]int, blocks)
	for i := range owner {
		owner[i] = -1
	}
	used, waste, tokens := 0, 0, 0
	for seq, n := range lens {
		table, err := c.Blocks(seq)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := c.Len(seq); got != n {
			t.Fatalf("Len(%d) = %d, want %d", seq, got, n)
		}
		if len(table) != (n+B-1)/B {
			t.Fatalf("sequence %d of %d tokens has %d blocks", seq, n, len(table))
		}
		for _, b := range table {
			if b < 0 || b >= blocks || owner[b] != -1 {
				t.Fatalf("block %d of sequence %d is out of range or also owned by %d", b, seq, owner[b])
			}
			owner[b] = seq
		}
		used += len(table)
		tokens += n
		waste += len(table)*B - n
	}
	want := pool.PagedStats{BlockSize: B, Blocks: blocks, Used: used, Free: blocks - used, Sequences: len(lens), Tokens: tokens, Waste: waste}
	if st := c.Stats(); st != want {
		t.Fatalf("Stats = %+v, want %+v", st, want)
	}
	if waste > len(lens)*(B-1) {
		t.Fatalf("waste %d > (B-1) × %d sequences", waste, len(lens))
	}
}
