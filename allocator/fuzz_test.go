package allocator

import (
	"errors"
	"math/rand"
	"strings"
	"sync"
	"testing"
)

// fuzzConfigs are the configurations the fuzz test cycles through (first input byte).
var fuzzConfigs = []string{
	"",
	"max_split_size_mb:128",
	"roundup_power2_divisions:4",
	"roundup_power2_divisions:[256:1,512:2,1024:4,>:8]",
	"expandable_segments:True",
	"expandable_segments:True,max_split_size_mb:64",
	"garbage_collection_threshold:0.5,per_process_memory_fraction:0.5",
	"max_split_size_mb:40,garbage_collection_threshold:0.7,per_process_memory_fraction:0.8",
	"max_split_size_mb:20,max_non_split_rounding_mb:64",
}

// runOps interprets data as allocator operations on a small fake device and checks the
// invariants after every one; at the end it frees everything and empties the cache.
func runOps(t *testing.T, data []byte) {
	if len(data) == 0 {
		return
	}
	cfg, err := ParseConfig(fuzzConfigs[int(data[0])%len(fuzzConfigs)])
	if err != nil {
		t.Fatal(err)
	}
	data = data[1:]
	mem := newFakeMemory(3 << 30)
	a, err := New(mem, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var live, pending []uint64
	for i := 0; i+2 < len(data); i += 3 {
		op, x, y := data[i], data[i+1], data[i+2]
		if op >= 232 { // private pools
			if addr, ok := poolOp(t, a, int(op-232)%6, x, y); ok {
				live = append(live, addr)
			}
			if err := checkInvariants(a, mem); err != nil {
				t.Fatalf("after op %d (pool op %d %d %d) with %q: %v", i/3, op, x, y, cfg.Source(), err)
			}
			continue
		}
		switch op % 10 {
		case 0, 1, 2, 3, 4: // alloc, log-uniform 1 B .. ~1.5 GiB, on one of three streams
			exp := uint(x) % 31
			size := int64(1)<<exp + int64(y)*int64(1)<<exp/256
			addr, err := a.MallocStream(size, uint64(op/10%3)*0x100)
			var oom *OutOfMemoryError
			switch {
			case errors.As(err, &oom):
			case err != nil:
				t.Fatalf("op %d: Malloc(%d): %v", i/3, size, err)
			default:
				live = append(live, addr)
			}
		case 5, 6, 7: // free
			if len(live) == 0 {
				continue
			}
			j := int(x) % len(live)
			if op%10 == 7 { // used on another stream: the free waits
				if err := a.RecordStream(live[j], 0x900); err != nil {
					t.Fatalf("op %d: RecordStream: %v", i/3, err)
				}
				pending = append(pending, live[j])
			}
			if err := a.Free(live[j]); err != nil {
				t.Fatalf("op %d: Free: %v", i/3, err)
			}
			live = append(live[:j], live[j+1:]...)
		case 8:
			if err := a.EmptyCache(); err != nil {
				t.Fatalf("op %d: EmptyCache: %v", i/3, err)
			}
		case 9:
			switch x % 3 {
			case 0:
				a.ResetPeakMemoryStats()
			case 1:
				if err := a.SetPerProcessMemoryFraction(float64(y) / 255); err != nil {
					t.Fatal(err)
				}
			case 2: // the oldest pending free completes, unless a synchronisation did
				if len(pending) == 0 {
					break
				}
				still := a.PendingFrees()
				if len(still) == 0 {
					pending = pending[:0]
					break
				}
				if err := a.CompleteFree(still[0]); err != nil {
					t.Fatalf("op %d: CompleteFree: %v", i/3, err)
				}
			}
		}
		if err := checkInvariants(a, mem); err != nil {
			t.Fatalf("after op %d (%d %d %d) with %q: %v", i/3, op, x, y, cfg.Source(), err)
		}
	}
	for _, addr := range live {
		if err := a.Free(addr); err != nil {
			t.Fatalf("final Free: %v", err)
		}
	}
	for _, addr := range a.PendingFrees() {
		if err := a.CompleteFree(addr); err != nil {
			t.Fatalf("final CompleteFree: %v", err)
		}
	}
	for _, id := range fuzzPools {
		_ = a.EndAllocateToPool(id)
		for a.ReleasePool(id) == nil {
		}
	}
	if err := a.EmptyCache(); err != nil {
		t.Fatal(err)
	}
	if pools := a.Pools(); len(pools) != 0 {
		t.Fatalf("pools %v survive freeing everything, releasing them and EmptyCache", pools)
	}
	if err := checkInvariants(a, mem); err != nil {
		t.Fatalf("after freeing all: %v", err)
	}
	if r := a.MemoryReserved(); r != 0 {
		t.Fatalf("free all + EmptyCache leaves %d bytes reserved", r)
	}
	// An expandable segment whose first mapping failed keeps its (unmapped) address
	// range, as in PyTorch; it holds no memory.
	if mem.used != 0 || len(mem.segs) != 0 || len(mem.mapped) != 0 {
		t.Fatalf("device still holds %d bytes, %d segments, %d mapped pages", mem.used, len(mem.segs), len(mem.mapped))
	}
}

// fuzzPools are the private pool ids the fuzz traces use.
var fuzzPools = [3]PoolID{{1, 0}, {0, 1}, {0, 2}}

// poolOp runs private-pool operation k on pool fuzzPools[x%3]; it returns the address
// of a successful allocation. Misuse (ending a pool not begun, releasing one too
// often, allocating into a released one) must fail cleanly and change nothing.
func poolOp(t *testing.T, a *Allocator, k int, x, y byte) (uint64, bool) {
	t.Helper()
	id := fuzzPools[int(x)%len(fuzzPools)]
	switch k {
	case 0: // begin: a graph capturing one stream, or a MemPool taking every request
		var filter func(uint64) bool
		if y < 192 {
			s := uint64(y%3) * 0x100
			filter = func(stream uint64) bool { return stream == s }
		}
		_ = a.BeginAllocateToPool(id, filter)
	case 1:
		_ = a.EndAllocateToPool(id)
	case 2:
		_ = a.ReleasePool(id)
	case 3:
		_ = a.CreateOrIncrefPool(id)
	case 4:
		exp := uint(y) % 28
		addr, err := a.MallocInPool(int64(1)<<exp+int64(x), uint64(y%3)*0x100, id)
		var oom *OutOfMemoryError
		switch {
		case err == nil:
			return addr, true
		case errors.As(err, &oom), errors.Is(err, ErrUnknownPool):
		case err != nil && strings.Contains(err.Error(), "released"):
		default:
			t.Fatalf("MallocInPool: %v", err)
		}
	case 5:
		if err := a.EmptyCachePool(id); err != nil && !errors.Is(err, ErrUnknownPool) && !strings.Contains(err.Error(), "capture is under way") {
			t.Fatalf("EmptyCachePool: %v", err)
		}
	}
	return 0, false
}

// FuzzAllocator drives random traces and checks after every op that blocks tile each
// segment without gap or overlap, that the statistics equal a recount from the blocks,
// and that freeing everything then EmptyCache leaves nothing reserved. Run it with a
// short minimisation time, or the fuzzer spends its budget minimising new inputs:
//
//	go test -run XXX -fuzz FuzzAllocator -fuzztime 30s -fuzzminimizetime 2s ./allocator
func FuzzAllocator(f *testing.F) {
	for c := range fuzzConfigs {
		rng := rand.New(rand.NewSource(int64(c)))
		data := []byte{byte(c)}
		for i := 0; i < 600; i++ {
			data = append(data, byte(rng.Intn(256)))
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Long inputs make each execution (and the fuzzer's minimisation) slow;
		// TestRandomTraces covers long traces.
		if len(data) > 901 {
			data = data[:901]
		}
		runOps(t, data)
	})
}

// TestRandomTraces runs long seeded traces through every fuzz configuration.
func TestRandomTraces(t *testing.T) {
	for c, conf := range fuzzConfigs {
		t.Run(conf, func(t *testing.T) {
			rng := rand.New(rand.NewSource(int64(100 + c)))
			data := []byte{byte(c)}
			for i := 0; i < 6000; i++ {
				data = append(data, byte(rng.Intn(256)))
			}
			runOps(t, data)
		})
	}
}

// TestConcurrentUse hammers one allocator from 8 goroutines (run with -race) and checks
// the invariants afterwards.
func TestConcurrentUse(t *testing.T) {
	for _, conf := range []string{"", "expandable_segments:True"} {
		t.Run(conf, func(t *testing.T) {
			cfg, err := ParseConfig(conf)
			if err != nil {
				t.Fatal(err)
			}
			mem := newFakeMemory(8 << 30)
			a, err := New(mem, cfg)
			if err != nil {
				t.Fatal(err)
			}
			var events int64
			var evMu sync.Mutex
			cancel := a.Subscribe(func(Event) { evMu.Lock(); events++; evMu.Unlock() })
			var wg sync.WaitGroup
			errs := make(chan error, 9)
			for g := 0; g < 8; g++ {
				wg.Add(1)
				go func(seed int64) {
					defer wg.Done()
					rng := rand.New(rand.NewSource(seed))
					var live []uint64
					for i := 0; i < 2000; i++ {
						if len(live) > 0 && rng.Intn(2) == 0 {
							j := rng.Intn(len(live))
							if err := a.Free(live[j]); err != nil {
								errs <- err
								return
							}
							live = append(live[:j], live[j+1:]...)
							continue
						}
						size := int64(1) << uint(rng.Intn(26))
						addr, err := a.Malloc(size + int64(rng.Intn(4096)))
						if err != nil {
							errs <- err
							return
						}
						live = append(live, addr)
						if i%500 == 0 {
							_ = a.MemoryStats()
							_ = a.Snapshot()
						}
					}
					for _, addr := range live {
						if err := a.Free(addr); err != nil {
							errs <- err
							return
						}
					}
				}(int64(g))
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 50; i++ {
					if err := a.EmptyCache(); err != nil {
						errs <- err
						return
					}
					_ = a.MemorySummary(true)
					_, _, _ = a.MemGetInfo()
				}
			}()
			wg.Wait()
			cancel()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if err := checkInvariants(a, mem); err != nil {
				t.Fatal(err)
			}
			if got := a.MemoryAllocated(); got != 0 {
				t.Fatalf("allocated %d after every goroutine freed everything", got)
			}
			if err := a.EmptyCache(); err != nil {
				t.Fatal(err)
			}
			if got := a.MemoryReserved(); got != 0 {
				t.Fatalf("reserved %d after EmptyCache", got)
			}
			evMu.Lock()
			defer evMu.Unlock()
			if events == 0 {
				t.Fatal("subscriber saw no events")
			}
		})
	}
}
