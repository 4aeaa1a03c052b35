package cpu

import (
	"runtime"
	"sync"
)

// grain is the least number of elements (or multiply-adds) worth a goroutine.
const grain = 1 << 15

// collapse drops dimensions of size 1 and merges neighbouring dimensions that
// are contiguous with each other in every operand, so loops run over as few and
// as long dimensions as possible. The result has at least one dimension.
func collapse(shape []int, strides ...[]int) ([]int, [][]int) {
	outShape := make([]int, 0, len(shape)+1)
	outStrides := make([][]int, len(strides))
	for d, n := range shape {
		if n == 1 {
			continue
		}
		if last := len(outShape) - 1; last >= 0 {
			merge := true
			for k := range strides {
				// The previous (outer) dimension steps over exactly this one.
				if outStrides[k][last] != strides[k][d]*n {
					merge = false
					break
				}
			}
			if merge {
				outShape[last] *= n
				for k := range strides {
					outStrides[k][last] = strides[k][d]
				}
				continue
			}
		}
		outShape = append(outShape, n)
		for k := range strides {
			outStrides[k] = append(outStrides[k], strides[k][d])
		}
	}
	if len(outShape) == 0 {
		outShape = append(outShape, 1)
		for k := range strides {
			outStrides[k] = append(outStrides[k], 0)
		}
	}
	return outShape, outStrides
}

// runs visits the logical (row-major) elements [lo, hi) of shape in runs along
// the innermost dimension. For each run fn gets the logical index pos of its
// first element, its length n, the element offset of its first element in each
// operand (base[k] + Σ index·strides[k]) and each operand's stride along the
// run; fn must not keep or modify offs and steps.
func runs(shape []int, strides [][]int, base []int, lo, hi int, fn func(pos, n int, offs, steps []int)) {
	r := len(shape)
	idx := make([]int, r)
	rem := lo
	for d := r - 1; d >= 0; d-- {
		idx[d] = rem % shape[d]
		rem /= shape[d]
	}
	offs := make([]int, len(strides))
	for k, st := range strides {
		o := base[k]
		for d := range idx {
			o += idx[d] * st[d]
		}
		offs[k] = o
	}
	inner := shape[r-1]
	steps := make([]int, len(strides))
	for k, st := range strides {
		steps[k] = st[r-1]
	}
	for pos := lo; pos < hi; {
		n := min(inner-idx[r-1], hi-pos)
		fn(pos, n, offs, steps)
		pos += n
		for k, st := range strides {
			offs[k] += n * st[r-1]
		}
		idx[r-1] += n
		for d := r - 1; d > 0 && idx[d] == shape[d]; d-- {
			idx[d] = 0
			idx[d-1]++
			for k, st := range strides {
				offs[k] += st[d-1] - shape[d]*st[d]
			}
		}
	}
}

// parallel calls fn on consecutive ranges covering [0, total), on up to
// GOMAXPROCS goroutines when cost (the total work, in element operations)
// justifies it, and waits for them.
func parallel(total, cost int, fn func(lo, hi int)) {
	w := min(runtime.GOMAXPROCS(0), cost/grain, total)
	if w <= 1 {
		fn(0, total)
		return
	}
	chunk := (total + w - 1) / w
	var wg sync.WaitGroup
	for lo := 0; lo < total; lo += chunk {
		hi := min(lo+chunk, total)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}

// forEach visits every element of shape (with operands of the given strides and
// base offsets) in runs, in parallel for large work. Runs of different
// goroutines cover disjoint logical elements.
func forEach(shape []int, strides [][]int, base []int, fn func(pos, n int, offs, steps []int)) {
	shape, strides = collapse(shape, strides...)
	total := 1
	for _, n := range shape {
		total *= n
	}
	parallel(total, total, func(lo, hi int) { runs(shape, strides, base, lo, hi, fn) })
}
