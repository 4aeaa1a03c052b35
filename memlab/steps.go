package memlab

import (
	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memplot/plotdata"
)

// Step is a lab's memory state after one step of an experiment.
type Step struct {
	Label string
	// Allocated and Reserved are MemoryAllocated and MemoryReserved.
	Allocated, Reserved int64
	// DriverUsed is total − free bytes on the device, as nvidia-smi shows it
	// (−1 when the driver could not be asked).
	DriverUsed int64
	// DeviceAllocs is num_device_alloc: cudaMalloc calls so far.
	DeviceAllocs int64
	// Err is the step's error text (an out-of-memory message), if it failed.
	Err string
}

// Outcome is what the step's request came to: "served", or "failed: " and
// the error (see [Outcome] for an error at hand).
func (s Step) Outcome() string {
	if s.Err == "" {
		return "served"
	}
	return "failed: " + s.Err
}

// Steps records a lab's memory after each step of an experiment, for a
// table (one row a step) and a memory curve (one point a step):
//
//	steps := l.Steps()
//	x := memlab.Must(tensor.Empty(l, tensor.Uint8, 256<<20))
//	steps.Add("x = empty(256 MiB)")
//	steps.Table().Show()
type Steps struct {
	lab  *Lab
	List []Step
}

// Steps starts a record of the lab's memory, step by step.
func (l *Lab) Steps() *Steps { return &Steps{lab: l} }

// Add records the lab's state now under label.
func (s *Steps) Add(label string) Step { return s.AddErr(label, nil) }

// AddErr records the lab's state under label with the error the step
// returned (an out-of-memory error, typically), and returns the step.
func (s *Steps) AddErr(label string, err error) Step {
	used, uerr := s.lab.DriverUsed()
	if uerr != nil {
		used = -1
	}
	st := Step{
		Label: label, Allocated: s.lab.MemoryAllocated(), Reserved: s.lab.MemoryReserved(),
		DriverUsed: used, DeviceAllocs: s.lab.MemoryStats()["num_device_alloc"],
	}
	if err != nil {
		st.Err = err.Error()
	}
	s.List = append(s.List, st)
	return st
}

// Last returns the last step recorded (the zero Step if none).
func (s *Steps) Last() Step {
	if len(s.List) == 0 {
		return Step{}
	}
	return s.List[len(s.List)-1]
}

// Find returns the first step with the given label.
func (s *Steps) Find(label string) (Step, bool) {
	for _, st := range s.List {
		if st.Label == label {
			return st, true
		}
	}
	return Step{}, false
}

// MaxReserved is the largest reserved memory of the steps (0 if none).
func (s *Steps) MaxReserved() int64 {
	var m int64
	for _, st := range s.List {
		m = max(m, st.Reserved)
	}
	return m
}

// Labels returns the steps' labels.
func (s *Steps) Labels() []string {
	out := make([]string, len(s.List))
	for i, st := range s.List {
		out[i] = st.Label
	}
	return out
}

// Table is the steps as a table in PyTorch's units, with the driver's count
// and cudaMalloc calls; a failed step shows its error.
func (s *Steps) Table() *Table {
	t := NewTable("step", "allocated", "reserved", "driver-used", "cudaMalloc calls", "error")
	for _, st := range s.List {
		used := "?"
		if st.DriverUsed >= 0 {
			used = FormatBytes(st.DriverUsed)
		}
		t.Row(st.Label, FormatBytes(st.Allocated), FormatBytes(st.Reserved), used, st.DeviceAllocs, st.Err)
	}
	return t
}

// Timeline is the steps as a memory curve, one point a step, each labelled
// with its step's label: memlab.Show(memplot.Curve("…", steps)) draws it.
func (s *Steps) Timeline() plotdata.Timeline {
	tl := plotdata.Timeline{XLabel: lang.Text("step"), Discrete: true, Labels: s.Labels()}
	for i, st := range s.List {
		tl.Samples = append(tl.Samples, plotdata.Sample{X: float64(i), Allocated: st.Allocated, Reserved: st.Reserved, DriverUsed: st.DriverUsed})
	}
	return tl
}

// Series is one value of every step as a staircase for memplot.Lines.
func (s *Steps) Series(name string, value func(Step) int64) plotdata.Series {
	out := plotdata.Series{Name: name, Step: true}
	for i, st := range s.List {
		out.X = append(out.X, float64(i))
		out.Y = append(out.Y, value(st))
	}
	return out
}
