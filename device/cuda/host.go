package cuda

import (
	"cmp"
	"fmt"
	"slices"

	"memlab.dev/memlab/kernels/cpu"
	"memlab.dev/memlab/tensor"
)

// The GPU kernels cover the float dtypes. Integer and bool work the kernels
// do not do (integer reductions, integer matmul, integer and bool elementwise
// arithmetic, which wraps and divides exactly) runs on the CPU reference over
// host copies of the operands' memory, so it has exactly the reference's
// semantics; it is meant for the small index and mask tensors such work
// involves, not for speed.

// spanMemory is host copies of device byte ranges at made-up addresses: the
// cpu.Memory of onHost.
type spanMemory struct {
	spans []span // sorted by addr
	next  uint64
}

type span struct {
	addr uint64
	b    []byte
}

func (m *spanMemory) Bytes(addr tensor.Ptr, n int) ([]byte, error) {
	a := uint64(addr)
	i, found := slices.BinarySearchFunc(m.spans, a, func(s span, a uint64) int { return cmp.Compare(s.addr, a) })
	if !found {
		i--
	}
	if i < 0 || a-m.spans[i].addr+uint64(n) > uint64(len(m.spans[i].b)) {
		return nil, fmt.Errorf("device/cuda: host copy has no %d bytes at %#x", n, a)
	}
	off := a - m.spans[i].addr
	return m.spans[i].b[off : off+uint64(n)], nil
}

// onHost copies the memory of every operand to the host, runs f with the CPU
// reference on those copies (args in the order outs then ins, with their
// bases moved to the copies), and copies the outputs' memory back.
func (d *Device) onHost(outs, ins []operand, f func(k tensor.Kernels, args []tensor.Strided) error) error {
	mem := &spanMemory{next: 1 << 20}
	all := append(slices.Clone(outs), ins...)
	args := make([]tensor.Strided, len(all))
	copies := make([][]byte, len(all))
	for i, o := range all {
		args[i] = o.s
		if o.n == 0 {
			continue
		}
		buf := make([]byte, o.hi-o.lo)
		if err := d.CopyToHost(buf, tensor.Ptr(o.lo)); err != nil {
			return err
		}
		lead := o.lo - uint64(o.s.Base) // bytes from Base to the first element touched
		addr := (max(mem.next, lead+1<<12) + 255) &^ 255
		mem.spans = append(mem.spans, span{addr, buf})
		mem.next = addr + uint64(len(buf)) + 256
		args[i].Base = tensor.Ptr(addr - lead)
		copies[i] = buf
	}
	if err := f(cpu.New(mem), args); err != nil {
		return fmt.Errorf("device/cuda: on the host: %w", err)
	}
	for i := range outs {
		if copies[i] != nil {
			if err := d.CopyFromHost(tensor.Ptr(all[i].lo), copies[i]); err != nil {
				return err
			}
		}
	}
	return nil
}
