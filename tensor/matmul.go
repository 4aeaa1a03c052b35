package tensor

import "fmt"

// cppTypeName is the C++ scalar type PyTorch's matmul messages print.
func cppTypeName(d DType) string {
	return map[DType]string{Float32: "float", Float16: "c10::Half", BFloat16: "c10::BFloat16", Int32: "int", Int64: "long int", Uint8: "unsigned char", Bool: "bool"}[d]
}

// Matmul returns the matrix product t @ o for 2-D operands, batched for 3-D
// ones (a 2-D operand is broadcast over the batch; batch sizes of 1
// broadcast). Float16 and BFloat16 inputs accumulate in float32. On a tape it
// saves both inputs.
func (t *Tensor) Matmul(o *Tensor) (*Tensor, error) {
	const op = "matmul"
	dev, err := inputs(op, t, o)
	if err != nil {
		return nil, err
	}
	if t.dtype != o.dtype {
		return nil, torchErr(op, "expected mat1 and mat2 to have the same dtype, but got: %s != %s", cppTypeName(t.dtype), cppTypeName(o.dtype))
	}
	if t.Dim() < 2 || t.Dim() > 3 || o.Dim() < 2 || o.Dim() > 3 {
		return nil, fmt.Errorf("tensor: %s: memlab multiplies 2-D and 3-D tensors, got %d-D and %d-D", op, t.Dim(), o.Dim())
	}
	a, b := t.layout, o.layout
	if a.Dim() == 2 && b.Dim() == 2 {
		m, k, k2, n := a.Shape[0], a.Shape[1], b.Shape[0], b.Shape[1]
		if k != k2 {
			return nil, torchErr(op, "mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)", m, k, k2, n)
		}
		return t.matmul(dev, o, a, b, Shape{m, n}, "MmBackward0")
	}
	if a.Dim() == 3 && b.Dim() == 2 {
		bt, m, k := a.Shape[0], a.Shape[1], a.Shape[2]
		if k != b.Shape[0] {
			return nil, torchErr(op, "mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)", bt*m, k, b.Shape[0], b.Shape[1])
		}
		b, _ = b.Expand(bt, b.Shape[0], b.Shape[1])
		return t.matmul(dev, o, a, b, Shape{bt, m, b.Shape[2]}, "UnsafeViewBackward0")
	}
	if a.Dim() == 2 {
		a, _ = a.Unsqueeze(0)
	}
	batch, err := BroadcastShapes(a.Shape[:1], b.Shape[:1])
	if err != nil {
		return nil, err
	}
	if a.Shape[2] != b.Shape[1] {
		return nil, torchErr(op, "Expected size for first two dimensions of batch2 tensor to be: [%d, %d] but got: [%d, %d].", batch[0], a.Shape[2], batch[0], b.Shape[1])
	}
	a, _ = a.Expand(batch[0], a.Shape[1], a.Shape[2])
	b, _ = b.Expand(batch[0], b.Shape[1], b.Shape[2])
	return t.matmul(dev, o, a, b, Shape{batch[0], a.Shape[1], b.Shape[2]}, "BmmBackward0")
}

func (t *Tensor) matmul(dev Device, o *Tensor, a, b Layout, shape Shape, gradFn string) (*Tensor, error) {
	const op = "matmul"
	out, err := alloc(op, dev, t.dtype, ContiguousLayout(shape...))
	if err != nil {
		return nil, err
	}
	if err := out.run(op, func() error {
		return dev.Matmul(out.strided(), stridedOf(t.storage.ptr, t.dtype, a), stridedOf(o.storage.ptr, o.dtype, b))
	}); err != nil {
		return nil, out.releaseAfter(err)
	}
	return finish(out, gradFn, []*Tensor{t, o}, t, o)
}
