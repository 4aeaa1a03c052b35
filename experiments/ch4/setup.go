package ch4

import (
	"fmt"
	"slices"
	"time"

	"memlab.dev/memlab/device"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/model"
)

// MiB is 2²⁰ bytes.
const MiB = 1 << 20

// Setup says where experiments run.
type Setup struct {
	// Device is a device spec as device.Open reads it: "" (MEMLAB_DEVICE,
	// else a GPU if present, else the simulator), "sim", "sim:24GiB", "cuda",
	// "cuda:1".
	Device string
	// Progress, if set, is called after each request of [Inference] with the
	// requests done and their number, so that a long run shows it advancing.
	Progress func(done, total int)
	// Forward, if set, is the forward pass [Inference]'s engines run in the
	// modes it implements (model.EngineOptions.Forward): a notebook's own.
	Forward model.Forward
}

// Bench is one lab opened for an experiment, with the allocator's default
// configuration.
type Bench struct {
	*memlab.Lab
}

// Open opens a fresh lab for one experiment. A simulated device charges each
// cudaMalloc and cudaFree the latency measured on an H200
// ([memlab.WithLatency]), so that reuse saves time there as on the GPU. The
// lab does not become the current one; Close it when done.
func (s Setup) Open() (*Bench, error) {
	l, err := memlab.Open(memlab.Device(s.Device), memlab.AllocConf(""), memlab.NotCurrent(), memlab.WithLatency())
	if err != nil {
		return nil, fmt.Errorf("ch4: %w", err)
	}
	return &Bench{Lab: l}, nil
}

// Simulated reports whether the bench runs on the simulated device.
func (b *Bench) Simulated() bool { return b.Device().Kind() == device.Simulated }

// counters is a snapshot of the allocator counters experiments compare.
type counters struct {
	allocs, deviceAllocs int64
}

func (b *Bench) counters() counters {
	st := b.MemoryStats()
	return counters{allocs: st["allocation.all.allocated"], deviceAllocs: st["num_device_alloc"]}
}

// since returns the counters' growth from c0.
func (c counters) since(c0 counters) counters {
	return counters{c.allocs - c0.allocs, c.deviceAllocs - c0.deviceAllocs}
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
