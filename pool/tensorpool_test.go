package pool_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"memlab.dev/memlab/pool"
	"memlab.dev/memlab/tensor"
)

func TestNewTensorPoolRejects(t *testing.T) {
	l := newLab(t)
	tests := []struct {
		name  string
		dev   tensor.Device
		dtype tensor.DType
		shape []int
		limit int
		want  string
	}{
		{"nil device", nil, tensor.Float32, []int{2}, 0, "nil device"},
		{"bad dtype", l, tensor.DType(99), []int{2}, 0, "invalid dtype"},
		{"negative size", l, tensor.Float32, []int{2, -1}, 0, "dimension 1"},
		{"too many dims", l, tensor.Float32, make([]int, tensor.MaxRank+1), 0, "dimensions"},
		{"negative limit", l, tensor.Float32, []int{2}, -1, "limit -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := pool.NewTensorPool(tt.dev, tt.dtype, tt.shape, tt.limit)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "pool: ") {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestTensorPoolHitsAfterPut(t *testing.T) {
	l := newLab(t)
	p, err := pool.NewTensorPool(l, tensor.Float32, []int{4, 8}, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, err := p.Get()
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Get()
	if err != nil {
		t.Fatal(err)
	}
	if a == b || a.SharesStorage(b) {
		t.Fatal("two Gets without a Put returned the same memory")
	}
	if got := p.Stats(); got.Misses != 2 || got.Hits != 0 || got.Outstanding != 2 || got.Idle != 0 || got.Bytes != 2*4*8*4 {
		t.Fatalf("after two misses: %+v", got)
	}
	if err := p.Put(a); err != nil {
		t.Fatal(err)
	}
	if err := p.Put(b); err != nil {
		t.Fatal(err)
	}
	allocs := l.MemoryStats()["allocation.all.allocated"]
	c, err := p.Get()
	if err != nil {
		t.Fatal(err)
	}
	if c != b {
		t.Error("Get did not return the most recently put tensor (LIFO)")
	}
	if got := l.MemoryStats()["allocation.all.allocated"]; got != allocs {
		t.Errorf("a hit called the allocator: allocation.all.allocated %d -> %d", allocs, got)
	}
	if got := p.Stats(); got.Hits != 1 || got.Misses != 2 || got.Outstanding != 1 || got.Idle != 1 {
		t.Fatalf("after a hit: %+v", got)
	}
	if err := p.Put(c); err != nil {
		t.Fatal(err)
	}
	if err := p.Release(); err != nil {
		t.Fatal(err)
	}
	if got := l.MemoryAllocated(); got != 0 {
		t.Errorf("after Release %d bytes still allocated", got)
	}
}

func TestTensorPoolPutErrors(t *testing.T) {
	l := newLab(t)
	p, err := pool.NewTensorPool(l, tensor.Float32, []int{2, 3}, 0)
	if err != nil {
		t.Fatal(err)
	}
	other, err := pool.NewTensorPool(l, tensor.Float32, []int{2, 3}, 0)
	if err != nil {
		t.Fatal(err)
	}
	own, err := p.Get()
	if err != nil {
		t.Fatal(err)
	}
	idle, err := p.Get()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Put(idle); err != nil {
		t.Fatal(err)
	}
	foreign, err := other.Get()
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := tensor.Empty(l, tensor.Float32, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	wrongShape, err := tensor.Empty(l, tensor.Float32, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	wrongDType, err := tensor.Empty(l, tensor.Float16, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	view, err := own.View(2, 3) // same shape, but a second handle to own's storage
	if err != nil {
		t.Fatal(err)
	}
	released, err := tensor.Empty(l, tensor.Float32, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	mustRelease(t, released)
	tests := []struct {
		name   string
		x      *tensor.Tensor
		is     error
		substr string
	}{
		{"nil", nil, nil, "nil tensor"},
		{"released", released, tensor.ErrReleased, ""},
		{"wrong shape", wrongShape, pool.ErrWrongShape, "[3, 2]"},
		{"wrong dtype", wrongDType, pool.ErrWrongShape, "float16"},
		{"double put", idle, pool.ErrDoublePut, ""},
		{"from another pool", foreign, pool.ErrForeign, ""},
		{"never pooled", fresh, pool.ErrForeign, ""},
		{"a view of a pooled tensor", view, pool.ErrForeign, ""},
		{"still viewed", own, pool.ErrStillViewed, "1 other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := p.Stats()
			err := p.Put(tt.x)
			if err == nil {
				t.Fatal("Put succeeded")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want errors.Is %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.substr) || !strings.HasPrefix(err.Error(), "pool: Put") {
				t.Errorf("err = %q, want it to start with \"pool: Put\" and contain %q", err, tt.substr)
			}
			if after := p.Stats(); after != before {
				t.Errorf("a failed Put changed the stats: %+v -> %+v", before, after)
			}
		})
	}
	mustRelease(t, view)
	if err := p.Put(own); err != nil {
		t.Fatalf("Put after the view's release: %v", err)
	}
	mustRelease(t, fresh, wrongShape, wrongDType)
	if err := other.Put(foreign); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(p.Release(), other.Release()); err != nil {
		t.Fatal(err)
	}
}

func TestTensorPoolLimit(t *testing.T) {
	l := newLab(t)
	p, err := pool.NewTensorPool(l, tensor.Float32, []int{16}, 2)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := p.Get()
	b, _ := p.Get()
	if _, err := p.Get(); !errors.Is(err, pool.ErrExhausted) {
		t.Fatalf("third Get with limit 2: err = %v, want ErrExhausted", err)
	}
	if err := p.Put(a); err != nil {
		t.Fatal(err)
	}
	if c, err := p.Get(); err != nil || c != a {
		t.Fatalf("Get after a Put under the limit = %p, %v; want the put tensor", c, err)
	}
	if err := errors.Join(p.Put(a), p.Put(b)); err != nil {
		t.Fatal(err)
	}
	if err := p.Release(); err != nil {
		t.Fatal(err)
	}
}

// TestTensorPoolPutReleased: a pooled tensor released by mistake is
// forgotten, so that it does not hold a place under the limit forever.
func TestTensorPoolPutReleased(t *testing.T) {
	l := newLab(t)
	p, err := pool.NewTensorPool(l, tensor.Float32, []int{8}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	x, err := p.Get()
	if err != nil {
		t.Fatal(err)
	}
	mustRelease(t, x)
	if err := p.Put(x); !errors.Is(err, tensor.ErrReleased) || !strings.Contains(err.Error(), "forgets it") {
		t.Fatalf("Put of a released pooled tensor: %v", err)
	}
	if st := p.Stats(); st.Outstanding != 0 || st.Bytes != 0 {
		t.Errorf("after forgetting it: %+v", st)
	}
	y, err := p.Get()
	if err != nil {
		t.Fatalf("Get under the limit after the forgotten tensor: %v", err)
	}
	if err := p.Put(y); err != nil {
		t.Fatal(err)
	}
}

func TestTensorPoolRelease(t *testing.T) {
	l := newLab(t)
	p, err := pool.NewTensorPool(l, tensor.Float32, []int{256}, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := p.Get()
	b, _ := p.Get()
	if err := p.Put(a); err != nil {
		t.Fatal(err)
	}
	err = p.Release()
	if err == nil || !strings.Contains(err.Error(), "1 tensors still handed out") {
		t.Fatalf("Release with one tensor out: err = %v", err)
	}
	if !a.Released() {
		t.Error("Release left an idle tensor alive")
	}
	if b.Released() {
		t.Error("Release released a tensor still handed out")
	}
	if _, err := p.Get(); !errors.Is(err, pool.ErrClosed) {
		t.Errorf("Get after Release: err = %v, want ErrClosed", err)
	}
	if err := p.Put(b); err != nil || !b.Released() {
		t.Errorf("Put after Release = %v, released %v; want nil, true", err, b.Released())
	}
	if got := l.MemoryAllocated(); got != 0 {
		t.Errorf("%d bytes still allocated", got)
	}
	if err := p.Release(); err != nil {
		t.Errorf("second Release: %v", err)
	}
}

// TestTensorPoolConcurrent checks, under the race detector too, that no
// tensor is ever handed to two goroutines at once.
func TestTensorPoolConcurrent(t *testing.T) {
	l := newLab(t)
	const limit = 4
	p, err := pool.NewTensorPool(l, tensor.Float32, []int{8}, limit)
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg     sync.WaitGroup
		holder sync.Map // *tensor.Tensor -> goroutine
		errs   = make(chan error, 64)
	)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				x, err := p.Get()
				if errors.Is(err, pool.ErrExhausted) {
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				if _, loaded := holder.LoadOrStore(x, g); loaded {
					errs <- errors.New("tensor handed to two goroutines")
					return
				}
				holder.Delete(x)
				if err := p.Put(x); err != nil {
					errs <- err
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
	st := p.Stats()
	if st.Outstanding != 0 || st.Misses > limit || st.Idle != int(st.Misses) {
		t.Errorf("stats after the run: %+v", st)
	}
	if err := p.Release(); err != nil {
		t.Fatal(err)
	}
}

// A tensor put back and then released (its memory is gone) is never handed
// out again: Get forgets it and allocates, Stats does not count it, and
// Release does not fail on it.
func TestTensorPoolForgetsATensorReleasedAfterPut(t *testing.T) {
	l := newLab(t)
	p, err := pool.NewTensorPool(l, tensor.Float32, []int{2, 3}, 0)
	if err != nil {
		t.Fatal(err)
	}
	x, err := p.Get()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Put(x); err != nil {
		t.Fatal(err)
	}
	if err := x.Release(); err != nil { // a mistake: it belongs to the pool now
		t.Fatal(err)
	}
	if st := p.Stats(); st.Idle != 0 || st.Bytes != 0 {
		t.Errorf("Stats after the release = %+v; want nothing idle or held", st)
	}
	y, err := p.Get()
	if err != nil {
		t.Fatal(err)
	}
	if y == x || y.Released() {
		t.Fatalf("Get handed out the released tensor again")
	}
	if st := p.Stats(); st.Hits != 0 || st.Misses != 2 {
		t.Errorf("Stats = %+v; want 0 hits and 2 misses", st)
	}
	if _, err := y.Float64s(); err != nil {
		t.Fatalf("the tensor Get returned is unusable: %v", err)
	}
	if err := p.Put(y); err != nil {
		t.Fatal(err)
	}
	if err := p.Release(); err != nil {
		t.Fatalf("Release: %v", err)
	}
}
