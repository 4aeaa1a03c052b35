package ch2

import (
	"errors"
	"fmt"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/tensor"
)

// TrainStep computes one step's 1 MiB output of the leak check, out = x @ w,
// from a fresh 256×256 batch seeded by i.
func TrainStep(l *memlab.Lab, w *tensor.Tensor, i int) (*tensor.Tensor, error) {
	x, err := tensor.Randn(l, uint64(i), tensor.Float32, 256, 256)
	if err != nil {
		return nil, fmt.Errorf("ch2: step %d: %w", i, err)
	}
	out, err := x.Matmul(w)
	return out, errors.Join(err, x.Release())
}

// Item is out[0, 0].item(): one number, copied to the host.
func Item(out *tensor.Tensor) (float64, error) {
	row, err := out.Select(0, 0)
	if err != nil {
		return 0, err
	}
	v, err := row.Select(0, 0)
	if err != nil {
		return 0, errors.Join(err, row.Release())
	}
	x, err := v.Item()
	return x, errors.Join(err, tensor.ReleaseAll(row, v))
}

// Greedy allocates 1 GiB tensors on l until it runs out of memory, and
// returns them: the greedy tenant of 2.4.
func Greedy(l *memlab.Lab) ([]*tensor.Tensor, error) {
	var ts []*tensor.Tensor
	for {
		t, err := tensor.Empty(l, tensor.Uint8, 1<<30)
		if memlab.IsOutOfMemory(err) {
			return ts, nil
		}
		if err != nil {
			return nil, errors.Join(err, tensor.ReleaseAll(ts...))
		}
		ts = append(ts, t)
	}
}

// CapHalf caps each lab at half of an 8 GiB device: 4 GiB as a fraction of
// the device's total (0.5 on the simulated 8 GiB device), as
// torch.cuda.set_per_process_memory_fraction(0.5) in each process.
func CapHalf(labs ...*memlab.Lab) error {
	for _, l := range labs {
		_, total, err := l.MemGetInfo()
		if err != nil {
			return err
		}
		if err := l.SetPerProcessMemoryFraction(float64(4<<30) / float64(total)); err != nil {
			return err
		}
	}
	return nil
}
