package allocator

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// A Subscribe callback that panics, at any event, leaves the allocator
// consistent: the panic reaches the caller after the operation completed, the
// statistics agree with the blocks and the device, and EmptyCache can give
// every segment back. (A panic during the segment allocation of a Malloc used
// to leave 2 MiB reserved, segment.all.current 1, and no segment in the
// snapshot.)
func TestSubscriberPanicLeavesStateConsistent(t *testing.T) {
	for _, conf := range []string{"", "expandable_segments:True", "max_split_size_mb:20"} {
		// The scenario below, run once without panics, shows which events it
		// produces under conf: each of them is then made to panic in turn.
		var acts []Action
		a, _ := newTestAllocator(t, conf, 64<<20)
		a.Subscribe(func(e Event) {
			if !slices.Contains(acts, e.Action) {
				acts = append(acts, e.Action)
			}
		})
		scenario(a, func(_ string, f func()) { f() })
		if len(acts) < 6 {
			t.Fatalf("%q: the scenario produces only %v", conf, acts)
		}
		for _, act := range acts {
			t.Run(conf+"/"+string(act), func(t *testing.T) {
				a, mem := newTestAllocator(t, conf, 64<<20)
				cancel := a.Subscribe(func(e Event) {
					if e.Action == act {
						panic("callback fails on " + string(e.Action))
					}
				})
				panics := 0
				do := func(what string, f func()) {
					t.Helper()
					func() {
						defer func() {
							if r := recover(); r != nil {
								panics++
								var sp *SubscriberPanic
								if err, ok := r.(error); !ok || !errors.As(err, &sp) || !strings.Contains(err.Error(), "callback fails on "+string(act)) {
									t.Fatalf("%s panicked with %v (%T), want a *SubscriberPanic carrying the callback's value", what, r, r)
								}
							}
						}()
						f()
					}()
					if err := checkInvariants(a, mem); err != nil {
						t.Fatalf("after %s: %v", what, err)
					}
				}
				scenario(a, do)
				if panics == 0 {
					t.Fatalf("the callback never panicked on %s", act)
				}
				if got := a.MemoryReserved(); got != 0 && act != ActionEmptyCache {
					t.Fatalf("EmptyCache left %d bytes reserved", got)
				}
				if act == ActionEmptyCache {
					do("EmptyCache again", func() { _ = a.EmptyCache() })
				}
				st := a.MemoryStats()
				if st["segment.all.current"] != int64(len(a.Snapshot().Segments)) {
					t.Fatalf("segment.all.current %d, snapshot has %d segments", st["segment.all.current"], len(a.Snapshot().Segments))
				}
				// The allocator keeps working.
				cancel()
				p, err := a.Malloc(4 << 20)
				if err != nil || p == 0 {
					t.Fatalf("Malloc after the panics: %#x, %v", p, err)
				}
			})
		}
	}
}

// scenario allocates (a small block, a large one, one that does not fit),
// frees every allocated block the snapshot shows and empties the cache, each
// step through do.
func scenario(a *Allocator, do func(what string, f func())) {
	do("Malloc(1 MiB)", func() { _, _ = a.Malloc(1 << 20) })
	do("Malloc(30 MiB)", func() { _, _ = a.Malloc(30 << 20) })
	do("Malloc(1 GiB)", func() { _, _ = a.Malloc(1 << 30) })
	for _, s := range a.Snapshot().Segments {
		for _, b := range s.Blocks {
			if b.State == StateActiveAllocated {
				do("Free", func() { _ = a.Free(b.Address) })
			}
		}
	}
	do("EmptyCache", func() { _ = a.EmptyCache() })
}

// zeroMemory hands out address 0 for its first allocation or reservation.
type zeroMemory struct {
	*fakeMemory
	freed0 bool
}

func (z *zeroMemory) Malloc(size uint64) (uint64, error) { return 0, nil }
func (z *zeroMemory) Free(addr uint64) error {
	if addr == 0 {
		z.freed0 = true
		return nil
	}
	return z.fakeMemory.Free(addr)
}
func (z *zeroMemory) ReserveAddress(size uint64) (uint64, error) { return 0, nil }

// A device that returns address 0 makes Malloc fail: a block at 0 could never be
// freed (Free(0) is a no-op, as for an empty tensor).
func TestDeviceAddressZeroIsRefused(t *testing.T) {
	for _, conf := range []string{"", "expandable_segments:True"} {
		cfg, err := ParseConfig(conf)
		if err != nil {
			t.Fatal(err)
		}
		mem := &zeroMemory{fakeMemory: newFakeMemory(1 << 30)}
		a, err := New(mem, cfg)
		if err != nil {
			t.Fatal(err)
		}
		p, err := a.Malloc(1 << 20)
		if err == nil || !strings.Contains(err.Error(), "address 0") || !strings.HasPrefix(err.Error(), "allocator: ") {
			t.Fatalf("%q: Malloc on a device returning address 0 = %#x, %v; want an error naming address 0", conf, p, err)
		}
		if got := a.MemoryReserved(); got != 0 {
			t.Fatalf("%q: %d bytes reserved after the refused allocation", conf, got)
		}
		if conf == "" && !mem.freed0 {
			t.Errorf("the segment at address 0 was not given back to the device")
		}
	}
}
