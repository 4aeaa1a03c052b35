package tensor

import (
	"errors"
	"fmt"
)

// This file is the contract between tensors and the devices that run their kernels.
// tensor defines it; kernels/cpu (the reference used by the simulated device) and the
// CUDA backends implement it. Nothing here allocates: outputs are always given.

// Ptr is a device address. On a CUDA device it is a CUdeviceptr; on the simulated
// device it is an address in the simulated address space. 0 is never a valid address.
type Ptr uint64

// MaxRank is the largest number of dimensions a kernel accepts.
const MaxRank = 8

// Strided describes the elements one kernel argument reads or writes: element
// (i0, i1, …) lives at byte address Base + (Offset + Σ ik·Strides[k]) · DType.Size().
// Offset and Strides are in elements, as in PyTorch. A stride of 0 broadcasts.
type Strided struct {
	Base    Ptr
	DType   DType
	Shape   []int
	Strides []int
	Offset  int
}

// maxTerm bounds every shape, stride and offset term Extent accepts, so that
// sums of up to MaxRank+1 of them (index arithmetic in the kernels, 64-bit)
// cannot overflow.
const maxTerm = 1 << 56

// Extent is where the elements of a Strided lie in device memory.
type Extent struct {
	N      int    // number of elements
	MinOff int    // offset, in elements, of the lowest element reached
	Lo, Hi uint64 // the bytes [Lo, Hi) spanned by the elements
	Start  uint64 // byte address of logical element 0
}

// Extent validates s as a kernel argument and returns where its elements lie.
// It checks the dtype, the rank (at most MaxRank), one stride per dimension,
// sizes, strides and offset small enough that index arithmetic cannot
// overflow, and, when s has elements, that none lies before Base and Base is
// not 0. With no elements only N (0) is set. The errors say what is wrong;
// the kernel adds its own name and the argument's.
func (s Strided) Extent() (Extent, error) {
	var e Extent
	if !s.DType.Valid() {
		return e, fmt.Errorf("invalid dtype %v", s.DType)
	}
	if len(s.Shape) > MaxRank {
		return e, fmt.Errorf("rank %d exceeds the maximum rank %d", len(s.Shape), MaxRank)
	}
	if len(s.Strides) != len(s.Shape) {
		return e, fmt.Errorf("%d strides for %d dimensions (shape %v, strides %v)", len(s.Strides), len(s.Shape), s.Shape, s.Strides)
	}
	if s.Offset < 0 || s.Offset > maxTerm {
		return e, fmt.Errorf("offset %d out of range", s.Offset)
	}
	e.N = 1
	for d, n := range s.Shape {
		if n < 0 || n > maxTerm {
			return e, fmt.Errorf("dimension %d has invalid size %d (shape %v)", d, n, s.Shape)
		}
		// A dimension of one element never moves along its stride, whatever
		// it is (a slice whose step exceeds the size leaves a huge one).
		if st := s.Strides[d]; n > 1 && (st > maxTerm || st < -maxTerm) {
			return e, fmt.Errorf("dimension %d has invalid stride %d", d, st)
		}
		if n != 0 && e.N > maxTerm/n {
			return e, fmt.Errorf("shape %v has too many elements", s.Shape)
		}
		e.N *= n
	}
	if e.N == 0 {
		return e, nil
	}
	minOff, maxOff := s.Offset, s.Offset
	for d, n := range s.Shape {
		st := s.Strides[d]
		if st != 0 && n > 1 && n-1 > maxTerm/max(st, -st) {
			return e, fmt.Errorf("dimension %d spans too far (size %d, stride %d)", d, n, st)
		}
		if t := (n - 1) * st; t < 0 {
			minOff += t
		} else {
			maxOff += t
		}
	}
	if minOff < 0 {
		return e, fmt.Errorf("strides %v with offset %d reach element %d before the base address", s.Strides, s.Offset, minOff)
	}
	if s.Base == 0 {
		return e, errors.New("null base address")
	}
	size := uint64(s.DType.Size())
	e.MinOff = minOff
	e.Lo = uint64(s.Base) + uint64(minOff)*size
	e.Hi = uint64(s.Base) + uint64(maxOff+1)*size
	e.Start = uint64(s.Base) + uint64(s.Offset)*size
	if e.Lo < uint64(s.Base) || e.Hi <= e.Lo {
		return e, fmt.Errorf("address range overflows (base %#x, offset %d)", uint64(s.Base), minOff)
	}
	return e, nil
}

// UnaryOp names an elementwise operation of one input.
type UnaryOp uint8

// Elementwise operations of one input. Scale multiplies by the alpha argument.
const (
	Relu UnaryOp = iota
	Gelu         // tanh approximation, as torch.nn.functional.gelu(approximate="tanh")
	Exp
	Neg
	Scale
)

// BinaryOp names an elementwise operation of two inputs.
type BinaryOp uint8

// Elementwise operations of two inputs.
const (
	Add BinaryOp = iota
	Sub
	Mul
	Div
)

// ReduceOp names a reduction along one dimension.
type ReduceOp uint8

// Reductions along one dimension.
const (
	Sum ReduceOp = iota
	Max
)

// Kernels runs computations on the memory of one device. Every method validates
// its arguments (rank, dtypes, shapes, addresses inside live memory) and returns an
// error rather than corrupting memory. Shapes of inputs to elementwise operations
// are already broadcast: a broadcast input has stride 0 in the expanded dimensions.
// dst may alias an input exactly (in-place operation) but must not partially overlap it.
type Kernels interface {
	// CopyFromHost writes len(src) bytes to device address dst.
	CopyFromHost(dst Ptr, src []byte) error
	// CopyToHost reads len(dst) bytes from device address src.
	CopyToHost(dst []byte, src Ptr) error
	// Fill sets every element of dst to v (converted to dst's dtype).
	Fill(dst Strided, v float64) error
	// Random fills dst with uniform [lo, hi) values (normal=false) or normal values of
	// mean lo and standard deviation hi (normal=true), from a counter-based generator
	// seeded by seed, so that every backend produces the same numbers.
	Random(dst Strided, seed uint64, normal bool, lo, hi float64) error
	// Copy copies src to dst elementwise (same shape; any layouts; dtype conversion allowed).
	Copy(dst, src Strided) error
	// Unary computes dst = op(src); alpha is Scale's factor and ignored otherwise.
	Unary(op UnaryOp, dst, src Strided, alpha float64) error
	// Binary computes dst = a op b (same shapes after broadcasting).
	Binary(op BinaryOp, dst, a, b Strided) error
	// Reduce reduces src along dim into dst, whose shape equals src's with Shape[dim] = 1.
	Reduce(op ReduceOp, dst, src Strided, dim int) error
	// Softmax computes softmax of src along its last dimension into dst.
	Softmax(dst, src Strided) error
	// LayerNorm normalises src over its last dimension and applies gamma and beta
	// (1-D, the size of the last dimension) into dst.
	LayerNorm(dst, src, gamma, beta Strided, eps float64) error
	// Matmul computes dst = a @ b for 2-D operands, or batched over a leading
	// dimension for 3-D ones. Float16 and BFloat16 inputs accumulate in float32.
	Matmul(dst, a, b Strided) error
	// Embedding gathers rows of weight (2-D) selected by idx (Int32 or Int64) into dst,
	// whose shape is idx's shape plus weight's last dimension.
	Embedding(dst, weight, idx Strided) error
	// Synchronize waits until every kernel launched so far has finished.
	Synchronize() error
}
