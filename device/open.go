package device

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"memlab.dev/memlab/units"
)

// EnvVar is the environment variable Open reads when given an empty spec.
const EnvVar = "MEMLAB_DEVICE"

// Spec is a parsed device specification.
type Spec struct {
	// Kind is CUDA, Simulated, or "" for automatic selection.
	Kind string
	// Index is the device ordinal.
	Index int
	// Capacity is the simulated device's memory in bytes; 0 means its default.
	Capacity uint64
}

// String formats s back into the syntax ParseSpec accepts.
func (s Spec) String() string {
	switch {
	case s.Kind == "":
		return "auto"
	case s.Kind == Simulated && s.Capacity != 0:
		return fmt.Sprintf("sim:%d:%d", s.Index, s.Capacity)
	}
	return fmt.Sprintf("%s:%d", s.Kind, s.Index)
}

// maxSimIndex bounds the index of a simulated device, so that a capacity
// written without a unit ("sim:1073741824") is not read as an index.
const maxSimIndex = 1<<16 - 1

const specForms = `"auto", "cuda", "cuda:N", "sim", "sim:N", "sim:CAPACITY" or "sim:N:CAPACITY" (CAPACITY such as 24GiB)`

// ParseSpec parses a device specification: "auto" (or ""), "cuda", "cuda:N",
// "sim", "sim:N", "sim:24GiB" or "sim:N:24GiB". Capacities are byte sizes
// as units.ParseBytes reads them (24GiB, 512MiB, 80GB, 1073741824); a bare
// number after "sim:" is an index, so a capacity without a unit needs the
// index before it ("sim:0:1073741824"), and an index above 65535 is refused as
// a capacity written without one.
func ParseSpec(spec string) (Spec, error) {
	orig := strings.TrimSpace(spec)
	s := strings.ToLower(orig)
	bad := func(why string) (Spec, error) {
		return Spec{}, fmt.Errorf("device: bad device %q: %s; want %s", spec, why, specForms)
	}
	if s == "" || s == "auto" {
		return Spec{}, nil
	}
	parts := strings.Split(s, ":")
	origParts := strings.Split(orig, ":")
	var out Spec
	switch parts[0] {
	case CUDA:
		out.Kind = CUDA
		switch len(parts) {
		case 1:
		case 2:
			n, err := strconv.Atoi(parts[1])
			if err != nil || n < 0 {
				return bad(fmt.Sprintf("device index %q is not a non-negative integer", parts[1]))
			}
			out.Index = n
		default:
			return bad("cuda takes at most an index")
		}
	case Simulated:
		out.Kind = Simulated
		rest := origParts[1:]
		if len(rest) > 2 {
			return bad("sim takes at most an index and a capacity")
		}
		if len(rest) > 0 {
			if n, err := strconv.Atoi(rest[0]); err == nil {
				if n < 0 {
					return bad("negative device index")
				}
				if n > maxSimIndex {
					return bad(fmt.Sprintf("device index %d is implausible; a capacity of %d bytes is written sim:0:%d (or with a unit, such as sim:24GiB)", n, n, n))
				}
				out.Index = n
				rest = rest[1:]
			} else if len(rest) == 2 {
				return bad(fmt.Sprintf("device index %q is not a non-negative integer", rest[0]))
			}
		}
		if len(rest) == 1 {
			c, err := units.ParseBytes(rest[0])
			if err != nil {
				return bad("capacity: " + err.Error())
			}
			if c == 0 {
				return bad("capacity 0")
			}
			out.Capacity = c
		}
	default:
		return bad(fmt.Sprintf("unknown kind %q", parts[0]))
	}
	return out, nil
}

// Selection records how Open chose a device.
type Selection struct {
	// Requested is the spec given to Open, or the value of MEMLAB_DEVICE when
	// that was empty; "" means automatic selection.
	Requested string
	// From says where the request came from: "argument", EnvVar, or "auto".
	From string
	// Device names the device opened, such as "cuda:0" or "sim:0".
	Device string
	// Reason explains the choice in one line, such as why the simulated
	// device was chosen when no GPU could be used.
	Reason string
}

// Backends open devices; package device leaves them to the backend packages
// (device/cuda, device/sim) through these hooks, which tests may replace.
var (
	openCUDA func(index int) (Device, error)
	openSim  func(index int, capacity uint64) (Device, error)
)

// Notes receives the one-line note Open writes when automatic selection falls
// back to the simulated device although a GPU was looked for. Set it to
// io.Discard to silence it; LastSelection reports the same reason.
var Notes io.Writer = os.Stderr

var (
	lastMu  sync.Mutex
	lastSel Selection
)

// LastSelection returns how the most recent successful Open chose its device.
func LastSelection() Selection {
	lastMu.Lock()
	defer lastMu.Unlock()
	return lastSel
}

// Open opens the device spec names (see ParseSpec). An empty spec reads
// MEMLAB_DEVICE, and when that is empty too selects automatically: the first
// CUDA GPU when a driver and a GPU answer and memlab's kernels load, otherwise
// the simulated device, with a one-line note on Notes saying why. An explicit
// "cuda" that cannot be opened is an error, never a silent fallback.
func Open(spec string) (Device, error) {
	d, sel, err := OpenSelect(spec)
	if err != nil {
		return nil, err
	}
	lastMu.Lock()
	lastSel = sel
	lastMu.Unlock()
	return d, nil
}

// OpenSelect is Open that also returns how the device was chosen.
func OpenSelect(spec string) (Device, Selection, error) {
	sel := Selection{Requested: spec, From: "argument"}
	if strings.TrimSpace(spec) == "" {
		sel.Requested, sel.From = os.Getenv(EnvVar), EnvVar
		if strings.TrimSpace(sel.Requested) == "" {
			sel.From = "auto"
		}
	}
	s, err := ParseSpec(sel.Requested)
	if err != nil {
		if sel.From == EnvVar {
			err = fmt.Errorf("%w (from %s)", err, EnvVar)
		}
		return nil, sel, err
	}
	switch s.Kind {
	case CUDA:
		if openCUDA == nil {
			return nil, sel, errors.New("device: this binary has no CUDA backend")
		}
		d, err := openCUDA(s.Index)
		if err != nil {
			return nil, sel, fmt.Errorf("device: open %q: %w", sel.Requested, err)
		}
		sel.Device, sel.Reason = d.String(), "requested"
		return d, sel, nil
	case Simulated:
		d, err := openSimulated(s)
		if err != nil {
			return nil, sel, fmt.Errorf("device: open %q: %w", sel.Requested, err)
		}
		sel.Device, sel.Reason = d.String(), "requested"
		return d, sel, nil
	}
	// Automatic: a GPU if one answers, else the simulator.
	var why string
	if openCUDA == nil {
		why = "this binary has no CUDA backend"
	} else if d, err := openCUDA(0); err == nil {
		sel.Device, sel.Reason = d.String(), "a CUDA GPU answered"
		return d, sel, nil
	} else {
		why = err.Error()
	}
	d, err := openSimulated(s)
	if err != nil {
		return nil, sel, err
	}
	sel.Device = d.String()
	sel.Reason = "no usable GPU (" + why + "); using the simulated device"
	if Notes != nil {
		fmt.Fprintf(Notes, "memlab: %s\n", sel.Reason)
	}
	return d, sel, nil
}

func openSimulated(s Spec) (Device, error) {
	if openSim == nil {
		return nil, errors.New("device: this binary has no simulated device")
	}
	return openSim(s.Index, s.Capacity)
}
