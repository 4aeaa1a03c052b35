package memlab

import (
	"errors"
	"strings"
	"testing"

	"memlab.dev/memlab/tensor"
)

func TestMemPoolUse(t *testing.T) {
	l := openSim(t)
	pool, err := l.NewMemPool()
	if err != nil {
		t.Fatal(err)
	}
	if n := pool.UseCount(); n != 1 {
		t.Fatalf("new pool's use count %d, want 1", n)
	}
	var kv *tensor.Tensor
	err = pool.Use(func() error {
		if n := pool.UseCount(); n != 2 {
			t.Errorf("use count inside Use %d, want 2", n)
		}
		var err error
		kv, err = tensor.Empty(l, tensor.Float32, 1024, 1024) // 4 MiB in the pool
		if err != nil {
			return err
		}
		tmp, err := tensor.Empty(l, tensor.Float32, 1024, 1024)
		if err != nil {
			return err
		}
		return tmp.Release()
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := pool.UseCount(); n != 1 {
		t.Fatalf("use count after Use %d, want 1", n)
	}
	outside, err := tensor.Empty(l, tensor.Float32, 1024, 1024)
	if err != nil {
		t.Fatal(err)
	}
	// The pool's freed 4 MiB did not serve the tensor made outside it: the pool
	// keeps one 20 MiB segment, the default pool got its own.
	if got := pool.Reserved(); got != 20*mib {
		t.Fatalf("pool reserves %d, want one 20 MiB segment", got)
	}
	if got := l.MemoryReserved(); got != 40*mib {
		t.Fatalf("lab reserves %d, want 40 MiB (pool + default)", got)
	}
	for _, s := range pool.Segments() {
		if s.PoolID != pool.ID() {
			t.Fatalf("pool segment with id %v, want %v", s.PoolID, pool.ID())
		}
	}
	// EmptyCache while the pool lives keeps its segment (kv lives in it anyway).
	if err := l.EmptyCache(); err != nil {
		t.Fatal(err)
	}
	if got := pool.Reserved(); got != 20*mib {
		t.Fatalf("after EmptyCache the pool reserves %d, want 20 MiB", got)
	}
	if err := pool.Close(); err != nil {
		t.Fatal(err)
	}
	if got := pool.Reserved(); got != 20*mib {
		t.Fatalf("closing the pool freed the segment holding a live tensor (reserved %d)", got)
	}
	if err := pool.Use(func() error { return nil }); err == nil || !strings.Contains(err.Error(), "after Close") {
		t.Fatalf("Use after Close: %v", err)
	}
	if err := kv.Release(); err != nil {
		t.Fatal(err)
	}
	if err := outside.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.EmptyCache(); err != nil {
		t.Fatal(err)
	}
	if got := l.MemoryReserved(); got != 0 {
		t.Fatalf("reserved %d after freeing everything", got)
	}
	if n := len(l.Allocator().Pools()); n != 0 {
		t.Fatalf("%d pools left", n)
	}
}

func TestMemPoolUseErrorsAndPanics(t *testing.T) {
	l := openSim(t)
	pool, err := l.NewMemPool()
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := pool.Use(func() error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Use returned %v, want f's error", err)
	}
	err = pool.Use(func() error { return pool.Use(func() error { return nil }) })
	if err == nil || !strings.Contains(err.Error(), "inside its own Use") {
		t.Fatalf("nested Use: %v", err)
	}
	func() {
		defer func() { _ = recover() }()
		_ = pool.Use(func() error { panic("cell stopped") })
	}()
	if l.Allocator().AllocatingToPools() {
		t.Fatal("a panic inside Use left allocations routed to the pool")
	}
	if n := pool.UseCount(); n != 1 {
		t.Fatalf("use count %d after the errors, want 1", n)
	}
	x, err := tensor.Empty(l, tensor.Float32, 256)
	if err != nil {
		t.Fatal(err)
	}
	if id := l.Snapshot().Segments[0].PoolID; !id.IsDefault() {
		t.Fatalf("allocation after a failed Use went to pool %v", id)
	}
	_ = x.Release()
	if err := pool.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCaptureGraphSharesAPool(t *testing.T) {
	l := openSim(t)
	var out1, out2 *tensor.Tensor
	g1, err := l.CaptureGraph(func() error {
		var err error
		out1, err = tensor.Empty(l, tensor.Float32, 1024, 1024)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if id := g1.Pool(); id.First == 0 || id.Second != 0 {
		t.Fatalf("graph's own pool id %v, want (n, 0)", id)
	}
	g2, err := l.CaptureGraph(func() error {
		var err error
		out2, err = tensor.Empty(l, tensor.Float32, 1024, 1024)
		return err
	}, g1.Pool())
	if err != nil {
		t.Fatal(err)
	}
	if g1.Reserved() != 20*mib || g2.Reserved() != 20*mib {
		t.Fatalf("graphs reserve %d and %d, want one shared 20 MiB segment", g1.Reserved(), g2.Reserved())
	}
	if n, _ := l.Allocator().PoolUseCount(g1.Pool()); n != 2 {
		t.Fatalf("shared pool's use count %d, want 2", n)
	}
	_ = out1.Release()
	_ = out2.Release()
	if err := g1.Reset(); err != nil {
		t.Fatal(err)
	}
	if err := l.EmptyCache(); err != nil {
		t.Fatal(err)
	}
	if got := l.MemoryReserved(); got != 20*mib {
		t.Fatalf("with one graph still using the pool, reserved %d, want 20 MiB", got)
	}
	if err := g2.Reset(); err != nil {
		t.Fatal(err)
	}
	if err := l.EmptyCache(); err != nil {
		t.Fatal(err)
	}
	if got := l.MemoryReserved(); got != 0 {
		t.Fatalf("after both graphs reset, reserved %d, want 0", got)
	}
	if _, err := l.CaptureGraph(func() error { return errors.New("bad op") }); err == nil {
		t.Fatal("a failed capture returned no error")
	}
	if n := len(l.Allocator().Pools()); n != 1 {
		t.Fatalf("%d pools after a failed capture, want its released pool only", n)
	}
	if _, err := l.CaptureGraph(func() error { return nil }, l.GraphPoolHandle(), l.GraphPoolHandle()); err == nil {
		t.Fatal("two pools accepted")
	}
}
