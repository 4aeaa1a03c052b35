package pool_test

import (
	"fmt"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/pool"
	"memlab.dev/memlab/tensor"
)

// A pool of activation buffers: after the first step every Get is a hit and
// the allocator is not called again.
func ExampleTensorPool() {
	lab := memlab.MustOpen(memlab.Sim("1GiB"), memlab.AllocConf(""), memlab.NotCurrent())
	defer lab.Close()
	p, err := pool.NewTensorPool(lab, tensor.Float32, []int{64, 1024}, 0)
	if err != nil {
		panic(err)
	}
	defer p.Release()
	for step := 0; step < 100; step++ {
		buf, err := p.Get()
		if err != nil {
			panic(err)
		}
		// ... fill buf and use it ...
		if err := p.Put(buf); err != nil {
			panic(err)
		}
	}
	st := p.Stats()
	fmt.Printf("hits %d, misses %d, pool bytes %d\n", st.Hits, st.Misses, st.Bytes)
	fmt.Println("allocator calls:", lab.MemoryStats()["allocation.all.allocated"])
	// Output:
	// hits 99, misses 1, pool bytes 262144
	// allocator calls: 1
}

// Decoding one sequence with a preallocated cache: each step appends one
// token's keys and values and attends over a view of everything cached.
func ExampleKVCache() {
	lab := memlab.MustOpen(memlab.Sim("1GiB"), memlab.AllocConf(""), memlab.NotCurrent())
	defer lab.Close()
	const layers, heads, maxLen, headDim = 2, 4, 128, 16
	cache, err := pool.NewKVCache(lab, tensor.Float32, layers, heads, maxLen, headDim)
	if err != nil {
		panic(err)
	}
	defer cache.Release()
	k, _ := tensor.Randn(lab, 1, tensor.Float32, heads, 1, headDim)
	v, _ := tensor.Randn(lab, 2, tensor.Float32, heads, 1, headDim)
	defer k.Release()
	defer v.Release()
	for step := 0; step < 10; step++ {
		if err := cache.Append(0, k, v); err != nil {
			panic(err)
		}
	}
	keys, _ := cache.Keys(0)
	defer keys.Release()
	fmt.Println("keys:", keys.Shape(), "contiguous:", keys.IsContiguous())
	fmt.Println("cache bytes:", cache.Nbytes())
	// Output:
	// keys: [4, 10, 16] contiguous: false
	// cache bytes: 131072
}

// Many sequences of different lengths share one arena of 16-token blocks;
// each wastes less than one block.
func ExamplePagedKVCache() {
	lab := memlab.MustOpen(memlab.Sim("1GiB"), memlab.AllocConf(""), memlab.NotCurrent())
	defer lab.Close()
	c, err := pool.NewPagedKVCache(lab, tensor.Float32, pool.PagedConfig{
		Layers: 1, Heads: 2, HeadDim: 8, BlockSize: 16, Blocks: 64})
	if err != nil {
		panic(err)
	}
	defer c.Release()
	for seq, n := range []int{5, 40, 17, 16} {
		kv, _ := tensor.Zeros(lab, tensor.Float32, 2, n, 8)
		if err := c.Allocate(seq); err != nil {
			panic(err)
		}
		if err := c.Append(seq, 0, kv, kv); err != nil {
			panic(err)
		}
		kv.Release()
	}
	table, _ := c.Blocks(1)
	fmt.Println("sequence 1 (40 tokens) blocks:", table)
	fmt.Printf("%+v\n", c.Stats())
	// Output:
	// sequence 1 (40 tokens) blocks: [1 2 3]
	// {BlockSize:16 Blocks:64 Used:7 Free:57 Sequences:4 Tokens:78 Waste:34}
}
