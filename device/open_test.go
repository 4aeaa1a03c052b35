package device

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		spec    string
		want    Spec
		wantErr string
	}{
		{"", Spec{}, ""},
		{"auto", Spec{}, ""},
		{"cuda", Spec{Kind: CUDA}, ""},
		{"cuda:1", Spec{Kind: CUDA, Index: 1}, ""},
		{" CUDA:0 ", Spec{Kind: CUDA}, ""},
		{"sim", Spec{Kind: Simulated}, ""},
		{"sim:2", Spec{Kind: Simulated, Index: 2}, ""},
		{"sim:24GiB", Spec{Kind: Simulated, Capacity: 24 << 30}, ""},
		{"sim:1:512MiB", Spec{Kind: Simulated, Index: 1, Capacity: 512 << 20}, ""},
		{"gpu", Spec{}, `unknown kind "gpu"`},
		{"cuda:x", Spec{}, `device index "x"`},
		{"cuda:-1", Spec{}, `device index "-1"`},
		{"cuda:0:1", Spec{}, "cuda takes at most an index"},
		{"sim:lots", Spec{}, `capacity: units: size "lots": not a number`},
		{"sim:0GiB", Spec{}, "capacity 0"},
		{"sim:NaN", Spec{}, `size "NaN": not a number`},
		{"sim:+Inf", Spec{}, `size "+Inf": not a number`},
		{"sim:-1GiB", Spec{}, `size "-1GiB": negative`},
		{"sim:0.5", Spec{}, `size "0.5": not a whole number of bytes`},
		{"sim:1.5B", Spec{}, `size "1.5B": not a whole number of bytes`},
		{"sim:99999999999TiB", Spec{}, `size "99999999999TiB": too large`},
		{"sim:1.5GiB", Spec{Kind: Simulated, Capacity: 3 << 29}, ""},
		{"sim:1073741824", Spec{}, "device index 1073741824 is implausible; a capacity of 1073741824 bytes is written sim:0:1073741824"},
		{"sim:0:1073741824", Spec{Kind: Simulated, Capacity: 1 << 30}, ""},
		{"sim:65535", Spec{Kind: Simulated, Index: 65535}, ""},
		{"sim:a:1GiB", Spec{}, `device index "a"`},
		{"sim:0:1GiB:x", Spec{}, "at most an index and a capacity"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := ParseSpec(tt.spec)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), `"cuda:N"`) {
					t.Fatalf("ParseSpec(%q) error = %v, want one containing %q and the accepted forms", tt.spec, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseSpec(%q) = %+v, %v; want %+v", tt.spec, got, err, tt.want)
			}
		})
	}
}

func TestSpecStringRoundTrips(t *testing.T) {
	for _, s := range []Spec{{}, {Kind: CUDA, Index: 3}, {Kind: Simulated, Index: 1}, {Kind: Simulated, Capacity: 1 << 30}} {
		got, err := ParseSpec(s.String())
		if err != nil || got != s {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", s.String(), got, err, s)
		}
	}
}

// fakeDevice is a Device that only knows its name.
type fakeDevice struct {
	Device
	name string
}

func (f fakeDevice) String() string { return f.name }

// withBackends replaces the backend hooks for one test.
func withBackends(t *testing.T, cudaErr error) *[]string {
	t.Helper()
	oc, os, on := openCUDA, openSim, Notes
	t.Cleanup(func() { openCUDA, openSim, Notes = oc, os, on })
	var calls []string
	openCUDA = func(i int) (Device, error) {
		calls = append(calls, "cuda")
		if cudaErr != nil {
			return nil, cudaErr
		}
		return fakeDevice{name: "cuda:" + string(rune('0'+i))}, nil
	}
	openSim = func(i int, c uint64) (Device, error) {
		calls = append(calls, "sim")
		return fakeDevice{name: "sim:" + string(rune('0'+i))}, nil
	}
	return &calls
}

func TestOpenSelection(t *testing.T) {
	noDriver := errors.New("device/cuda: no CUDA driver: cannot load libcuda.so.1")
	tests := []struct {
		name       string
		spec, env  string
		cudaErr    error
		wantDevice string
		wantFrom   string
		wantReason string
		wantNote   bool
		wantErr    string
	}{
		{"auto picks the GPU", "", "", nil, "cuda:0", "auto", "a CUDA GPU answered", false, ""},
		{"auto falls back without a driver", "", "", noDriver, "sim:0", "auto", "no usable GPU (device/cuda: no CUDA driver", true, ""},
		{"env selects sim", "", "sim:1", nil, "sim:1", EnvVar, "requested", false, ""},
		{"argument beats env", "cuda:1", "sim", nil, "cuda:1", "argument", "requested", false, ""},
		{"explicit cuda without driver fails", "cuda", "", noDriver, "", "", "", false, "no CUDA driver"},
		{"bad env names the variable", "", "tpu", nil, "", "", "", false, "(from MEMLAB_DEVICE)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withBackends(t, tt.cudaErr)
			t.Setenv(EnvVar, tt.env)
			var note bytes.Buffer
			Notes = &note
			d, sel, err := OpenSelect(tt.spec)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("OpenSelect(%q) error = %v, want %q", tt.spec, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.String() != tt.wantDevice || sel.Device != tt.wantDevice || sel.From != tt.wantFrom || !strings.Contains(sel.Reason, tt.wantReason) {
				t.Errorf("got %s, selection %+v; want %s from %s, reason containing %q", d, sel, tt.wantDevice, tt.wantFrom, tt.wantReason)
			}
			if got := note.Len() > 0; got != tt.wantNote {
				t.Errorf("note written = %v (%q), want %v", got, note.String(), tt.wantNote)
			}
			if tt.wantNote && (strings.Count(note.String(), "\n") != 1 || !strings.HasPrefix(note.String(), "memlab: ")) {
				t.Errorf("note %q is not one line starting memlab:", note.String())
			}
		})
	}
}

func TestOpenRecordsLastSelection(t *testing.T) {
	withBackends(t, errors.New("no GPU"))
	Notes = nil
	if _, err := Open("sim:1"); err != nil {
		t.Fatal(err)
	}
	if got := LastSelection(); got.Device != "sim:1" || got.From != "argument" {
		t.Errorf("LastSelection() = %+v", got)
	}
}

// TestOpenExplicitCUDAWithoutDriver uses the real CUDA backend: where there is
// no driver (CI), asking for cuda must fail with a clear error, not crash.
func TestOpenExplicitCUDAWithoutDriver(t *testing.T) {
	if openCUDA == nil {
		t.Skip("no CUDA backend linked")
	}
	d, err := Open("cuda")
	if err == nil {
		d.Close()
		t.Skip("a CUDA GPU is present")
	}
	if !strings.Contains(err.Error(), "device/cuda: no CUDA driver") {
		t.Fatalf("Open(cuda) error = %v, want a no-driver error", err)
	}
}
