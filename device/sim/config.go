package sim

import (
	"fmt"
	"math"
	"time"

	"memlab.dev/memlab/units"
)

// ContextFor is the context overhead of a device of capacity bytes when
// Config.ContextOverhead is 0: DefaultContextOverhead, or an eighth of the
// capacity on a device smaller than 4 GiB.
func ContextFor(capacity uint64) uint64 { return min(DefaultContextOverhead, capacity/8) }

// Sizes and addresses of the simulated device.
const (
	// DefaultCapacity is the memory of a default device: 80 GiB, an A100/H100.
	DefaultCapacity = 80 << 30
	// DefaultContextOverhead is what a default device's context occupies before
	// any allocation: 512 MiB, the order of a bare CUDA context with the
	// runtime's kernels loaded lazily. A PyTorch process holds more: on the
	// H200, cuMemGetInfo reported 148.6 of 150.1 GB free at the start of a
	// process (1.5 GB), which H200 reproduces.
	DefaultContextOverhead = 512 << 20
	// Granularity is the page size of Malloc rounding, Map and Unmap: 2 MiB,
	// what cuMemGetAllocationGranularity reports for device memory.
	Granularity = 2 << 20
	// BaseAddress is the lowest address the device hands out.
	BaseAddress = 0x7f0000000000
	// addressLimit bounds the simulated address space (48-bit pointers).
	addressLimit = 1 << 48
)

// maxBacking is the largest backing a slice can index.
const maxBacking = uint64(math.MaxInt)

// Config describes a simulated device. The zero Config is an 80 GiB device
// with a 512 MiB context, instantaneous driver calls, index 0.
type Config struct {
	// Capacity is the device memory in bytes (cuMemGetInfo's total);
	// 0 means DefaultCapacity.
	Capacity uint64
	// ContextOverhead is the memory the context occupies before any
	// allocation; 0 means DefaultContextOverhead, or an eighth of Capacity if
	// that is smaller. Set NoContext for a device with no overhead at all.
	ContextOverhead uint64
	// NoContext makes the context occupy no memory (ContextOverhead is ignored).
	NoContext bool
	// MallocLatency and FreeLatency are the time each Malloc (and Map) and each
	// Free (and Unmap) takes; 0 means none, or the H200 model with ModelLatency.
	MallocLatency, FreeLatency time.Duration
	// ModelLatency charges the calls whose latency is 0 with the H200 model:
	// half of [H200Latency] of the size to each call.
	ModelLatency bool
	// NoWait counts the latency of each call in Stats without spending it, for
	// replays that should report driver time but run at full speed.
	NoWait bool
	// Index is the device ordinal, as in "sim:0".
	Index int
	// Name is the hardware name; empty means "memlab simulated GPU (<capacity>)".
	Name string
}

// H200 returns the configuration of the NVIDIA H200 the course measured: the
// capacity cuMemGetInfo reports (150.1 GB, rounded down to whole MiB), the
// 1.5 GB a PyTorch process's context occupies, and the modelled latency.
func H200() Config {
	return Config{
		Capacity:        150_100_000_000 &^ (1<<20 - 1),
		ContextOverhead: 1_500_000_000,
		ModelLatency:    true,
		Name:            "memlab simulated NVIDIA H200",
	}
}

// withDefaults validates c and fills in its defaults.
func (c Config) withDefaults() (Config, error) {
	if c.Capacity == 0 {
		c.Capacity = DefaultCapacity
	}
	if c.Capacity < Granularity {
		return c, fmt.Errorf("sim: capacity %d is less than one %d-byte page", c.Capacity, Granularity)
	}
	if c.Capacity > addressLimit-BaseAddress {
		return c, fmt.Errorf("sim: capacity %d (%s) does not fit in the simulated address space (%s from %#x)",
			c.Capacity, units.FormatBytes(c.Capacity), units.FormatBytes(uint64(addressLimit-BaseAddress)), uint64(BaseAddress))
	}
	switch {
	case c.NoContext:
		c.ContextOverhead = 0
	case c.ContextOverhead == 0:
		c.ContextOverhead = ContextFor(c.Capacity)
	case c.ContextOverhead >= c.Capacity:
		return c, fmt.Errorf("sim: context overhead %s leaves nothing of capacity %s", units.FormatBytes(c.ContextOverhead), units.FormatBytes(c.Capacity))
	}
	if c.MallocLatency < 0 || c.FreeLatency < 0 {
		return c, fmt.Errorf("sim: negative latency (malloc %v, free %v)", c.MallocLatency, c.FreeLatency)
	}
	if c.Index < 0 {
		return c, fmt.Errorf("sim: negative device index %d", c.Index)
	}
	if c.Name == "" {
		c.Name = "memlab simulated GPU (" + units.FormatBytes(c.Capacity) + ")"
	}
	return c, nil
}
