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
