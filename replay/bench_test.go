package replay

import (
	"math/rand"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// syntheticTrace mixes small and large allocations with frees and occasional
// empty_cache, like replay_torch.py's trace d.
func syntheticTrace(n int, seed int64) *Trace {
	rng := rand.New(rand.NewSource(seed))
	var ops []Op
	var live []int64
	next := int64(0)
	for len(ops) < n {
		if rng.Intn(200) == 0 {
			ops = append(ops, Op{Kind: OpEmptyCache})
			continue
		}
		if len(live) > 0 && (rng.Intn(100) < 45 || len(live) > 2000) {
			j := rng.Intn(len(live))
			ops = append(ops, Op{Kind: OpFree, N: live[j]})
			live = append(live[:j], live[j+1:]...)
			continue
		}
		var size int64
		switch r := rng.Intn(100); {
		case r < 50:
			size = 1 + rng.Int63n(1<<20)
		case r < 80:
			size = 1<<20 + 1 + rng.Int63n(9<<20)
		default:
			size = 10<<20 + rng.Int63n(246<<20)
		}
		ops = append(ops, Op{Kind: OpAlloc, N: size})
		live = append(live, next)
		next++
	}
	return &Trace{Ops: ops}
}

// BenchmarkReplay measures replay speed (allocator decisions only, no state capture)
// in ops per second, on a synthetic mixed trace and on the ground-truth traces.
func BenchmarkReplay(b *testing.B) {
	traces := map[string]*Trace{"synthetic-100k": syntheticTrace(100000, 1)}
	dir := referenceDir(b)
	for _, name := range []string{"b__default", "c__default", "d__default", "d__expandable_segments_True"} {
		t, err := ReadFile(filepath.Join(dir, name+".jsonl.gz"))
		if err != nil {
			b.Fatal(err)
		}
		t.States, t.Baseline = nil, nil // keep ops and addresses; spare the GC
		traces[name] = t
	}
	runtime.GC()
	for name, tr := range traces {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			start := time.Now()
			ops := 0
			for i := 0; i < b.N; i++ {
				res, err := Run(tr, Options{})
				if err != nil {
					b.Fatal(err)
				}
				ops += res.Ops
			}
			b.ReportMetric(float64(ops)/time.Since(start).Seconds(), "ops/s")
		})
	}
}
