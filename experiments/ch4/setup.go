package ch4

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"memlab.dev/memlab/device"
	"memlab.dev/memlab/device/sim"
	"memlab.dev/memlab/memlab"
)

// MiB is 2²⁰ bytes.
const MiB = 1 << 20

// Setup says where experiments run.
type Setup struct {
	// Device is a device spec as device.Open reads it: "" (MEMLAB_DEVICE,
	// else a GPU if present, else the simulator), "sim", "sim:24GiB", "cuda",
	// "cuda:1".
	Device string
}

// Bench is one lab opened for an experiment, with the allocator's default
// configuration.
type Bench struct {
	*memlab.Lab
	sim *sim.Device // the simulated device, which the bench owns; nil on a GPU
}

// Open opens a fresh lab for one experiment. A simulated device charges each
// cudaMalloc and cudaFree the latency measured on an H200 (sim.H200Latency),
// so that reuse saves time there as on the GPU. The lab does not become the
// current one; Close it when done.
func (s Setup) Open() (*Bench, error) {
	spec := s.Device
	if spec == "" {
		spec = os.Getenv(device.EnvVar)
	}
	ps, err := device.ParseSpec(spec)
	if err != nil {
		return nil, fmt.Errorf("ch4: %w", err)
	}
	if ps.Kind != device.Simulated {
		l, err := memlab.Open(memlab.Device(spec), memlab.AllocConf(""), memlab.NotCurrent())
		if err != nil {
			return nil, fmt.Errorf("ch4: %w", err)
		}
		if l.Device().Kind() != device.Simulated {
			return &Bench{Lab: l}, nil
		}
		if err := l.Close(); err != nil { // automatic choice fell back to the simulator
			return nil, err
		}
	}
	d, err := sim.New(sim.Config{Capacity: ps.Capacity, Index: ps.Index, ModelLatency: true})
	if err != nil {
		return nil, fmt.Errorf("ch4: %w", err)
	}
	l, err := memlab.Open(memlab.OnDevice(d), memlab.AllocConf(""), memlab.NotCurrent())
	if err != nil {
		return nil, errors.Join(fmt.Errorf("ch4: %w", err), d.Close())
	}
	return &Bench{Lab: l, sim: d}, nil
}

// Close closes the lab and the simulated device it owns.
func (b *Bench) Close() error {
	err := b.Lab.Close()
	if b.sim != nil {
		err = errors.Join(err, b.sim.Close())
	}
	return err
}

// Simulated reports whether the bench runs on the simulated device.
func (b *Bench) Simulated() bool { return b.sim != nil }

// DriverTime is the modelled time of every cudaMalloc and cudaFree so far on
// the simulated device (0 on a GPU, where it is part of the measured time).
func (b *Bench) DriverTime() time.Duration {
	if b.sim == nil {
		return 0
	}
	return b.sim.Stats().DriverTime()
}

// counters is a snapshot of the allocator counters experiments compare.
type counters struct {
	allocs, deviceAllocs int64
	driver               time.Duration
}

func (b *Bench) counters() counters {
	st := b.MemoryStats()
	return counters{allocs: st["allocation.all.allocated"], deviceAllocs: st["num_device_alloc"], driver: b.DriverTime()}
}

// since returns the counters' growth from c0.
func (c counters) since(c0 counters) counters {
	return counters{c.allocs - c0.allocs, c.deviceAllocs - c0.deviceAllocs, c.driver - c0.driver}
}

// median returns the median of ds (0 for none).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// mib formats bytes in MiB with two decimals.
func mib(n int64) string { return fmt.Sprintf("%.2f MiB", float64(n)/MiB) }

// saved is how much smaller v is than base, in percent of base (negative:
// larger).
func saved(v, base float64) float64 {
	if base == 0 {
		return 0
	}
	return 100 * (base - v) / base
}

// us formats a duration in microseconds, with a decimal below 100 µs.
func us(d time.Duration) string {
	v := float64(d) / float64(time.Microsecond)
	if v < 100 {
		return fmt.Sprintf("%.1f µs", v)
	}
	return fmt.Sprintf("%.0f µs", v)
}
