package tensor

import (
	"errors"
	"fmt"
	"sync"
)

// Tape is a minimal stand-in for autograd's graph, enough to show what saved
// tensors do to memory. Operations on tensors watched by a tape record a node,
// named as PyTorch names the grad_fn ("ReluBackward0"), and save the tensors the
// backward formula needs, as PyTorch does: relu, exp and softmax save their
// output; mul, div and matmul both inputs; gelu its input. An in-place mul_,
// div_ or gelu_ first copies the value it overwrites, since backward needs it:
// on a tape, those in-place ops cost an allocation. Results are watched too,
// and so are views of watched tensors.
//
// A saved tensor is a new handle to its storage, so saved activations stay
// allocated after the program releases its own handles, until Backward or
// Release frees them. Each save remembers the storage's version; an in-place
// operation on a saved tensor bumps it, and Backward (or CheckSaved) then
// fails with PyTorch's error. The tape computes no gradients.
//
// A Tape is safe for concurrent use.
type Tape struct {
	mu       sync.Mutex
	nodes    []*tapeNode
	freed    bool // Backward ran: saved tensors are gone
	released bool
}

type tapeNode struct {
	name  string
	saved []savedTensor
}

type savedTensor struct {
	t        *Tensor // the tape's own handle
	version  int64   // the storage version when saved
	gradFn   string  // the saved tensor's producer, "" for a leaf
	outputNr int
}

// gradInfo is a tensor's autograd metadata.
type gradInfo struct {
	tape       *Tape
	fn         string // producer node name; "" for a watched leaf
	viewOfLeaf bool   // a view of a watched leaf: not writable in place
}

// NewTape returns an empty tape.
func NewTape() *Tape { return &Tape{} }

// Watch makes t a leaf that requires gradient on this tape (PyTorch's
// requires_grad_()): operations on it, and on what is computed from it, are
// recorded. A tensor is watched by one tape at most.
func (tp *Tape) Watch(t *Tensor) error {
	if err := t.live("watch"); err != nil {
		return err
	}
	if t.grad.tape != nil && t.grad.tape != tp {
		return fmt.Errorf("tensor: watch: %s is already watched by another tape", t.describe())
	}
	t.grad = gradInfo{tape: tp}
	return nil
}

// GradFn returns the name of the recorded operation that produced t, as
// PyTorch's t.grad_fn, or "" for a tensor that no tape recorded.
func (t *Tensor) GradFn() string { return t.grad.fn }

// RequiresGrad reports whether t is watched by a tape, directly or as the
// result of an operation on watched tensors.
func (t *Tensor) RequiresGrad() bool { return t.grad.tape != nil }

// tapeOf returns the tape of the first watched input, or nil.
func tapeOf(inputs ...*Tensor) *Tape {
	for _, in := range inputs {
		if in != nil && in.grad.tape != nil {
			return in.grad.tape
		}
	}
	return nil
}

// record adds a node named name to the tape of the first watched input, saving
// the given tensors; it does nothing when no input is watched or the tape is
// released. Saving takes a reference to each saved tensor's storage.
func record(name string, inputs []*Tensor, save ...*Tensor) error {
	tp := tapeOf(inputs...)
	if tp == nil {
		return nil
	}
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if tp.released {
		return nil
	}
	n := &tapeNode{name: name}
	for _, s := range save {
		if s == nil {
			continue
		}
		if err := s.storage.retain(); err != nil {
			n.release()
			return fmt.Errorf("tensor: %s: saving for backward: %w", name, err)
		}
		h := &Tensor{storage: s.storage, layout: s.layout.clone(), dtype: s.dtype}
		h.state = watchLeak(h)
		n.saved = append(n.saved, savedTensor{t: h, version: s.storage.Version(), gradFn: s.grad.fn})
	}
	tp.nodes = append(tp.nodes, n)
	tp.freed = false
	return nil
}

func (tp *Tape) isReleased() bool {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return tp.released
}

func (n *tapeNode) release() error {
	var errs []error
	for _, s := range n.saved {
		if err := s.t.Release(); err != nil {
			errs = append(errs, err)
		}
	}
	n.saved = nil
	return errors.Join(errs...)
}

// CheckSaved checks, newest node first as a backward pass would unpack them,
// that no saved tensor was modified in place since it was saved. The error is
// PyTorch's.
func (tp *Tape) CheckSaved() error {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return tp.check()
}

// PyTorch's messages for a saved tensor modified in place, word for word:
// one saved as an operation's output, and one saved as it is (a leaf or an
// input).
const (
	modifiedOutput = "one of the variables needed for gradient computation has been modified by an inplace operation: [%s %v], which is output %d of %s, is at version %d; expected version %d instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True)."
	modifiedLeaf   = "one of the variables needed for gradient computation has been modified by an inplace operation: [%s %v] is at version %d; expected version %d instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True)."
)

func (tp *Tape) check() error {
	if tp.freed {
		return torchErr("backward", "Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.")
	}
	for i := len(tp.nodes) - 1; i >= 0; i-- {
		for _, s := range tp.nodes[i].saved {
			if v := s.t.storage.Version(); v != s.version {
				if s.gradFn != "" {
					return torchErr("backward", modifiedOutput, torchTypeName(s.t.dtype), s.t.layout.Shape, s.outputNr, s.gradFn, v, s.version)
				}
				return torchErr("backward", modifiedLeaf, torchTypeName(s.t.dtype), s.t.layout.Shape, v, s.version)
			}
		}
	}
	return nil
}

// Backward does what a backward pass does to memory: it unpacks every saved
// tensor (checking versions, as CheckSaved) and then frees them all, as PyTorch
// does without retain_graph. A second Backward fails with PyTorch's error. On a
// version error nothing is freed.
func (tp *Tape) Backward() error {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if err := tp.check(); err != nil {
		return err
	}
	err := tp.releaseSaved()
	tp.freed = true
	return err
}

func (tp *Tape) releaseSaved() error {
	var errs []error
	for _, n := range tp.nodes {
		errs = append(errs, n.release())
	}
	return errors.Join(errs...)
}

// Release frees every saved tensor and stops recording: operations on watched
// tensors still run but record nothing. Further calls do nothing.
func (tp *Tape) Release() error {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if tp.released {
		return nil
	}
	tp.released = true
	err := tp.releaseSaved()
	tp.nodes = nil
	return err
}

// SavedTensor describes one tensor a tape holds for backward.
type SavedTensor struct {
	Node    string // the node that saved it, such as "ReluBackward0"
	Shape   Shape
	DType   DType
	Nbytes  int64 // the bytes of its storage
	Version int64 // the storage's version when saved
}

// Saved lists the tensors the tape holds, oldest first.
func (tp *Tape) Saved() []SavedTensor {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	var out []SavedTensor
	for _, n := range tp.nodes {
		for _, s := range n.saved {
			out = append(out, SavedTensor{Node: n.name, Shape: s.t.layout.Shape.Clone(), DType: s.t.dtype, Nbytes: s.t.storage.nbytes, Version: s.version})
		}
	}
	return out
}

// SavedBytes returns the bytes of device memory the saved tensors keep alive,
// counting each storage once.
func (tp *Tape) SavedBytes() int64 {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	seen := map[*Storage]bool{}
	var total int64
	for _, n := range tp.nodes {
		for _, s := range n.saved {
			if !seen[s.t.storage] {
				seen[s.t.storage] = true
				total += s.t.storage.nbytes
			}
		}
	}
	return total
}

// Nodes returns the names of the recorded operations, oldest first.
func (tp *Tape) Nodes() []string {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	names := make([]string, len(tp.nodes))
	for i, n := range tp.nodes {
		names[i] = n.name
	}
	return names
}

// scalarTypeNames are PyTorch's C++ names of the dtypes (c10::ScalarType).
var scalarTypeNames = map[DType]string{Float32: "Float", Float16: "Half", BFloat16: "BFloat16", Int32: "Int", Int64: "Long", Uint8: "Byte", Bool: "Bool"}

// torchTypeName is PyTorch's legacy type name of a CUDA tensor of dtype d,
// such as "torch.cuda.FloatTensor", as autograd's and most argument checks'
// messages print it, and Tensor::toString too (expand's message: PyTorch
// 2.11 on the H200 prints "expand(torch.cuda.ByteTensor{[4]}, size=[]): …",
// reference/fidelity-2.11/layouts.jsonl.gz); memlab's devices all stand for
// CUDA GPUs.
func torchTypeName(d DType) string { return "torch.cuda." + scalarTypeNames[d] + "Tensor" }
