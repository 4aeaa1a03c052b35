package cpu_test

import (
	"fmt"
	"testing"

	"memlab.dev/memlab/tensor"
)

func BenchmarkMatmul(b *testing.B) {
	for _, n := range []int{128, 512} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			e := newEnv(b)
			x := e.alloc(tensor.Float32, []int{n, n}, nil, 0)
			y := e.alloc(tensor.Float32, []int{n, n}, nil, 0)
			z := e.alloc(tensor.Float32, []int{n, n}, nil, 0)
			if err := e.k.Random(x, 1, false, -1, 1); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(2 * n * n * n)) // "bytes" = flops, so MB/s reads as MFLOP/s
			for b.Loop() {
				if err := e.k.Matmul(z, x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchElementwise(b *testing.B, name string, shape, srcStrides []int, f func(e *env, dst, src tensor.Strided) error) {
	b.Run(name, func(b *testing.B) {
		e := newEnv(b)
		src := e.alloc(tensor.Float32, shape, srcStrides, 0)
		dst := e.alloc(tensor.Float32, shape, nil, 0)
		b.SetBytes(int64(8 * numel(shape))) // bytes read + written
		for b.Loop() {
			if err := f(e, dst, src); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkElementwise(b *testing.B) {
	const n = 1024
	sq := []int{n, n}
	benchElementwise(b, "add", sq, nil, func(e *env, d, s tensor.Strided) error { return e.k.Binary(tensor.Add, d, d, s) })
	benchElementwise(b, "gelu", sq, nil, func(e *env, d, s tensor.Strided) error { return e.k.Unary(tensor.Gelu, d, s, 0) })
	benchElementwise(b, "copy", sq, nil, func(e *env, d, s tensor.Strided) error { return e.k.Copy(d, s) })
	benchElementwise(b, "copy-transposed", sq, []int{1, n}, func(e *env, d, s tensor.Strided) error { return e.k.Copy(d, s) })
	benchElementwise(b, "softmax", sq, nil, func(e *env, d, s tensor.Strided) error { return e.k.Softmax(d, s) })
	benchElementwise(b, "layernorm", sq, nil, func(e *env, d, s tensor.Strided) error {
		return e.k.LayerNorm(d, s, tensor.Strided{}, tensor.Strided{}, 1e-5)
	})
}
