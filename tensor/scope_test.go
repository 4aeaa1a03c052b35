package tensor_test

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"memlab.dev/memlab/tensor"
)

func TestScopeReleasesWhatWasMadeInside(t *testing.T) {
	dev := newTestDevice()
	outside := keep(t)(tensor.Ones(dev, tensor.Float32, 2))
	var kept *tensor.Tensor
	err := tensor.WithScope(func(s *tensor.Scope) error {
		x, err := s.Track(tensor.Ones(dev, tensor.Float32, 2, 2))
		if err != nil {
			return err
		}
		y, err := x.Relu() // joins x's scope
		if err != nil {
			return err
		}
		v, err := y.T() // a view joins it too
		if err != nil {
			return err
		}
		_ = v
		z, err := y.Add(outside) // first input's scope
		if err != nil {
			return err
		}
		w, err := outside.Exp() // outside is in no scope: w is not tracked
		if err != nil {
			return err
		}
		defer w.Release()
		if _, err := s.Track(y, nil); err != nil { // tracking twice counts once
			return err
		}
		if err := x.Release(); err != nil { // released by hand: the scope skips it
			return err
		}
		if n := s.Len(); n != 3 {
			t.Errorf("Len = %d, want 3 (y, its view, z)", n)
		}
		kept = s.Keep(z)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if kept.Released() || dev.live() != 2 {
		t.Fatalf("after the scope: kept released=%v, %d live allocations (want outside and kept)", kept.Released(), dev.live())
	}
	checkValues(t, kept, []float64{2, 2, 2, 2}, 0)
	if err := kept.Release(); err != nil {
		t.Fatal(err)
	}
}

func TestScopeAfterRelease(t *testing.T) {
	dev := newTestDevice()
	s := tensor.NewScope()
	x, err := s.Track(tensor.Ones(dev, tensor.Float32, 2))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Release(); err != nil {
		t.Fatal(err)
	}
	if !x.Released() || dev.live() != 0 {
		t.Fatal("scope did not release its tensor")
	}
	if err := s.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	y, err := s.Track(tensor.Ones(dev, tensor.Float32, 2))
	if !errors.Is(err, tensor.ErrScopeReleased) || y == nil {
		t.Fatalf("Track on a released scope: %v", err)
	}
	_ = y.Release()
	_, err = s.Track(tensor.Ones(dev, tensor.Float32, -1))
	if err == nil || errors.Is(err, tensor.ErrScopeReleased) {
		t.Fatalf("Track must pass the creation error on: %v", err)
	}
}

func TestWithScopeReleasesOnError(t *testing.T) {
	dev := newTestDevice()
	boom := errors.New("boom")
	err := tensor.WithScope(func(s *tensor.Scope) error {
		if _, err := s.Track(tensor.Ones(dev, tensor.Float32, 8)); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || dev.live() != 0 {
		t.Fatalf("err %v, %d live allocations", err, dev.live())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestLeakedTensorIsReportedNotFreed(t *testing.T) {
	dev := newTestDevice()
	var buf syncBuffer
	prev := tensor.SetLeakWriter(&buf)
	defer tensor.SetLeakWriter(prev)
	tensor.RecordCreationStacks(true)
	defer tensor.RecordCreationStacks(false)
	func() {
		x, err := tensor.Zeros(dev, tensor.Float16, 3, 5)
		if err != nil {
			t.Fatal(err)
		}
		_ = x // dropped without Release
		y, err := tensor.Zeros(dev, tensor.Float32, 7)
		if err != nil {
			t.Fatal(err)
		}
		_ = y.Release() // released: never reported
	}()
	for i := 0; i < 200 && !strings.Contains(buf.String(), "leaked"); i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	out := buf.String()
	if !strings.Contains(out, "memlab: leaked tensor float16 [3, 5] (30 bytes) on cuda:0") || !strings.Contains(out, "created at:") || !strings.Contains(out, "TestLeakedTensorIsReportedNotFreed") {
		t.Fatalf("leak report:\n%s", out)
	}
	if strings.Count(out, "leaked tensor float16 [3, 5]") != 1 || strings.Contains(out, "leaked tensor float32 [7]") {
		t.Fatalf("want exactly one report:\n%s", out)
	}
	if dev.live() != 1 {
		t.Fatalf("%d live allocations: the leak report must not free memory", dev.live())
	}
}
