package tensor

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// offsets lists the storage offset of every element of l in row-major order
// of its indices: what a tensor with layout l reads.
func offsets(l Layout) []int {
	var out []int
	forEachOffset(l, func(off int) { out = append(out, off) })
	return out
}

// randomLayout derives a layout from a contiguous one by a few random views,
// as a program would.
func randomLayout(r *rand.Rand) Layout {
	shape := make([]int, 1+r.IntN(4))
	for i := range shape {
		shape[i] = 1 + r.IntN(4)
	}
	l := ContiguousLayout(shape...)
	for range r.IntN(4) {
		var next Layout
		var err error
		switch r.IntN(4) {
		case 0:
			next, err = l.Transpose(r.IntN(l.Dim()), r.IntN(l.Dim()))
		case 1:
			d := r.IntN(l.Dim())
			next, err = l.Slice(d, r.IntN(l.Shape[d]+1), l.Shape[d], 1+r.IntN(2))
		case 2:
			next, err = l.Unsqueeze(r.IntN(l.Dim() + 1))
		case 3:
			d := r.IntN(l.Dim())
			if l.Shape[d] == 1 {
				next, err = l.Expand(replaceAt(l.Shape, d, 3)...)
			} else {
				next = l
			}
		}
		if err == nil && next.Dim() > 0 {
			l = next
		}
	}
	return l
}

func replaceAt(s Shape, i, v int) []int {
	out := s.Clone()
	out[i] = v
	return out
}

// factorShape splits n into a random shape.
func factorShape(r *rand.Rand, n int) []int {
	var shape []int
	for n > 1 {
		var divs []int
		for d := 2; d <= n; d++ {
			if n%d == 0 {
				divs = append(divs, d)
			}
		}
		d := divs[r.IntN(len(divs))]
		shape = append(shape, d)
		n /= d
		if r.IntN(4) == 0 {
			shape = append(shape, 1)
		}
	}
	if len(shape) == 0 || r.IntN(3) == 0 {
		shape = append(shape, 1)
	}
	r.Shuffle(len(shape), func(i, j int) { shape[i], shape[j] = shape[j], shape[i] })
	return shape
}

// TestViewPreservesElementOrder checks View against its definition on
// thousands of random layouts: a successful view reads the same storage
// elements in the same order, and a view fails only when the elements,
// read in order, are not evenly strided within some new dimension (in which
// case Reshape copies into a layout that is contiguous).
func TestViewPreservesElementOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	views, fails := 0, 0
	for range 20000 {
		l := randomLayout(r)
		n := l.Numel()
		if n == 0 {
			continue
		}
		shape := factorShape(r, n)
		v, err := l.View(shape...)
		want := offsets(l)
		if err != nil {
			if !strings.Contains(err.Error(), "view size is not compatible") {
				t.Fatalf("%v.View(%v): unexpected error %v", l, shape, err)
			}
			// A view is impossible: some new dimension's consecutive
			// elements are not evenly spaced in storage.
			if evenlyStrided(want, shape) {
				t.Fatalf("%v.View(%v) failed, but the elements are evenly strided in every new dimension", l, shape)
			}
			rl, cp, err := l.Reshape(shape...)
			if err != nil || !cp || !rl.IsContiguous() {
				t.Fatalf("Reshape after a failed view: %v copy=%v %v", rl, cp, err)
			}
			fails++
			continue
		}
		views++
		if got := offsets(v); !slices.Equal(got, want) {
			t.Fatalf("%v.View(%v) = %v reads %v, want %v", l, shape, v, got, want)
		}
	}
	if views < 1000 || fails < 100 {
		t.Fatalf("too few cases of each kind: %d views, %d failures", views, fails)
	}
}

// evenlyStrided reports whether storage offsets offs, read in row-major order
// of shape, advance by one constant stride along every dimension of shape.
func evenlyStrided(offs []int, shape []int) bool {
	strides := ContiguousStrides(shape)
	for d, size := range shape {
		if size < 2 {
			continue
		}
		step := offs[strides[d]] - offs[0]
		for i := range offs {
			if (i/strides[d])%size == size-1 {
				continue
			}
			if offs[i+strides[d]]-offs[i] != step {
				return false
			}
		}
	}
	return true
}

func TestMalformedLayoutsAreErrorsNotPanics(t *testing.T) {
	bad := []Layout{
		{Shape: Shape{2, 3}},
		{Shape: Shape{2}, Strides: []int{-1}},
		{Shape: Shape{2}, Strides: []int{1}, Offset: -4},
		{Shape: Shape{-2}, Strides: []int{1}},
	}
	for _, l := range bad {
		if _, err := l.View(-1); err == nil || !strings.Contains(err.Error(), "malformed layout") {
			t.Errorf("%v.View: %v", l, err)
		}
		if _, err := l.Transpose(0, 0); err == nil {
			t.Errorf("%v.Transpose accepted", l)
		}
		if _, _, err := l.Reshape(-1); err == nil {
			t.Errorf("%v.Reshape accepted", l)
		}
		if l.IsContiguous() || l.IsNonOverlappingAndDense() || l.HasInternalOverlap() {
			t.Errorf("%v: a predicate is true", l)
		}
		if lo, hi := l.Span(); lo != hi {
			t.Errorf("%v: span %d..%d", l, lo, hi)
		}
	}
}

// FuzzLayout drives the view algebra with arbitrary arguments, including
// out-of-range dims and negative sizes: nothing may panic, and every view that
// succeeds must stay inside the storage of its base.
func FuzzLayout(f *testing.F) {
	f.Add(uint64(1), 2, 3, -1, 4)
	f.Add(uint64(7), -5, 0, 100, -100)
	f.Fuzz(func(t *testing.T, seed uint64, a, b, c, d int) {
		r := rand.New(rand.NewPCG(seed, 0))
		base := randomLayout(r)
		lo, hi := base.Span()
		ops := []func(Layout) (Layout, error){
			func(l Layout) (Layout, error) { return l.View(a, b) },
			func(l Layout) (Layout, error) { out, _, err := l.Reshape(a, -1); return out, err },
			func(l Layout) (Layout, error) { return l.Transpose(a, b) },
			func(l Layout) (Layout, error) { return l.Permute(a, b, c) },
			func(l Layout) (Layout, error) { return l.Slice(a, b, c, d) },
			func(l Layout) (Layout, error) { return l.Narrow(a, b, c) },
			func(l Layout) (Layout, error) { return l.Select(a, b) },
			func(l Layout) (Layout, error) { return l.Expand(a, b, c) },
			func(l Layout) (Layout, error) { return l.Squeeze(a) },
			func(l Layout) (Layout, error) { return l.Unsqueeze(a) },
		}
		for i, op := range ops {
			out, err := op(base)
			if err != nil || out.Numel() == 0 || i == 1 {
				continue
			}
			if err := out.Validate(); err != nil {
				t.Fatalf("op %d on %v gave %v: %v", i, base, out, err)
			}
			if olo, ohi := out.Span(); olo < lo || ohi > hi {
				t.Fatalf("op %d on %v gave %v, reaching [%d, %d) outside [%d, %d)", i, base, out, olo, ohi, lo, hi)
			}
		}
	})
}
