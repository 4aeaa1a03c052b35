package version

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

// msg picks a failure message in the learner's language (MEMLAB_LANG).
var msg = exercisetest.Msg

// scenario is a list of ops and what they should lead to. An op makes a tensor
// ("new x", "view x y", "detach x y", "data x y", "clone x y"), changes one in
// place ("inplace y") or saves one ("save x").
type scenario struct {
	name     string
	ops      []string
	versions map[string]uint64 // expected Version() of each named tensor at the end
	stale    []string          // saved tensors whose Unpack must fail at the end
	why      string
}

func play(t *testing.T, sc scenario) (tensors map[string]*Tensor, saved map[string]Saved, ok bool) {
	t.Helper()
	tensors, saved = map[string]*Tensor{}, map[string]Saved{}
	for _, op := range sc.ops {
		f := strings.Fields(op)
		var call string
		var do func()
		switch f[0] {
		case "new":
			call, do = fmt.Sprintf("NewTensor(%q)", f[1]), func() { tensors[f[1]] = NewTensor(f[1]) }
		case "view":
			call, do = fmt.Sprintf("%s.View(%q)", f[1], f[2]), func() { tensors[f[2]] = tensors[f[1]].View(f[2]) }
		case "detach":
			call, do = fmt.Sprintf("%s.Detach(%q)", f[1], f[2]), func() { tensors[f[2]] = tensors[f[1]].Detach(f[2]) }
		case "data":
			call, do = fmt.Sprintf("%s.Data(%q)", f[1], f[2]), func() { tensors[f[2]] = tensors[f[1]].Data(f[2]) }
		case "clone":
			call, do = fmt.Sprintf("%s.Clone(%q)", f[1], f[2]), func() { tensors[f[2]] = tensors[f[1]].Clone(f[2]) }
		case "inplace":
			call, do = fmt.Sprintf("%s.InPlace()", f[1]), func() { tensors[f[1]].InPlace() }
		case "save":
			call, do = fmt.Sprintf("Save(%s)", f[1]), func() { saved[f[1]] = Save(tensors[f[1]]) }
		default:
			t.Fatalf("bad op %q", op)
		}
		if !exercisetest.Call(t, call, do) {
			return nil, nil, false
		}
	}
	return tensors, saved, true
}

func TestA_SharedCounters(t *testing.T) {
	tests := []scenario{
		{name: "fresh tensor", ops: []string{"new x"}, versions: map[string]uint64{"x": 0}, why: msg("a new tensor starts at version 0", "新张量从版本 0 开始")},
		{name: "in-place ops count", ops: []string{"new x", "inplace x", "inplace x"}, versions: map[string]uint64{"x": 2}, why: msg("x.add_(1); x.mul_(2): two in-place operations", "x.add_(1); x.mul_(2)：两次原地操作")},
		{name: "a view shares the counter", ops: []string{"new x", "view x y", "inplace y"}, versions: map[string]uint64{"x": 1, "y": 1}, why: msg("y = x[0]; y.add_(1) changes x's memory, so x's version moves too", "y = x[0]; y.add_(1) 改动了 x 的内存，所以 x 的版本也变了")},
		{name: "making a view is not a change", ops: []string{"new x", "inplace x", "view x y"}, versions: map[string]uint64{"x": 1, "y": 1}, why: msg("a view starts at its base's current version and does not bump it", "视图从它的基张量当前的版本开始，并不让它加一")},
		{name: "view of a view", ops: []string{"new x", "view x y", "view y z", "inplace z", "inplace x"}, versions: map[string]uint64{"x": 2, "y": 2, "z": 2}, why: msg("all views of one storage share one counter", "同一存储的所有视图共享一个计数器")},
		{name: "detach shares", ops: []string{"new x", "detach x d", "inplace d"}, versions: map[string]uint64{"x": 1, "d": 1}, why: msg("x.detach() shares the version counter in PyTorch", "在 PyTorch 里 x.detach() 共享版本计数器")},
		{name: ".data does not share", ops: []string{"new x", "inplace x", "data x d", "inplace d"}, versions: map[string]uint64{"x": 1, "d": 1}, why: msg("x.data gets a new counter at 0; its in-place change (now 1) is not seen by x (still 1)", "x.data 得到一个从 0 开始的新计数器；通过它做的原地修改（现在是 1）x 看不到（仍是 1）")},
		{name: "clone does not share", ops: []string{"new x", "inplace x", "clone x c", "inplace c", "inplace c"}, versions: map[string]uint64{"x": 1, "c": 2}, why: msg("a clone has its own memory and its own counter starting at 0", "克隆有自己的内存和自己从 0 开始的计数器")},
	}
	for _, sc := range tests {
		t.Run(sc.name, func(t *testing.T) {
			tensors, _, ok := play(t, sc)
			if !ok {
				return
			}
			for name, want := range sc.versions {
				var got uint64
				if !exercisetest.Call(t, name+".Version()", func() { got = tensors[name].Version() }) {
					return
				}
				if got != want {
					t.Errorf(msg("after %v: %s.Version() = %d, want %d — %s", "%v 之后：%s.Version() = %d，期望 %d——%s"), sc.ops, name, got, want, sc.why)
				}
			}
		})
	}
}

func TestB_SaveAndUnpack(t *testing.T) {
	tests := []scenario{
		{name: "untouched", ops: []string{"new x", "save x"}, why: msg("nothing changed: backward can use x", "什么都没改：反向传播可以用 x")},
		{name: "changed after save", ops: []string{"new x", "save x", "inplace x"}, stale: []string{"x"}, why: msg("x.add_(1) after saving x: backward would compute with wrong values", "保存 x 之后又 x.add_(1)：反向传播会用错误的值计算")},
		{name: "changed before save", ops: []string{"new x", "inplace x", "inplace x", "save x"}, why: msg("changes before saving are fine: the saved version is 2", "保存之前的修改没问题：保存的版本是 2")},
		{name: "changed through a view", ops: []string{"new x", "save x", "view x y", "inplace y"}, stale: []string{"x"}, why: msg("y = x[1:]; y.zero_() changes x's memory", "y = x[1:]; y.zero_() 改动了 x 的内存")},
		{name: "saved view, base changed", ops: []string{"new x", "view x y", "save y", "inplace x"}, stale: []string{"y"}, why: msg("the base shares the view's counter", "基张量和视图共享计数器")},
		{name: "changed through detach", ops: []string{"new x", "save x", "detach x d", "inplace d"}, stale: []string{"x"}, why: msg("x.detach().add_(1) is caught: detach shares the counter", "x.detach().add_(1) 会被发现：detach 共享计数器")},
		{name: "changed through .data", ops: []string{"new x", "save x", "data x d", "inplace d"}, why: msg("x.data.add_(1) is NOT caught: .data has its own counter — the silent wrong-gradient trap", "x.data.add_(1) 不会被发现：.data 有自己的计数器——这就是悄无声息算错梯度的陷阱")},
		{name: "clone changed", ops: []string{"new x", "save x", "clone x c", "inplace c"}, why: msg("the clone is separate memory; x is intact", "克隆是另一块内存；x 完好无损")},
		{name: "one of two saved", ops: []string{"new a", "new b", "save a", "save b", "inplace b"}, stale: []string{"b"}, why: msg("only b changed", "只有 b 变了")},
	}
	for _, sc := range tests {
		t.Run(sc.name, func(t *testing.T) {
			tensors, saved, ok := play(t, sc)
			if !ok {
				return
			}
			for name, s := range saved {
				var got *Tensor
				var err error
				if !exercisetest.Call(t, fmt.Sprintf("saved %s.Unpack()", name), func() { got, err = s.Unpack() }) {
					return
				}
				wantStale := false
				for _, n := range sc.stale {
					wantStale = wantStale || n == name
				}
				if !wantStale {
					if err != nil || got != tensors[name] {
						t.Errorf(msg("after %v: saved %s.Unpack() = %v, %v; want the tensor and no error — %s", "%v 之后：保存的 %s.Unpack() = %v、%v；期望得到张量且没有错误——%s"), sc.ops, name, got, err, sc.why)
					}
					continue
				}
				if !errors.Is(err, ErrModifiedInPlace) {
					t.Errorf(msg("after %v: saved %s.Unpack(): want an error wrapping ErrModifiedInPlace, got %v — %s", "%v 之后：保存的 %s.Unpack()：期望一个包装了 ErrModifiedInPlace 的错误，得到 %v——%s"), sc.ops, name, err, sc.why)
					continue
				}
				now := tensors[name].Version()
				for _, part := range []string{"[" + name + "]", fmt.Sprintf("version %d", now), fmt.Sprintf("expected version %d", now-1)} {
					if !strings.Contains(err.Error(), part) {
						t.Errorf(msg("saved %s.Unpack() error %q should contain %q — name the tensor and both versions, as PyTorch does", "保存的 %s.Unpack() 的错误 %q 应包含 %q——像 PyTorch 那样写明张量和两个版本"), name, err, part)
					}
				}
			}
		})
	}
	t.Run("zero Saved", func(t *testing.T) {
		var err error
		if !exercisetest.Call(t, "Saved{}.Unpack()", func() { _, err = Saved{}.Unpack() }) {
			return
		}
		if err == nil {
			t.Error(msg("Saved{}.Unpack(): want an error — nothing was saved", "Saved{}.Unpack()：期望一个错误——什么都没保存"))
		}
	})
}

func TestC_ConcurrentInPlace(t *testing.T) {
	const workers, each = 8, 1000
	var x *Tensor
	views := make([]*Tensor, workers)
	ok := exercisetest.Call(t, "NewTensor, View, InPlace", func() {
		x = NewTensor("x")
		for i := range views {
			views[i] = x.View(fmt.Sprintf("v%d", i))
		}
		x.InPlace()
	})
	if !ok {
		return
	}
	var wg sync.WaitGroup
	for _, v := range views {
		wg.Add(1)
		go func(v *Tensor) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				v.InPlace()
			}
		}(v)
	}
	wg.Wait()
	if got, want := x.Version(), uint64(workers*each+1); got != want {
		t.Errorf(msg("%d goroutines × %d in-place ops on views of x (after 1 on x): x.Version() = %d, want %d — increments were lost; use sync/atomic", "%d 个 goroutine × 每个 %d 次对 x 的视图的原地操作（之前对 x 做了 1 次）：x.Version() = %d，期望 %d——丢失了计数；请用 sync/atomic"), workers, each, got, want)
	}
}
