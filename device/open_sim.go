package device

import "memlab.dev/memlab/device/sim"

var _ Device = (*sim.Device)(nil)

func init() {
	openSim = func(index int, capacity uint64) (Device, error) {
		d, err := sim.New(sim.Config{Index: index, Capacity: capacity})
		if err != nil {
			return nil, err
		}
		return d, nil
	}
}
