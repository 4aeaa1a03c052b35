package tensor

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
