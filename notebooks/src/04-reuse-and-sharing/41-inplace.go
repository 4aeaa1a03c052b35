package nb04

import (
	"fmt"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/tensor"
)

/*md
## 4.1 In-place operations (原地操作)

`y = x.relu()` allocates `y` while `x` is still alive; `x.relu_()` overwrites `x` and
allocates nothing. Below, a 1024 × 1024 float32 activation (4 MiB): the memory after each
step, and the peak (`max_memory_allocated`) of each version.
*/

//nb:cell plot
func reluVsReluInPlace() {
	l := memlab.MustOpen()
	defer l.Close()
	steps := l.Steps()
	x := memlab.Must(tensor.Randn(l, 1, tensor.Float32, 1024, 1024))
	steps.Add("x = randn(1024, 1024)")
	y := memlab.Must(x.Relu())
	steps.Add("y = x.relu()")
	outOfPlace := l.MaxMemoryAllocated()
	memlab.Check(tensor.ReleaseAll(x, y))
	steps.Add("del x, y")

	l.ResetPeakMemoryStats()
	x = memlab.Must(tensor.Randn(l, 1, tensor.Float32, 1024, 1024))
	steps.Add("x = randn(1024, 1024)")
	memlab.Check(x.Relu_())
	steps.Add("x.relu_()")
	inPlace := l.MaxMemoryAllocated()
	memlab.Check(x.Release())
	steps.Add("del x")
	steps.Table().Show()
	memlab.Show(steps.PlotAllocator("4.1 y = x.relu() vs x.relu_()"))
	memlab.Measured("y = x.relu() peaks at %s, x.relu_() at %s: %.0f %% less, exactly the output's size",
		memlab.FormatBytes(outOfPlace), memlab.FormatBytes(inPlace), 100*float64(outOfPlace-inPlace)/float64(outOfPlace))
}

/*md
Reserved memory does not move: the caching allocator takes one 20 MiB segment for
requests between 1 and 10 MiB (notebook 02), and both tensors fit in it. The saving is
real only if nobody needs `x` afterwards — the hazards below.

**Try it:** make the activation 4096 × 4096 (64 MiB: now each tensor needs a segment of
its own, and reserved memory shows the difference too), or replace `Relu` by `Gelu` and
`Relu_` by `Gelu_`.

### `a = a + 1` against `a += 1`

Python's `a = a + 1` computes a new tensor while the old `a` is alive, then rebinds the
name (the old tensor dies with its last reference); `a += 1` is `a.add_(1)`.
*/

// first returns t's first element.
//
//nb:decl
func first(t *tensor.Tensor) float32 { return memlab.Must(t.Float32s())[0] }

// values returns t's elements and releases t.
func values(t *tensor.Tensor) []float32 {
	v := memlab.Must(t.Float32s())
	memlab.Check(t.Release())
	return v
}

//nb:cell
func rebindVsAddInPlace() {
	l := memlab.MustOpen()
	defer l.Close()
	one := memlab.Must(tensor.Full(l, tensor.Float32, 1)) // the scalar 1, broadcast
	a := memlab.Must(tensor.Zeros(l, tensor.Float32, 1024, 1024))
	ptr, base := a.DataPtr(), l.MemoryAllocated()

	l.ResetPeakMemoryStats()
	b := memlab.Must(a.Add(one)) // a + 1
	memlab.Check(a.Release())    // a = …: the old tensor's last reference goes
	a = b
	rebind := l.MaxMemoryAllocated() - base
	fmt.Printf("a = a + 1: same storage %v, version %d\n", a.DataPtr() == ptr, a.Version())

	l.ResetPeakMemoryStats()
	ptr = a.DataPtr()
	memlab.Check(a.Add_(one)) // a += 1
	inPlace := l.MaxMemoryAllocated() - base
	fmt.Printf("a += 1:    same storage %v, version %d, a[0, 0] = %v\n", a.DataPtr() == ptr, a.Version(), first(a))
	memlab.Measured("a = a + 1 needs %s beyond a at its peak, a += 1 needs %s", memlab.FormatBytes(rebind), memlab.FormatBytes(inPlace))
	memlab.Check(tensor.ReleaseAll(a, one))
}

/*md
The out-of-place version holds two copies of `a` for a moment — the same 2× as `relu`;
in a loop over layers that moment recurs every iteration.

**Try it:** write `a = a * 2 + 1` (two temporaries: `a * 2`, then `+ 1`) and its
in-place form `a.mul_(2).add_(1)` (here: `Scale_(2)`, then `Add_(one)`).

### Hazard: a tensor two branches read

`out = relu(x) + 2·x`: `x` feeds two branches. Doing branch A's relu in place rewrites the
`x` that branch B reads next.
*/

//nb:cell
func sharedBranch() {
	l := memlab.MustOpen()
	defer l.Close()
	data := []float32{1, -2, 3, -4, 0.5, -0.5}
	x := memlab.Must(tensor.FromFloat32(l, data))
	a, b := memlab.Must(x.Relu()), memlab.Must(x.Scale(2)) // relu(x), 2·x
	right := values(memlab.Must(a.Add(b)))
	memlab.Check(tensor.ReleaseAll(a, b))

	before := x.Version()
	memlab.Check(x.Relu_())     // branch A in place: a is x itself now
	b = memlab.Must(x.Scale(2)) // branch B reads the rewritten x
	wrong := values(memlab.Must(x.Add(b)))
	tab := memlab.NewTable("x", "relu(x) + 2x", "x.relu_(); x + 2x", "")
	bad := 0
	for i := range data {
		mark := ""
		if right[i] != wrong[i] {
			mark, bad = "← wrong", bad+1
		}
		tab.Row(data[i], right[i], wrong[i], mark)
	}
	tab.Show()
	memlab.Measured("%d of %d results wrong and no error; x._version went %d → %d", bad, len(data), before, x.Version())
	memlab.Check(tensor.ReleaseAll(b, x))
}

/*md
Only the version counter (`x._version`, here `x.Version()`) saw it: in-place writes are
counted, not forbidden.

**Try it:** make every input positive — the in-place version is then right by luck, which
is why such bugs survive tests.

### Hazard: autograd's saved tensors

Autograd *does* check the counter of the tensors it saved for backward. `exp` saves its
output; changing that output in place makes backward fail with PyTorch's error.
*/

//nb:cell
func savedTensorError() {
	l := memlab.MustOpen()
	defer l.Close()
	for _, inPlace := range []bool{true, false} {
		tape := tensor.NewTape()
		x := memlab.Must(tensor.Randn(l, 3, tensor.Float32, 256, 256))
		memlab.Check(tape.Watch(x))
		y := memlab.Must(x.Exp()) // exp saves its output y for backward
		var z *tensor.Tensor
		if inPlace {
			memlab.Check(y.Scale_(2)) // y.mul_(2)
		} else {
			z = memlab.Must(y.Scale(2)) // z = y * 2
		}
		fmt.Printf("in place %v: tape %v, saved %s; backward: ", inPlace, tape.Nodes(), memlab.FormatBytes(tape.SavedBytes()))
		if err := tape.Backward(); err != nil {
			fmt.Println(err)
		} else {
			fmt.Println("ok")
		}
		memlab.Check(tensor.ReleaseLive(z, y, x))
		memlab.Check(tape.Release())
	}
}

/*md
The out-of-place `z = y * 2` keeps `y` intact and backward succeeds. In inference there is
no tape, which is why 4.4 can use in-place operations freely.

**Try it:** make `x` 1024 × 1024: the tape's saved bytes grow to 4 MiB — saved tensors are
memory that stays allocated until backward (or until the tape is released).
*/
