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

// msg picks a failure message in the learner's language (MEMLAB_LANG).
var msg = exercisetest.Msg

func newPool(t *testing.T, shape []int, elemSize, capacity int) *Pool {
	t.Helper()
	var p *Pool
	var err error
	call := fmt.Sprintf("NewPool(%v, %d, %d)", shape, elemSize, capacity)
	if !exercisetest.Call(t, call, func() { p, err = NewPool(shape, elemSize, capacity) }) {
		t.FailNow()
	}
	if err != nil || p == nil {
		t.Fatalf(msg("%s: want a pool, got %v, %v", "%s：期望得到一个池，得到 %v、%v"), call, p, err)
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
		t.Fatalf(msg("Get(): want a buffer, got %v, %v", "Get()：期望得到一个缓冲区，得到 %v、%v"), b, err)
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
		t.Fatalf(msg("Put(b): unexpected error %v", "Put(b)：意外的错误 %v"), err)
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
		{[]int{2, 3}, 4, 24, msg("6 float32 elements are 24 bytes", "6 个 float32 元素是 24 字节")},
		{[]int{128, 64}, 2, 16384, msg("8192 float16 elements", "8192 个 float16 元素")},
		{[]int{}, 8, 8, msg("a scalar holds one element", "标量有一个元素")},
		{[]int{4, 0}, 4, 0, msg("a shape with a 0 has no elements", "含 0 的形状没有元素")},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.shape, tc.elemSize), func(t *testing.T) {
			p := newPool(t, tc.shape, tc.elemSize, 1)
			if b := get(t, p); len(b.Data) != tc.want {
				t.Errorf(msg("NewPool(%v, %d, 1).Get(): len(Data) = %d, want %d — %s", "NewPool(%v, %d, 1).Get()：len(Data) = %d，期望 %d——%s"), tc.shape, tc.elemSize, len(b.Data), tc.want, tc.why)
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
			t.Fatal(msg("Get after Put: got a new buffer — the idle one should be reused instead of allocating", "Put 之后 Get：得到了一个新缓冲区——应该复用空闲的那个，而不是分配"))
		}
		if b.Data[0] != 42 {
			t.Errorf(msg("reused buffer: Data[0] = %d, want 42 — Put does not clear contents (stale data, as in PyTorch)", "复用的缓冲区：Data[0] = %d，期望 42——Put 不清空内容（旧数据，和 PyTorch 一样）"), b.Data[0])
		}
		if s := stats(t, p); s != (Stats{Created: 1, Reused: 1, InUse: 1, Idle: 0}) {
			t.Errorf(msg("Stats() = %+v, want {Created:1 Reused:1 InUse:1 Idle:0} — one buffer created, reused once, now in use", "Stats() = %+v，期望 {Created:1 Reused:1 InUse:1 Idle:0}——创建一个缓冲区，复用一次，现在在用"), s)
		}
	})
	t.Run("most recently returned first", func(t *testing.T) {
		p := newPool(t, []int{4}, 4, 3)
		a, b := get(t, p), get(t, p)
		put(t, p, a)
		put(t, p, b)
		if got := get(t, p); got != b {
			t.Error(msg("after Put(a), Put(b): Get returned a — want b, the most recently returned (LIFO)", "Put(a)、Put(b) 之后：Get 返回了 a——期望 b，即最近归还的那个（后进先出）"))
		}
		if got := get(t, p); got != a {
			t.Error(msg("second Get: want a, the remaining idle buffer", "第二次 Get：期望 a，剩下的那个空闲缓冲区"))
		}
		if s := stats(t, p); s != (Stats{Created: 2, Reused: 2, InUse: 2, Idle: 0}) {
			t.Errorf(msg("Stats() = %+v, want {Created:2 Reused:2 InUse:2 Idle:0}", "Stats() = %+v，期望 {Created:2 Reused:2 InUse:2 Idle:0}"), s)
		}
	})
	t.Run("distinct buffers while in use", func(t *testing.T) {
		p := newPool(t, []int{4}, 4, 3)
		a, b, c := get(t, p), get(t, p), get(t, p)
		if a == b || b == c || a == c || &a.Data[0] == &b.Data[0] || &b.Data[0] == &c.Data[0] {
			t.Fatal(msg("three Gets without Put returned shared buffers — each caller needs its own memory", "三次 Get 而没有 Put，返回的缓冲区是共享的——每个调用者都需要自己的内存"))
		}
		if s := stats(t, p); s != (Stats{Created: 3, Reused: 0, InUse: 3, Idle: 0}) {
			t.Errorf(msg("Stats() = %+v, want {Created:3 Reused:0 InUse:3 Idle:0}", "Stats() = %+v，期望 {Created:3 Reused:0 InUse:3 Idle:0}"), s)
		}
		put(t, p, c)
		if s := stats(t, p); s != (Stats{Created: 3, Reused: 0, InUse: 2, Idle: 1}) {
			t.Errorf(msg("after one Put: Stats() = %+v, want {Created:3 Reused:0 InUse:2 Idle:1}", "一次 Put 之后：Stats() = %+v，期望 {Created:3 Reused:0 InUse:2 Idle:1}"), s)
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
		t.Fatalf(msg("third Get from a pool of capacity 2: want an error wrapping ErrExhausted, got %v, %v — the cap is the point of a pool", "从容量为 2 的池里第三次 Get：期望一个包装了 ErrExhausted 的错误，得到 %v、%v——上限正是池的意义所在"), b, err)
	}
	put(t, p, a)
	if got := get(t, p); got != a {
		t.Error(msg("Get after returning a buffer to an exhausted pool: want that buffer back", "把一个缓冲区还给耗尽的池之后 Get：期望拿回那个缓冲区"))
	}
	if s := stats(t, p); s != (Stats{Created: 2, Reused: 1, InUse: 2, Idle: 0}) {
		t.Errorf(msg("Stats() = %+v, want {Created:2 Reused:1 InUse:2 Idle:0} — a failed Get changes no counter", "Stats() = %+v，期望 {Created:2 Reused:1 InUse:2 Idle:0}——失败的 Get 不改任何计数器"), s)
	}
}

func TestB_BadPuts(t *testing.T) {
	other := newPool(t, []int{2}, 4, 1)
	tests := []struct {
		name string
		buf  func(t *testing.T, p *Pool) *Buffer
		why  string
	}{
		{"nil", func(*testing.T, *Pool) *Buffer { return nil }, msg("there is no buffer to return", "没有缓冲区可以归还")},
		{"double put", func(t *testing.T, p *Pool) *Buffer { b := get(t, p); put(t, p, b); return b }, msg("the buffer is already idle; accepting it again would hand it to two callers", "这个缓冲区已经空闲；再收一次会把它交给两个调用者")},
		{"foreign buffer", func(t *testing.T, _ *Pool) *Buffer { return get(t, other) }, msg("the buffer belongs to another pool", "这个缓冲区属于另一个池")},
		{"hand-made buffer", func(*testing.T, *Pool) *Buffer { return &Buffer{Data: make([]byte, 8)} }, msg("the pool never handed it out", "这个池从没交出过它")},
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
				t.Errorf(msg("Put (%s): want an error — %s", "Put（%s）：期望一个错误——%s"), tc.name, tc.why)
			}
			if after := stats(t, p); after != before {
				t.Errorf(msg("Put (%s) failed but changed Stats from %+v to %+v", "Put（%s）失败了，却把 Stats 从 %+v 改成了 %+v"), tc.name, before, after)
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
		{[]int{2, -1}, 4, 1, msg("a negative size", "负的大小")},
		{[]int{2}, 0, 1, msg("an element has at least 1 byte", "一个元素至少 1 字节")},
		{[]int{2}, 4, 0, msg("a pool that can hold no buffer is useless", "一个缓冲区都装不下的池没有用")},
		{[]int{2}, 4, -3, msg("a negative capacity", "负的容量")},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.shape, tc.elemSize, tc.capacity), func(t *testing.T) {
			var err error
			call := fmt.Sprintf("NewPool(%v, %d, %d)", tc.shape, tc.elemSize, tc.capacity)
			if !exercisetest.Call(t, call, func() { _, err = NewPool(tc.shape, tc.elemSize, tc.capacity) }) {
				return
			}
			if err == nil {
				t.Errorf(msg("%s: want an error — %s", "%s：期望一个错误——%s"), call, tc.why)
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
					errs <- msg("a buffer was handed to two goroutines at once (another one overwrote its data) — guard Get and Put with a mutex", "一个缓冲区同时交给了两个 goroutine（另一个覆盖了它的数据）——用互斥锁保护 Get 和 Put")
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
		t.Errorf(msg("after all goroutines returned their buffers: Stats() = %+v — want Created ≤ %d, InUse 0 and Idle == Created", "所有 goroutine 都归还缓冲区之后：Stats() = %+v——期望 Created ≤ %d、InUse 为 0 且 Idle == Created"), s, capacity)
	}
}
