package mypool

import (
	"errors"
	"fmt"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
	"memlab.dev/memlab/exercises/internal/labtest"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/tensor"
)

// msg picks a failure message in the learner's language (MEMLAB_LANG).
var msg = exercisetest.Msg

// extent is the byte range [lo, hi) of t's elements in device memory.
func extent(t *tensor.Tensor) (lo, hi uint64) {
	lo = uint64(t.DataPtr())
	return lo, lo + uint64(t.Nbytes())
}

func newPool(t *testing.T, lab *memlab.Lab, n int, shape ...int) *Pool {
	t.Helper()
	var p *Pool
	var err error
	if !exercisetest.Call(t, fmt.Sprintf("NewPool(lab, %d, %v)", n, shape), func() { p, err = NewPool(lab, n, shape...) }) {
		t.FailNow()
	}
	if err != nil {
		t.Fatalf("NewPool(lab, %d, %v): %v", n, shape, err)
	}
	return p
}

func TestA_Serve(t *testing.T) {
	lab := labtest.Open(t, "1GiB", "")
	start := lab.MemoryAllocated()
	p := newPool(t, lab, 4, 64, 1024) // four 256 KiB buffers
	mallocs := labtest.Stat(lab, "allocation.all.allocated")
	// 200 requests, up to four in flight: a request takes a buffer, fills it with
	// its number, and gives it back three requests later.
	var inFlight []*tensor.Tensor
	var fill []float64
	for r := 0; r < 200; r++ {
		if len(inFlight) == 4 {
			done, want := inFlight[0], fill[0]
			v := memlab.Must(done.Float32s())
			if v[0] != float32(want) || v[len(v)-1] != float32(want) {
				t.Fatalf(msg("request %.0f found %g in its buffer: another request wrote into it — a buffer handed out must belong to one holder until it is put back", "请求 %.0f 在它的缓冲区里发现了 %g：另一个请求写进去了——交出的缓冲区在归还之前只能属于一个持有者"), want, v[0])
			}
			var err error
			if !exercisetest.Call(t, "p.Put(buf)", func() { err = p.Put(done) }) {
				return
			}
			if err != nil {
				t.Fatalf(msg("Put of a buffer Get handed out: %v", "Put 一个 Get 交出的缓冲区：%v"), err)
			}
			inFlight, fill = inFlight[1:], fill[1:]
		}
		var buf *tensor.Tensor
		var err error
		if !exercisetest.Call(t, "p.Get()", func() { buf, err = p.Get() }) {
			return
		}
		if err != nil {
			t.Fatalf(msg("request %d: Get with %d of 4 buffers out: %v", "请求 %d：4 个缓冲区拿走了 %d 个时 Get：%v"), r, len(inFlight), err)
		}
		if sh := buf.Shape(); len(sh) != 2 || sh[0] != 64 || sh[1] != 1024 || buf.DType() != tensor.Float32 || !buf.IsContiguous() {
			t.Fatalf(msg("Get: a %v %v tensor (contiguous %v); want contiguous float32 [64 1024]", "Get：一个 %v %v 张量（连续 %v）；期望连续的 float32 [64 1024]"), buf.DType(), sh, buf.IsContiguous())
		}
		lo, hi := extent(buf)
		for _, o := range inFlight {
			if olo, ohi := extent(o); lo < ohi && olo < hi {
				t.Fatalf(msg("Get handed out memory [%#x, %#x) that overlaps a buffer still in use [%#x, %#x)", "Get 交出的内存 [%#x, %#x) 和一个仍在使用的缓冲区 [%#x, %#x) 重叠"), lo, hi, olo, ohi)
			}
		}
		memlab.Check(buf.Scale_(0))
		one := memlab.Must(tensor.Full(lab, tensor.Float32, float64(r), 1))
		memlab.Check(buf.Add_(one))
		memlab.Check(one.Release())
		mallocs++ // the test's own one-element tensor
		inFlight, fill = append(inFlight, buf), append(fill, float64(r))
	}
	if n := labtest.Stat(lab, "allocation.all.allocated") - mallocs; n != 0 {
		t.Errorf(msg("serving 200 requests asked the allocator for memory %d times; want 0 — allocate every buffer in NewPool, and let Get and Put only hand them around", "服务 200 个请求向分配器要了 %d 次显存；期望 0 次——在 NewPool 里分配所有缓冲区，让 Get 和 Put 只负责传来传去"), n)
	}
	for _, b := range inFlight {
		memlab.Check(p.Put(b))
	}
	var err error
	if !exercisetest.Call(t, "p.Close()", func() { err = p.Close() }) {
		return
	}
	if err != nil {
		t.Fatalf(msg("Close with every buffer back: %v", "所有缓冲区都还回来后 Close：%v"), err)
	}
	if left := lab.MemoryAllocated() - start; left != 0 {
		t.Errorf(msg("after Close %d bytes are still allocated; release everything the pool made", "Close 之后还有 %d 字节处于已分配；释放池创建的一切"), left)
	}
}

func TestB_Misuse(t *testing.T) {
	lab := labtest.Open(t, "1GiB", "")
	for _, bad := range []struct {
		n     int
		shape []int
	}{{0, []int{4}}, {2, []int{4, 0}}, {2, []int{-1}}} {
		var err error
		if !exercisetest.Call(t, fmt.Sprintf("NewPool(lab, %d, %v)", bad.n, bad.shape), func() { _, err = NewPool(lab, bad.n, bad.shape...) }) {
			return
		}
		if err == nil {
			t.Errorf(msg("NewPool(lab, %d, %v): want an error", "NewPool(lab, %d, %v)：期望一个错误"), bad.n, bad.shape)
		}
	}
	p := newPool(t, lab, 2, 8)
	a := memlab.Must(p.Get())
	b := memlab.Must(p.Get())
	if _, err := p.Get(); !errors.Is(err, ErrExhausted) {
		t.Errorf(msg("a third Get from a pool of 2: %v; want ErrExhausted", "从容量为 2 的池里第三次 Get：%v；期望 ErrExhausted"), err)
	}
	stranger := memlab.Must(tensor.Zeros(lab, tensor.Float32, 8))
	defer stranger.Release()
	if err := p.Put(stranger); !errors.Is(err, ErrNotFromPool) {
		t.Errorf(msg("Put of a tensor the pool did not make: %v; want ErrNotFromPool", "Put 一个不是池创建的张量：%v；期望 ErrNotFromPool"), err)
	}
	if err := p.Close(); !errors.Is(err, ErrInUse) {
		t.Errorf(msg("Close with 2 buffers out: %v; want ErrInUse", "有 2 个缓冲区没还时 Close：%v；期望 ErrInUse"), err)
	}
	memlab.Check(p.Put(a))
	if err := p.Put(a); !errors.Is(err, ErrNotFromPool) {
		t.Errorf(msg("a second Put of the same buffer: %v; want ErrNotFromPool — otherwise the next two Gets hand it to two holders", "同一个缓冲区第二次 Put：%v；期望 ErrNotFromPool——否则接下来的两次 Get 会把它交给两个持有者"), err)
	}
	memlab.Check(p.Put(b))
	if err := p.Close(); err != nil {
		t.Errorf(msg("Close with every buffer back: %v", "所有缓冲区都还回来后 Close：%v"), err)
	}
}
