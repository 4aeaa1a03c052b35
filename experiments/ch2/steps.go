package ch2

import (
	"errors"
	"fmt"
	"memlab.dev/memlab/reference"
	"strings"
	"text/tabwriter"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/device"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/tensor"
)

// MiB is 2^20 bytes.
const MiB = 1 << 20

// Setup says where experiments that open their own labs run.
type Setup struct {
	// Device is a device spec as memlab.Device reads it: "" (MEMLAB_DEVICE, else
	// a GPU if present, else the simulator), "sim", "cuda", "cuda:1".
	Device string
}

// Open opens a lab for an experiment that needs budget bytes of device memory
// under the allocator configuration conf. On the simulator the device is made
// exactly budget large, so running out of memory means the device is full; on
// a real GPU (much larger) the lab's reserved memory is capped at budget with
// SetPerProcessMemoryFraction, so the experiment behaves the same on any card.
// The lab does not become the current one.
func (s Setup) Open(conf string, budget int64) (*memlab.Lab, error) {
	if budget < MiB {
		return nil, fmt.Errorf("ch2: budget %d bytes: need at least 1 MiB", budget)
	}
	l, err := memlab.Open(memlab.Device(s.Device), memlab.AllocConf(conf), memlab.NotCurrent())
	if err != nil {
		return nil, err
	}
	if l.Device().Kind() == device.Simulated {
		// Reopen the simulator at the budget's size.
		if err := l.Close(); err != nil {
			return nil, err
		}
		return memlab.Open(memlab.Sim(fmt.Sprintf("%dMiB", budget/MiB)), memlab.AllocConf(conf), memlab.NotCurrent())
	}
	_, total, err := l.MemGetInfo()
	if err == nil && uint64(budget) < total {
		err = l.SetPerProcessMemoryFraction(float64(budget) / float64(total))
	}
	if err != nil {
		return nil, errors.Join(err, l.Close())
	}
	return l, nil
}

// Step is the memory state after one step of an experiment.
type Step struct {
	Label string
	// Allocated, Reserved: the lab's MemoryAllocated and MemoryReserved.
	Allocated, Reserved int64
	// DriverUsed: total − free bytes on the device, as nvidia-smi shows it.
	DriverUsed int64
	// DeviceAllocs: device allocations (cudaMalloc) so far, num_device_alloc.
	DeviceAllocs int64
	// Err is the step's error text (an out-of-memory message), if it failed.
	Err string
}

// Steps is an experiment's sequence of states.
type Steps []Step

// observe appends the lab's state under label.
func (s *Steps) observe(l *memlab.Lab, label string, err error) {
	used, _ := l.DriverUsed()
	st := Step{
		Label: label, Allocated: l.MemoryAllocated(), Reserved: l.MemoryReserved(),
		DriverUsed: used, DeviceAllocs: l.MemoryStats()["num_device_alloc"],
	}
	if err != nil {
		st.Err = err.Error()
	}
	*s = append(*s, st)
}

// Find returns the first step with the given label.
func (s Steps) Find(label string) (Step, bool) {
	for _, st := range s {
		if st.Label == label {
			return st, true
		}
	}
	return Step{}, false
}

// String prints the steps as a table in PyTorch's size units.
func (s Steps) String() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "step\tallocated\treserved\tdriver-used\tcudaMalloc calls\t")
	for _, st := range s {
		used := "?"
		if st.DriverUsed >= 0 {
			used = allocator.FormatSize(st.DriverUsed)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t\n", st.Label, allocator.FormatSize(st.Allocated),
			allocator.FormatSize(st.Reserved), used, st.DeviceAllocs)
	}
	w.Flush()
	for _, st := range s {
		if st.Err != "" {
			fmt.Fprintf(&b, "%s failed: %s\n", st.Label, st.Err)
		}
	}
	return b.String()
}

// Timeline turns the steps into a memory curve with one point per step.
func (s Steps) Timeline() memplot.Timeline {
	tl := memplot.Timeline{XLabel: "step", Discrete: true}
	for i, st := range s {
		tl.Samples = append(tl.Samples, memplot.Sample{X: float64(i), Allocated: st.Allocated, Reserved: st.Reserved, DriverUsed: st.DriverUsed})
	}
	return tl
}

// series returns a step plot of value(step) against the step's index.
func (s Steps) series(name string, value func(Step) int64) memplot.Series {
	out := memplot.Series{Name: name, Step: true}
	for i, st := range s {
		out.X = append(out.X, float64(i))
		out.Y = append(out.Y, value(st))
	}
	return out
}

// Labels returns the steps' labels.
func (s Steps) Labels() []string {
	out := make([]string, len(s))
	for i, st := range s {
		out[i] = st.Label
	}
	return out
}

// Plot draws the steps as a memory curve — allocated, reserved and
// driver-used — with each step's label on the x axis.
func (s Steps) Plot(title string) (*memplot.Figure, error) { return s.plot(title, true) }

// PlotAllocator is Plot without the driver's count, for steps whose
// allocator numbers are small beside the CUDA context.
func (s Steps) PlotAllocator(title string) (*memplot.Figure, error) { return s.plot(title, false) }

func (s Steps) plot(title string, driver bool) (*memplot.Figure, error) {
	if len(s) == 0 {
		return nil, errors.New("ch2: no steps to plot")
	}
	tl := s.Timeline()
	if !driver {
		for i := range tl.Samples {
			tl.Samples[i].DriverUsed = -1
		}
	}
	f, err := memplot.MemoryCurve(title, tl)
	if err != nil {
		return nil, err
	}
	f.LabelX(s.Labels()...)
	return f, nil
}

// bytesTensor allocates an uninitialised tensor of n bytes (torch.empty(n,
// dtype=torch.uint8)).
func bytesTensor(l *memlab.Lab, n int64) (*tensor.Tensor, error) {
	return tensor.Empty(l, tensor.Uint8, int(n))
}

// ReferenceDir returns PyTorch's ground truth shipped in the repository
// (reference/torch-2.11), or an error when it is missing.
func ReferenceDir() (string, error) { return reference.Dir(reference.Torch211) }
