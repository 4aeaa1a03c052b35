// Package cpu is memlab's reference implementation of [tensor.Kernels]: plain Go
// loops over device memory that a [Memory] resolves to host bytes.
//
// It serves two purposes. It is the engine of the simulated device (device/sim),
// and it is the oracle the GPU kernels are tested against, so its numerics are
// documented precisely:
//
//   - Elementwise float functions (relu, gelu, exp, neg, scale, add, sub, mul, div)
//     are evaluated in float64 on the exact input values and rounded once to
//     float32; for +, −, ×, ÷ this is bit-identical to IEEE float32 arithmetic.
//     Float16 and BFloat16 results are rounded to float32 first and then to the
//     16-bit type with round-to-nearest-even ([tensor.Float16Bits],
//     [tensor.BFloat16Bits]), as PyTorch does (its "opmath" type for half
//     types is float32). Scale's alpha is first rounded to float32, as
//     PyTorch rounds a Python scalar multiplied into a float32 tensor.
//   - Integer dtypes (Int32, Int64, Uint8) compute in int64 and wrap to the width
//     of the type; integer division truncates toward zero and division by zero is
//     an error. Bool supports Add (logical or), Mul (logical and), Relu and Max.
//   - Reductions (Sum), softmax and layer norm accumulate in float64 and round
//     the result once; Max is exact and propagates NaN. Matmul accumulates in
//     float32 for every float dtype (as cuBLAS does), in int64 for integers.
//   - Conversions (Copy, Fill, Random into integer tensors) truncate toward
//     zero; Copy wraps out-of-range values modulo 2^bits (NaN becomes 0), while
//     Fill rejects a value the dtype cannot hold, as torch.fill_ does.
//
// Every method validates its arguments and returns an error prefixed
// "kernels/cpu: " rather than touching memory it was not given. Large work is
// split over goroutines (at most GOMAXPROCS); results do not depend on the split.
package cpu
