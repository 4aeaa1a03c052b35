package tensor_test

import (
	"slices"
	"testing"

	"memlab.dev/memlab/tensor"
)

const hint = " Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True)."

func TestTapeCatchesInPlaceChangesToSavedTensors(t *testing.T) {
	dev := newTestDevice()
	cases := []struct {
		name  string
		build func(t *testing.T, x *tensor.Tensor) // x is a watched [2, 3] leaf
		nodes []string
		want  string // PyTorch's message; "" when backward succeeds
	}{
		{
			name: "relu saves its output; add_ on it",
			build: func(t *testing.T, x *tensor.Tensor) {
				y := keep(t)(x.Relu())
				if err := y.Add_(keep(t)(tensor.Ones(dev, tensor.Float32, 3))); err != nil {
					t.Fatal(err)
				}
			},
			nodes: []string{"ReluBackward0", "AddBackward0"},
			want:  "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.cuda.FloatTensor [2, 3]], which is output 0 of ReluBackward0, is at version 1; expected version 0 instead." + hint,
		},
		{
			name: "exp saves its output; relu_ on it",
			build: func(t *testing.T, x *tensor.Tensor) {
				y := keep(t)(x.Exp())
				if err := y.Relu_(); err != nil {
					t.Fatal(err)
				}
			},
			nodes: []string{"ExpBackward0", "ReluBackward0"},
			want:  "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.cuda.FloatTensor [2, 3]], which is output 0 of ExpBackward0, is at version 1; expected version 0 instead." + hint,
		},
		{
			name: "mul saves its inputs; the unwatched one changes through a view",
			build: func(t *testing.T, x *tensor.Tensor) {
				w := keep(t)(tensor.Full(dev, tensor.Float32, 2, 2, 3))
				keep(t)(x.Mul(w))
				row := keep(t)(w.Select(0, 1))
				if err := row.Neg_(); err != nil {
					t.Fatal(err)
				}
			},
			nodes: []string{"MulBackward0"},
			want:  "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.cuda.FloatTensor [2, 3]] is at version 1; expected version 0 instead." + hint,
		},
		{
			name: "relu_ in place of relu is fine: it saves the result after the write",
			build: func(t *testing.T, x *tensor.Tensor) {
				y := keep(t)(x.Scale(2))
				if err := y.Relu_(); err != nil {
					t.Fatal(err)
				}
			},
			nodes: []string{"MulBackward1", "ReluBackward0"},
		},
		{
			name: "add saves nothing, so an in-place change after it is fine",
			build: func(t *testing.T, x *tensor.Tensor) {
				y := keep(t)(x.Add(x))
				if err := y.Exp_(); err != nil {
					t.Fatal(err)
				}
			},
			nodes: []string{"AddBackward0", "ExpBackward0"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tape := tensor.NewTape()
			defer tape.Release()
			x := keep(t)(tensor.FromFloat32(dev, []float32{-1, 2, -3, 4, -5, 6}, 2, 3))
			if err := tape.Watch(x); err != nil {
				t.Fatal(err)
			}
			c.build(t, x)
			if got := tape.Nodes(); !slices.Equal(got, c.nodes) {
				t.Fatalf("nodes %v, want %v", got, c.nodes)
			}
			err := tape.Backward()
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if torchMsg(err) != c.want {
				t.Fatalf("got\n%v\nwant\n%s", err, c.want)
			}
		})
	}
}

func TestSavedTensorsKeepMemoryAlive(t *testing.T) {
	dev := newTestDevice()
	tape := tensor.NewTape()
	x := keep(t)(tensor.Ones(dev, tensor.Float32, 256, 256)) // 256 KiB
	if err := tape.Watch(x); err != nil {
		t.Fatal(err)
	}
	h, err := x.Exp() // saves its output
	if err != nil {
		t.Fatal(err)
	}
	if h.GradFn() != "ExpBackward0" || !h.RequiresGrad() {
		t.Fatalf("grad_fn %q requires_grad %v", h.GradFn(), h.RequiresGrad())
	}
	v := keep(t)(h.View(-1))
	if v.GradFn() != "ViewBackward0" {
		t.Fatalf("view grad_fn %q", v.GradFn())
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	if err := v.Release(); err != nil {
		t.Fatal(err)
	}
	if got := dev.allocated(); got != 2*256<<10 {
		t.Fatalf("%d bytes allocated after releasing h: the tape must keep its 256 KiB alive", got)
	}
	if got := tape.SavedBytes(); got != 256<<10 {
		t.Fatalf("SavedBytes %d", got)
	}
	if s := tape.Saved(); len(s) != 1 || s[0].Node != "ExpBackward0" || !s[0].Shape.Equal([]int{256, 256}) {
		t.Fatalf("Saved %+v", s)
	}
	if err := tape.Backward(); err != nil {
		t.Fatal(err)
	}
	if got := dev.allocated(); got != 256<<10 {
		t.Fatalf("%d bytes allocated after backward freed the saved tensors", got)
	}
	want := "Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward."
	if err := tape.Backward(); torchMsg(err) != want {
		t.Fatalf("second backward: %v", err)
	}
	if err := tape.Release(); err != nil {
		t.Fatal(err)
	}
}

func TestTapeReleaseFreesSavedTensorsAndStopsRecording(t *testing.T) {
	dev := newTestDevice()
	tape := tensor.NewTape()
	x := keep(t)(tensor.Ones(dev, tensor.Float32, 4))
	if err := tape.Watch(x); err != nil {
		t.Fatal(err)
	}
	y, err := x.Relu()
	if err != nil {
		t.Fatal(err)
	}
	_ = y.Release()
	if dev.live() != 2 {
		t.Fatalf("%d live allocations, want x and the saved relu output", dev.live())
	}
	if err := tape.Release(); err != nil {
		t.Fatal(err)
	}
	if dev.live() != 1 {
		t.Fatalf("%d live allocations after tape.Release", dev.live())
	}
	z := keep(t)(x.Exp())
	if len(tape.Nodes()) != 0 || dev.live() != 2 {
		t.Fatalf("a released tape recorded %v", tape.Nodes())
	}
	_ = z
	u := keep(t)(tensor.Ones(dev, tensor.Float32, 4))
	keep(t)(u.Exp())
	if u.RequiresGrad() {
		t.Fatal("an unwatched tensor requires grad")
	}
	other := tensor.NewTape()
	if err := other.Watch(x); err == nil {
		t.Fatal("watched by two tapes")
	}
}

func TestWatchedTensorsPrintLikePyTorch(t *testing.T) {
	dev := newTestDevice()
	tape := tensor.NewTape()
	defer tape.Release()
	x := keep(t)(tensor.FromFloat32(dev, []float32{-1, 2}))
	if err := tape.Watch(x); err != nil {
		t.Fatal(err)
	}
	y := keep(t)(x.Relu())
	v := keep(t)(x.View(2, 1))
	cases := []struct {
		name string
		t    *tensor.Tensor
		want string
	}{
		{"leaf", x, "tensor([-1.,  2.], device='cuda:0', requires_grad=True)"},
		{"relu", y, "tensor([0., 2.], device='cuda:0', grad_fn=<ReluBackward0>)"},
		{"view", v, "tensor([[-1.],\n        [ 2.]], device='cuda:0', grad_fn=<ViewBackward0>)"},
	}
	for _, c := range cases {
		if got := c.t.String(); got != c.want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
	if err := v.Neg_(); torchMsg(err) != "a view of a leaf Variable that requires grad is being used in an in-place operation." {
		t.Fatalf("neg_ on a view of a watched leaf: %v", err)
	}
	c := keep(t)(x.Contiguous())
	if c.GradFn() != "" || !c.RequiresGrad() {
		t.Fatalf("contiguous() of a leaf: grad_fn %q", c.GradFn())
	}
}

func TestCheckSavedKeepsTheSavedTensors(t *testing.T) {
	dev := newTestDevice()
	tape := tensor.NewTape()
	defer tape.Release()
	x := keep(t)(tensor.Ones(dev, tensor.Float32, 3))
	if err := tape.Watch(x); err != nil {
		t.Fatal(err)
	}
	y := keep(t)(x.Exp())
	for range 2 {
		if err := tape.CheckSaved(); err != nil {
			t.Fatal(err)
		}
	}
	if tape.SavedBytes() != 12 {
		t.Fatalf("CheckSaved freed the saved tensors: %d bytes left", tape.SavedBytes())
	}
	if err := y.Neg_(); err != nil {
		t.Fatal(err)
	}
	if err := tape.CheckSaved(); err == nil {
		t.Fatal("CheckSaved missed an in-place change")
	}
	if err := tape.Backward(); err == nil || tape.SavedBytes() != 12 {
		t.Fatalf("a failed backward must keep the saved tensors: %v, %d bytes", err, tape.SavedBytes())
	}
}

// mul_ on a tensor a tape records must keep the old value for backward: like
// PyTorch, memlab copies it first, so the in-place op costs a full allocation.
func TestInPlaceMulOnATapeCopiesTheOldValue(t *testing.T) {
	dev := newTestDevice()
	tape := tensor.NewTape()
	defer tape.Release()
	x := keep(t)(tensor.Ones(dev, tensor.Float32, 256))
	if err := tape.Watch(x); err != nil {
		t.Fatal(err)
	}
	y := keep(t)(x.Scale(3)) // MulBackward1 saves nothing
	w := keep(t)(tensor.Full(dev, tensor.Float32, 2, 256))
	allocs := dev.allocs()
	if err := y.Mul_(w); err != nil {
		t.Fatal(err)
	}
	if dev.allocs() != allocs+1 {
		t.Fatalf("%d allocations, want the copy of y's old value", dev.allocs()-allocs)
	}
	saved := tape.Saved()
	if len(saved) != 2 || saved[0].Node != "MulBackward0" || tape.SavedBytes() != 2*1024 {
		t.Fatalf("saved %+v (%d bytes), want y's old value and w", saved, tape.SavedBytes())
	}
	if v := values(t, y); v[0] != 6 || v[255] != 6 {
		t.Fatalf("y = %v…, want 6", v[0])
	}
	if err := tape.Backward(); err != nil {
		t.Fatalf("the old value was saved, so backward is fine: %v", err)
	}
	// Without a tape, mul_ allocates nothing.
	u := keep(t)(tensor.Ones(dev, tensor.Float32, 256))
	allocs = dev.allocs()
	if err := u.Mul_(w); err != nil || dev.allocs() != allocs {
		t.Fatalf("untracked mul_: %v, %d allocations", err, dev.allocs()-allocs)
	}
}
