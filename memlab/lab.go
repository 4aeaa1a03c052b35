package memlab

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/device"
	"memlab.dev/memlab/device/sim"
	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/tensor"
	"memlab.dev/memlab/units"
)

// Lab is one device with its own caching allocator. It implements
// [tensor.Device]: Allocate and Deallocate go through the allocator, kernels
// run on the device. Several labs may share one device (see [SharedWith]),
// like two processes on one GPU: each has its own allocator and statistics,
// and the driver's view counts them all. A Lab is safe for concurrent use.
type Lab struct {
	tensor.Kernels
	dev   device.Device
	alloc *allocator.Allocator
	owns  bool // Close closes dev
	sel   device.Selection

	mu     sync.Mutex
	closed bool
}

// Option configures [Open].
type Option func(*options) error

type options struct {
	spec    string
	conf    *string
	dev     device.Device
	sim     *sim.Config
	latency bool
	budget  int64
	current bool
}

// Device selects the device by spec, as device.Open reads it: "" for the
// MEMLAB_DEVICE environment variable or else a GPU if there is one and the
// simulator otherwise; "sim", "sim:24GiB", "cuda", "cuda:1".
func Device(spec string) Option {
	return func(o *options) error {
		o.spec = spec
		return nil
	}
}

// Sim selects a simulated device (index 0) with the given capacity, a byte
// size such as "24GiB", "80 GB" or "1073741824" (units.ParseBytes); "" means
// the simulator's default capacity.
func Sim(capacity string) Option {
	return func(o *options) error {
		o.spec = device.Simulated
		if capacity != "" {
			if _, err := units.ParseBytes(capacity); err != nil {
				return fmt.Errorf("memlab: Sim(%q): %w", capacity, err)
			}
			o.spec += ":0:" + capacity // a bare number is a capacity here, never an index
		}
		return nil
	}
}

// AllocConf configures the allocator with a PYTORCH_CUDA_ALLOC_CONF string such
// as "max_split_size_mb:128" or "expandable_segments:True". Without it the
// allocator reads MEMLAB_ALLOC_CONF / PYTORCH_CUDA_ALLOC_CONF from the
// environment, as PyTorch does; AllocConf("") forces the defaults.
func AllocConf(conf string) Option {
	return func(o *options) error {
		o.conf = &conf
		return nil
	}
}

// SimConfig opens a simulated device configured in full: capacity, context
// overhead, modelled driver latency (sim.H200() is the card the course
// measured). It overrides [Device] and [Sim].
func SimConfig(cfg sim.Config) Option {
	return func(o *options) error {
		o.sim = &cfg
		return nil
	}
}

// WithLatency makes a simulated device charge each cudaMalloc and cudaFree the
// time the H200 took (the simulator's latency model), so that experiments on
// allocation counts show up in wall-clock time too. A real GPU has its own
// latency; there the option does nothing.
func WithLatency() Option {
	return func(o *options) error {
		o.latency = true
		return nil
	}
}

// Budget makes the lab's device a device of n bytes, on any card, for
// experiments about running out of memory: a simulated device is opened with
// exactly n bytes, and on a real GPU the lab opens a budget of n bytes on the
// card, which counts what a simulated device of n bytes would (its CUDA
// context, sim.ContextFor(n), and every allocation of every lab that shares
// it, [SharedWith]), refuses what would not fit with an out-of-memory error,
// and is what [Lab.MemGetInfo] reports. So an experiment runs out of memory at
// the same request on both devices, two labs on one budget compete for it as
// two processes compete for a card, and mem_get_info() tells the same story.
// n must be at least 1 MiB; on a device opened elsewhere ([SharedWith],
// [OnDevice]) Budget caps the lab's reserved memory at n instead
// ([Lab.SetPerProcessMemoryFraction]).
func Budget(n int64) Option {
	return func(o *options) error {
		if n < 1<<20 {
			return fmt.Errorf("memlab: Budget(%d): need at least 1 MiB", n)
		}
		o.budget = n
		return nil
	}
}

// OnDevice uses an already open device instead of opening one. The lab does
// not close it.
func OnDevice(d device.Device) Option {
	return func(o *options) error {
		if d == nil {
			return errors.New("memlab: OnDevice(nil)")
		}
		o.dev = d
		return nil
	}
}

// SharedWith puts the new lab on other's device with an allocator of its own:
// a second process sharing the GPU. Closing either lab leaves the device to
// the one that opened it.
func SharedWith(other *Lab) Option {
	return func(o *options) error {
		if other == nil {
			return errors.New("memlab: SharedWith(nil)")
		}
		o.dev = other.dev
		return nil
	}
}

// NotCurrent keeps the current lab as it is instead of making the new one current.
func NotCurrent() Option {
	return func(o *options) error {
		o.current = false
		return nil
	}
}

// Open opens a device with a caching allocator in front of it and makes it
// the current lab (unless [NotCurrent] is given).
func Open(opts ...Option) (*Lab, error) {
	o := options{current: true}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	var cfg allocator.Config
	var err error
	if o.conf != nil {
		cfg, err = allocator.ParseConfig(*o.conf)
	} else {
		cfg, err = allocator.ConfigFromEnv()
	}
	if err != nil {
		return nil, fmt.Errorf("memlab: allocator config: %w", err)
	}
	l := &Lab{dev: o.dev}
	if l.dev != nil {
		l.sel = device.Selection{Device: l.dev.String(), From: "shared", Reason: "an open device was given"}
	} else {
		if l.dev, l.sel, err = openOwnDevice(o); err != nil {
			return nil, err
		}
		l.owns = true
	}
	l.Kernels = l.dev
	if l.alloc, err = allocator.New(l.dev, cfg); err != nil {
		if l.owns {
			l.dev.Close()
		}
		return nil, fmt.Errorf("memlab: %s: %w", l.dev, err)
	}
	if o.budget > 0 && !l.owns {
		if err := l.capAt(o.budget); err != nil {
			return nil, errors.Join(err, l.Close())
		}
	}
	if o.current {
		SetCurrent(l)
	}
	return l, nil
}

// capAt caps reserved memory at n bytes when the device is larger.
func (l *Lab) capAt(n int64) error {
	_, total, err := l.dev.MemGetInfo()
	if err != nil {
		return fmt.Errorf("memlab: %s: %w", l.dev, err)
	}
	if uint64(n) >= total {
		return nil
	}
	if err := l.alloc.SetPerProcessMemoryFraction(float64(n) / float64(total)); err != nil {
		return fmt.Errorf("memlab: Budget(%s) on %s: %w", FormatBytes(n), l.dev, err)
	}
	return nil
}

// MustOpen is [Open] for notebook cells and examples: it panics if the lab
// cannot be opened.
func MustOpen(opts ...Option) *Lab {
	l, err := Open(opts...)
	if err != nil {
		panic(err)
	}
	return l
}

// Close releases the lab: every segment its allocator holds goes back to the
// device, and a device the lab opened is closed. Tensors still alive become
// invalid. Close is idempotent. If the lab was current, there is no current
// lab afterwards.
func (l *Lab) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	currentMu.Lock()
	if current == l {
		current = nil
	}
	currentMu.Unlock()
	var errs []error
	if !l.owns {
		// The device lives on: give back what this allocator holds. Live blocks
		// keep their segments, as a process that leaks would.
		if err := l.alloc.EmptyCache(); err != nil {
			errs = append(errs, err)
		}
	} else if err := l.dev.Close(); err != nil {
		errs = append(errs, fmt.Errorf("memlab: close %s: %w", l.dev, err))
	}
	return errors.Join(errs...)
}

// openOwnDevice opens the device the options describe.
func openOwnDevice(o options) (device.Device, device.Selection, error) {
	if o.sim != nil {
		cfg := *o.sim
		cfg.ModelLatency = cfg.ModelLatency || o.latency
		if o.budget > 0 {
			cfg.Capacity = uint64(o.budget)
		}
		d, err := sim.New(cfg)
		if err != nil {
			return nil, device.Selection{}, fmt.Errorf("memlab: simulated device: %w", err)
		}
		return d, device.Selection{From: "argument", Requested: "sim config", Device: d.String(), Reason: "requested"}, nil
	}
	d, sel, err := openDevice(o.spec)
	if err != nil {
		return nil, sel, fmt.Errorf("memlab: open device %q: %w", o.spec, err)
	}
	if d.Kind() != device.Simulated {
		if o.budget > 0 {
			if _, total, err := d.MemGetInfo(); err == nil && uint64(o.budget) < total {
				return newBudgetDevice(d, uint64(o.budget)), sel, nil
			}
		}
		return d, sel, nil
	}
	if !o.latency && o.budget == 0 {
		return d, sel, nil
	}
	// Reopen the simulator as chosen, with the latency model or the budget's size.
	_, total, err := d.MemGetInfo()
	if err == nil {
		err = d.Close()
	}
	if err != nil {
		return nil, sel, fmt.Errorf("memlab: %s: %w", d, err)
	}
	if o.budget > 0 {
		total = uint64(o.budget)
	}
	sd, err := sim.New(sim.Config{Index: d.Index(), Capacity: total, ModelLatency: o.latency})
	if err != nil {
		return nil, sel, fmt.Errorf("memlab: simulated device: %w", err)
	}
	return sd, sel, nil
}

// openDevice opens the device spec names. Automatic selection (no spec, no
// MEMLAB_DEVICE) is device.Open's — a GPU if one answers, else the simulator —
// done here in two explicit steps so that the reason for a fallback goes into
// the lab's Selection (see Describe) instead of a note on stderr, which a
// notebook would show under every cell.
func openDevice(spec string) (device.Device, device.Selection, error) {
	if strings.TrimSpace(spec) != "" || strings.TrimSpace(os.Getenv(device.EnvVar)) != "" {
		return device.OpenSelect(spec)
	}
	d, sel, err := device.OpenSelect(device.CUDA)
	if err == nil {
		sel.From, sel.Requested, sel.Reason = "auto", "", "a CUDA GPU answered"
		return d, sel, nil
	}
	d, sel, simErr := device.OpenSelect(device.Simulated)
	if simErr != nil {
		return nil, sel, simErr
	}
	sel.From, sel.Requested = "auto", ""
	sel.Reason = "no usable GPU (" + err.Error() + "); using the simulated device"
	return d, sel, nil
}

// String names the lab's device as PyTorch does, such as "cuda:0" or "sim:0".
func (l *Lab) String() string { return l.dev.String() }

// Describe says which device the lab runs on, why it was chosen, and how its
// allocator is configured, in three lines:
//
//	device:     sim:0, memlab simulated GPU (24 GiB), 24.00 GiB
//	chosen:     requested (argument "sim:0:24GiB")
//	alloc conf: max_split_size_mb:128
func (l *Lab) Describe() string {
	_, total, err := l.dev.MemGetInfo()
	size := lang.Text("total unknown")
	if err == nil {
		size = allocator.FormatSize(int64(total))
	}
	return l.describe(size)
}

// DeviceLine names the lab's device, its name and total memory in one line,
// in English whatever the edition, as notebooks' stamps record it:
// "cuda:0, NVIDIA H200, 139.80 GiB".
func (l *Lab) DeviceLine() string {
	size := "total unknown"
	if _, total, err := l.dev.MemGetInfo(); err == nil {
		size = allocator.FormatSize(int64(total))
	}
	return fmt.Sprintf("%s, %s, %s", l.dev, l.dev.Name(), size)
}

// describe is Describe with the device's size already written.
func (l *Lab) describe(size string) string {
	conf := l.alloc.Snapshot().Settings.Conf
	if conf == "" {
		conf = lang.Text("defaults")
	}
	chosen := lang.Text(l.sel.Reason)
	if l.sel.From != "" && l.sel.From != "auto" && l.sel.From != "shared" {
		chosen += fmt.Sprintf(" (%s %q)", lang.Text(l.sel.From), l.sel.Requested)
	}
	return fmt.Sprintf(lang.Text("device:     %s, %s, %s")+"\n"+lang.Text("chosen:     %s")+"\n"+lang.Text("alloc conf: %s"),
		l.dev, l.dev.Name(), size, chosen, conf)
}

// Selection says how the lab's device was chosen (see device.OpenSelect).
func (l *Lab) Selection() device.Selection { return l.sel }

// Device returns the device the lab runs on.
func (l *Lab) Device() device.Device { return l.dev }

// Allocator returns the lab's caching allocator, for what this package does
// not wrap (RecordHistory, ResetAccumulatedMemoryStats, Config).
func (l *Lab) Allocator() *allocator.Allocator { return l.alloc }

// Allocate returns nbytes of device memory from the caching allocator (the
// [tensor.Device] method tensors call). An out-of-memory failure is an
// *allocator.OutOfMemoryError with PyTorch's message.
func (l *Lab) Allocate(nbytes int64) (tensor.Ptr, error) {
	// After Close the allocator's cache points into a closed device (or, on a
	// shared device, a new segment would never be given back): refuse.
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed {
		return 0, fmt.Errorf("memlab: %s: Allocate(%d) on a closed lab", l.dev, nbytes)
	}
	p, err := l.alloc.Malloc(nbytes)
	return tensor.Ptr(p), err
}

// Deallocate returns memory from [Lab.Allocate] to the allocator's cache.
func (l *Lab) Deallocate(p tensor.Ptr) error { return l.alloc.Free(uint64(p)) }

// IsOutOfMemory reports whether err is (or wraps) an out-of-memory error.
func IsOutOfMemory(err error) bool {
	var oom interface{ OutOfMemory() bool }
	return errors.As(err, &oom) && oom.OutOfMemory()
}

var (
	currentMu sync.Mutex
	current   *Lab
)

// SetCurrent makes l the lab the package-level functions act on (nil for none).
func SetCurrent(l *Lab) {
	currentMu.Lock()
	current = l
	currentMu.Unlock()
}

// ErrNoLab is the error of the package-level functions when no lab is open.
// (torch.cuda opens its device lazily; memlab does not, since a lab opened
// behind the caller's back would never be closed.)
var ErrNoLab = errors.New("memlab: no lab is open: the package-level functions act on the last lab opened; open one first with l := memlab.MustOpen() and defer l.Close()")

// Current returns the current lab: the last one opened (without
// [NotCurrent]) and not yet closed, or the one [SetCurrent] chose. With none,
// it returns [ErrNoLab]; it never opens a device itself.
func Current() (*Lab, error) {
	currentMu.Lock()
	l := current
	currentMu.Unlock()
	if l == nil {
		return nil, ErrNoLab
	}
	return l, nil
}

var _ tensor.Device = (*Lab)(nil)

// driverUsed is total − free of the lab's device.
func (l *Lab) driverUsed() (int64, error) {
	free, total, err := l.dev.MemGetInfo()
	if err != nil {
		return -1, fmt.Errorf("memlab: %s: %w", l.dev, err)
	}
	return int64(total) - int64(free), nil
}
