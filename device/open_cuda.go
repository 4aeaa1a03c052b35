package device

import "memlab.dev/memlab/device/cuda"

var _ Device = (*cuda.Device)(nil)

func init() {
	openCUDA = func(index int) (Device, error) {
		d, err := cuda.Open(index)
		if err != nil {
			return nil, err
		}
		return d, nil
	}
}
