package allocator

import (
	"math/rand"
	"testing"
)

// BenchmarkCacheHit measures Malloc+Free of a size the cache already holds: the path
// every torch.empty + del takes once a model is warm. It must not allocate.
func BenchmarkCacheHit(b *testing.B) {
	for _, bc := range []struct {
		name string
		size int64
		pre  int // other live blocks, so the free set is not trivial
	}{
		{"small-4KiB", 4 * kiB, 0},
		{"large-64MiB", 64 * miB, 0},
		{"small-4KiB-1000live", 4 * kiB, 1000},
	} {
		b.Run(bc.name, func(b *testing.B) {
			a, err := New(newFakeMemory(1<<40), DefaultConfig())
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewSource(1))
			var keep []uint64
			for i := 0; i < bc.pre; i++ {
				p, err := a.Malloc(int64(rng.Intn(1 << 20)))
				if err != nil {
					b.Fatal(err)
				}
				if i%2 == 0 {
					keep = append(keep, p)
				} else if err := a.Free(p); err != nil {
					b.Fatal(err)
				}
			}
			p, err := a.Malloc(bc.size)
			if err != nil {
				b.Fatal(err)
			}
			if err := a.Free(p); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p, err := a.Malloc(bc.size)
				if err != nil {
					b.Fatal(err)
				}
				if err := a.Free(p); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			_ = keep
		})
	}
}

// BenchmarkCacheHitParallel is BenchmarkCacheHit from all Ps at once (lock contention).
func BenchmarkCacheHitParallel(b *testing.B) {
	a, err := New(newFakeMemory(1<<40), DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			p, err := a.Malloc(4 * kiB)
			if err != nil {
				b.Error(err)
				return
			}
			if err := a.Free(p); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// TestCacheHitDoesNotAllocate guards the zero-allocation cache-hit path.
func TestCacheHitDoesNotAllocate(t *testing.T) {
	for _, conf := range []string{"", "expandable_segments:True", "roundup_power2_divisions:4,max_split_size_mb:64"} {
		a, _ := newTestAllocator(t, conf, uint64(giB))
		for _, size := range []int64{4 * kiB, 3 * miB, 80 * miB} {
			p := mustMalloc(t, a, size)
			mustFree(t, a, p)
			n := testing.AllocsPerRun(200, func() {
				p, err := a.Malloc(size)
				if err != nil {
					t.Fatal(err)
				}
				if err := a.Free(p); err != nil {
					t.Fatal(err)
				}
			})
			if n != 0 {
				t.Errorf("conf %q size %d: %v allocations per Malloc+Free", conf, size, n)
			}
		}
	}
}

// BenchmarkOOMRetryManyFreeBlocks measures a request that runs out of memory (under a
// per-process cap) while the cache holds 10 000 small free fragments (small and large pool, expandable segments
// on and off): every failure runs the whole retry path (release_cached_blocks), which
// must not cost a walk over every cached block.
func BenchmarkOOMRetryManyFreeBlocks(b *testing.B) {
	for _, conf := range []string{"", "expandable_segments:True"} {
		b.Run("conf="+conf, func(b *testing.B) {
			cfg, err := ParseConfig(conf)
			if err != nil {
				b.Fatal(err)
			}
			a, err := New(newFakeMemory(32*uint64(giB)), cfg)
			if err != nil {
				b.Fatal(err)
			}
			// Fragments: every other block of 10 000 small and 10 000 large requests.
			var ptrs []uint64
			for i := 0; i < 20000; i++ {
				size := int64(4 * kiB)
				if i%2 == 1 {
					size = 1536 * kiB
				}
				ptrs = append(ptrs, mustMallocB(b, a, size))
			}
			for i := 0; i < len(ptrs); i += 4 {
				for _, p := range ptrs[i : i+2] {
					if err := a.Free(p); err != nil {
						b.Fatal(err)
					}
				}
			}
			// A cap just above what is reserved: the request fails at the cap check, so
			// the benchmark measures the retry path, not the device.
			if err := a.SetPerProcessMemoryFraction(float64(a.MemoryReserved()+giB) / float64(32*giB)); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := a.Malloc(2 * giB); err == nil {
					b.Fatal("2 GiB fitted under a cap 1 GiB above reserved")
				}
			}
		})
	}
}

func mustMallocB(b *testing.B, a *Allocator, size int64) uint64 {
	b.Helper()
	p, err := a.Malloc(size)
	if err != nil {
		b.Fatal(err)
	}
	return p
}
