package tensorpool

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

func newPool(t *testing.T, shape []int, elemSize, capacity int) *Pool {
	t.Helper()
	var p *Pool
	var err error
	call := fmt.Sprintf("NewPool(%v, %d, %d)", shape, elemSize, capacity)
	if !exercisetest.Call(t, call, func() { p, err = NewPool(shape, elemSize, capacity) }) {
		t.FailNow()
	}
	if err != nil || p == nil {
		t.Fatalf("%s: want a pool, got %v, %v", call, p, err)
	}
	return p
}

func get(t *testing.T, p *Pool) *Buffer {
	t.Helper()
	var b *Buffer
	var err error
	if !exercisetest.Call(t, "Get()", func() { b, err = p.Get() }) {
		t.FailNow()
	}
	if err != nil || b == nil {
		t.Fatalf("Get(): want a buffer, got %v, %v", b, err)
	}
	return b
}

func put(t *testing.T, p *Pool, b *Buffer) {
	t.Helper()
	var err error
	if !exercisetest.Call(t, "Put(b)", func() { err = p.Put(b) }) {
		t.FailNow()
	}
	if err != nil {
		t.Fatalf("Put(b): unexpected error %v", err)
	}
}

func stats(t *testing.T, p *Pool) Stats {
	t.Helper()
	var s Stats
	if !exercisetest.Call(t, "Stats()", func() { s = p.Stats() }) {
		t.FailNow()
	}
	return s
}

func TestA_BufferSize(t *testing.T) {
	tests := []struct {
		shape    []int
		elemSize int
		want     int
		why      string
	}{
		{[]int{2, 3}, 4, 24, "6 float32 elements are 24 bytes"},
		{[]int{128, 64}, 2, 16384, "8192 float16 elements"},
		{[]int{}, 8, 8, "a scalar holds one element"},
		{[]int{4, 0}, 4, 0, "a shape with a 0 has no elements"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.shape, tc.elemSize), func(t *testing.T) {
			p := newPool(t, tc.shape, tc.elemSize, 1)
			if b := get(t, p); len(b.Data) != tc.want {
				t.Errorf("NewPool(%v, %d, 1).Get(): len(Data) = %d, want %d — %s", tc.shape, tc.elemSize, len(b.Data), tc.want, tc.why)
			}
		})
	}
}

func TestA_Reuse(t *testing.T) {
	t.Run("a returned buffer is handed out again", func(t *testing.T) {
		p := newPool(t, []int{4}, 4, 2)
		a := get(t, p)
		a.Data[0] = 42
		put(t, p, a)
		b := get(t, p)
		if b != a {
			t.Fatalf("Get after Put: got a new buffer — the idle one should be reused instead of allocating")
		}
		if b.Data[0] != 42 {
			t.Errorf("reused buffer: Data[0] = %d, want 42 — Put does not clear contents (stale data, as in PyTorch)", b.Data[0])
		}
		if s := stats(t, p); s != (Stats{Created: 1, Reused: 1, InUse: 1, Idle: 0}) {
			t.Errorf("Stats() = %+v, want {Created:1 Reused:1 InUse:1 Idle:0} — one buffer created, reused once, now in use", s)
		}
	})
	t.Run("most recently returned first", func(t *testing.T) {
		p := newPool(t, []int{4}, 4, 3)
		a, b := get(t, p), get(t, p)
		put(t, p, a)
		put(t, p, b)
		if got := get(t, p); got != b {
			t.Errorf("after Put(a), Put(b): Get returned a — want b, the most recently returned (LIFO)")
		}
		if got := get(t, p); got != a {
			t.Errorf("second Get: want a, the remaining idle buffer")
		}
		if s := stats(t, p); s != (Stats{Created: 2, Reused: 2, InUse: 2, Idle: 0}) {
			t.Errorf("Stats() = %+v, want {Created:2 Reused:2 InUse:2 Idle:0}", s)
		}
	})
	t.Run("distinct buffers while in use", func(t *testing.T) {
		p := newPool(t, []int{4}, 4, 3)
		a, b, c := get(t, p), get(t, p), get(t, p)
		if a == b || b == c || a == c || &a.Data[0] == &b.Data[0] || &b.Data[0] == &c.Data[0] {
			t.Fatalf("three Gets without Put returned shared buffers — each caller needs its own memory")
		}
		if s := stats(t, p); s != (Stats{Created: 3, Reused: 0, InUse: 3, Idle: 0}) {
			t.Errorf("Stats() = %+v, want {Created:3 Reused:0 InUse:3 Idle:0}", s)
		}
		put(t, p, c)
		if s := stats(t, p); s != (Stats{Created: 3, Reused: 0, InUse: 2, Idle: 1}) {
			t.Errorf("after one Put: Stats() = %+v, want {Created:3 Reused:0 InUse:2 Idle:1}", s)
		}
	})
}

func TestB_Exhausted(t *testing.T) {
	p := newPool(t, []int{2}, 4, 2)
	a := get(t, p)
	get(t, p)
	var err error
	var b *Buffer
	if !exercisetest.Call(t, "Get()", func() { b, err = p.Get() }) {
		return
	}
	if !errors.Is(err, ErrExhausted) {
		t.Fatalf("third Get from a pool of capacity 2: want an error wrapping ErrExhausted, got %v, %v — the cap is the point of a pool", b, err)
	}
	put(t, p, a)
	if got := get(t, p); got != a {
		t.Errorf("Get after returning a buffer to an exhausted pool: want that buffer back")
	}
	if s := stats(t, p); s != (Stats{Created: 2, Reused: 1, InUse: 2, Idle: 0}) {
		t.Errorf("Stats() = %+v, want {Created:2 Reused:1 InUse:2 Idle:0} — a failed Get changes no counter", s)
	}
}

func TestB_BadPuts(t *testing.T) {
	other := newPool(t, []int{2}, 4, 1)
	tests := []struct {
		name string
		buf  func(t *testing.T, p *Pool) *Buffer
		why  string
	}{
		{"nil", func(*testing.T, *Pool) *Buffer { return nil }, "there is no buffer to return"},
		{"double put", func(t *testing.T, p *Pool) *Buffer { b := get(t, p); put(t, p, b); return b }, "the buffer is already idle; accepting it again would hand it to two callers"},
		{"foreign buffer", func(t *testing.T, _ *Pool) *Buffer { return get(t, other) }, "the buffer belongs to another pool"},
		{"hand-made buffer", func(*testing.T, *Pool) *Buffer { return &Buffer{Data: make([]byte, 8)} }, "the pool never handed it out"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPool(t, []int{2}, 4, 2)
			b := tc.buf(t, p)
			before := stats(t, p)
			var err error
			if !exercisetest.Call(t, "Put(b)", func() { err = p.Put(b) }) {
				return
			}
			if err == nil {
				t.Errorf("Put (%s): want an error — %s", tc.name, tc.why)
			}
			if after := stats(t, p); after != before {
				t.Errorf("Put (%s) failed but changed Stats from %+v to %+v", tc.name, before, after)
			}
		})
	}
}

func TestB_NewPoolErrors(t *testing.T) {
	tests := []struct {
		shape              []int
		elemSize, capacity int
		why                string
	}{
		{[]int{2, -1}, 4, 1, "a negative size"},
		{[]int{2}, 0, 1, "an element has at least 1 byte"},
		{[]int{2}, 4, 0, "a pool that can hold no buffer is useless"},
		{[]int{2}, 4, -3, "a negative capacity"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.shape, tc.elemSize, tc.capacity), func(t *testing.T) {
			var err error
			call := fmt.Sprintf("NewPool(%v, %d, %d)", tc.shape, tc.elemSize, tc.capacity)
			if !exercisetest.Call(t, call, func() { _, err = NewPool(tc.shape, tc.elemSize, tc.capacity) }) {
				return
			}
			if err == nil {
				t.Errorf("%s: want an error — %s", call, tc.why)
			}
		})
	}
}

func TestC_Concurrent(t *testing.T) {
	const (
		workers  = 8
		rounds   = 500
		capacity = 3
	)
	p := newPool(t, []int{4}, 4, capacity)
	// Get and Put once here, where a "not implemented" panic can be reported
	// cleanly; inside the goroutines it would crash the whole test binary.
	put(t, p, get(t, p))
	var wg sync.WaitGroup
	errs := make(chan string, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				b, err := p.Get()
				if errors.Is(err, ErrExhausted) {
					runtime.Gosched()
					continue
				}
				if err != nil {
					errs <- fmt.Sprintf("Get: %v", err)
					return
				}
				mark := uint64(w)<<32 | uint64(r)
				binary.LittleEndian.PutUint64(b.Data, mark)
				runtime.Gosched()
				if got := binary.LittleEndian.Uint64(b.Data); got != mark {
					errs <- "a buffer was handed to two goroutines at once (another one overwrote its data) — guard Get and Put with a mutex"
					return
				}
				if err := p.Put(b); err != nil {
					errs <- fmt.Sprintf("Put: %v", err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	s := stats(t, p)
	if s.Created > capacity || s.InUse != 0 || s.Idle != s.Created {
		t.Errorf("after all goroutines returned their buffers: Stats() = %+v — want Created ≤ %d, InUse 0 and Idle == Created", s, capacity)
	}
}
