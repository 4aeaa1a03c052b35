package tensor

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
)

// Go's garbage collector cannot see device memory: a tensor that becomes
// unreachable without Release keeps its storage allocated for ever. memlab does
// not free it behind the program's back (bindings that did leaked or crashed);
// it only reports the leak, once per tensor, when the collector notices it.

var leakOut = struct {
	sync.Mutex
	w io.Writer
}{w: os.Stderr}

var leakStacks atomic.Bool

// SetLeakWriter sets where leak reports go (os.Stderr by default; nil silences
// them) and returns the previous writer.
func SetLeakWriter(w io.Writer) io.Writer {
	leakOut.Lock()
	defer leakOut.Unlock()
	prev := leakOut.w
	leakOut.w = w
	return prev
}

// RecordCreationStacks makes tensors created from now on remember the stack
// that created them, so that a leak report says where the tensor came from. It
// costs a stack capture per tensor; off by default.
func RecordCreationStacks(on bool) { leakStacks.Store(on) }

// handleState is what the leak report needs; it must not point to the Tensor.
type handleState struct {
	released atomic.Bool
	dtype    DType
	shape    Shape // shared with the tensor's layout, which is never modified
	dev      Device
	stack    []byte
}

func watchLeak(t *Tensor) *handleState {
	st := &handleState{dtype: t.dtype, shape: t.layout.Shape, dev: t.storage.dev}
	if leakStacks.Load() {
		buf := make([]byte, 8<<10)
		st.stack = buf[:runtime.Stack(buf, false)]
	}
	runtime.AddCleanup(t, reportLeak, st)
	return st
}

func reportLeak(st *handleState) {
	if st.released.Load() {
		return
	}
	leakOut.Lock()
	defer leakOut.Unlock()
	if leakOut.w == nil {
		return
	}
	fmt.Fprintf(leakOut.w, "memlab: leaked tensor %v %v (%d bytes) on %v: collected by Go without Release; its device memory stays allocated\n",
		st.dtype, st.shape, int64(st.shape.Numel())*int64(st.dtype.Size()), st.dev)
	if len(st.stack) > 0 {
		fmt.Fprintf(leakOut.w, "created at:\n%s\n", st.stack)
	}
}
