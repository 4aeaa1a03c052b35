package sim

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

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
	switch {
	case c.NoContext:
		c.ContextOverhead = 0
	case c.ContextOverhead == 0:
		c.ContextOverhead = min(DefaultContextOverhead, c.Capacity/8)
	case c.ContextOverhead >= c.Capacity:
		return c, fmt.Errorf("sim: context overhead %s leaves nothing of capacity %s", FormatBytes(c.ContextOverhead), FormatBytes(c.Capacity))
	}
	if c.MallocLatency < 0 || c.FreeLatency < 0 {
		return c, fmt.Errorf("sim: negative latency (malloc %v, free %v)", c.MallocLatency, c.FreeLatency)
	}
	if c.Index < 0 {
		return c, fmt.Errorf("sim: negative device index %d", c.Index)
	}
	if c.Name == "" {
		c.Name = "memlab simulated GPU (" + FormatBytes(c.Capacity) + ")"
	}
	return c, nil
}

var units = map[string]uint64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

// ParseCapacity parses a memory size such as "24GiB", "80 GB", "512MiB",
// "1.5GiB" or "1048576" (bytes). Units are B, KB, MB, GB, TB (powers of 1000)
// and KiB, MiB, GiB, TiB (powers of 1024), in any case. The size must be a
// positive whole number of bytes.
func ParseCapacity(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "-") {
		return 0, fmt.Errorf("sim: capacity %q must be positive", s)
	}
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(t)
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := units[unit]
	if !ok {
		return 0, fmt.Errorf("sim: capacity %q: unknown unit %q (use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)", s, t[i:])
	}
	if num == "" {
		return 0, fmt.Errorf("sim: capacity %q: no number", s)
	}
	var n uint64
	if whole, err := strconv.ParseUint(num, 10, 64); err == nil {
		if whole > math.MaxUint64/mult {
			return 0, fmt.Errorf("sim: capacity %q is too large", s)
		}
		n = whole * mult
	} else {
		f, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return 0, fmt.Errorf("sim: capacity %q: %q is not a number", s, num)
		}
		v := f * float64(mult)
		if v >= math.MaxUint64 {
			return 0, fmt.Errorf("sim: capacity %q is too large", s)
		}
		if v != math.Trunc(v) {
			return 0, fmt.Errorf("sim: capacity %q is not a whole number of bytes", s)
		}
		n = uint64(v)
	}
	if n == 0 {
		return 0, fmt.Errorf("sim: capacity %q must be positive", s)
	}
	return n, nil
}

// FormatBytes writes a byte count in the largest binary unit that divides it
// exactly ("80 GiB", "2 MiB", "1536 KiB", "100 B").
func FormatBytes(n uint64) string {
	for _, u := range []struct {
		name string
		size uint64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatUint(n/u.size, 10) + " " + u.name
		}
	}
	return strconv.FormatUint(n, 10) + " B"
}
