package sim_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/device"
	"memlab.dev/memlab/device/sim"
)

// The simulated device satisfies every contract it is used through.
var (
	_ device.Device           = (*sim.Device)(nil)
	_ allocator.Memory        = (*sim.Device)(nil)
	_ allocator.VirtualMemory = (*sim.Device)(nil)
)

const (
	MiB  = 1 << 20
	GiB  = 1 << 30
	page = sim.Granularity
)

func newDevice(t *testing.T, cfg sim.Config) *sim.Device {
	t.Helper()
	d, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func memInfo(t *testing.T, d *sim.Device) (free, total uint64) {
	t.Helper()
	free, total, err := d.MemGetInfo()
	if err != nil {
		t.Fatal(err)
	}
	return free, total
}

func TestNewDefaults(t *testing.T) {
	d := newDevice(t, sim.Config{})
	if got, want := sim.Kind, device.Simulated; got != want {
		t.Errorf("sim.Kind = %q, device.Simulated = %q", got, want)
	}
	if d.String() != "sim:0" || d.Kind() != device.Simulated || d.Index() != 0 {
		t.Errorf("String %q Kind %q Index %d", d.String(), d.Kind(), d.Index())
	}
	if got, want := d.Name(), "memlab simulated GPU (80 GiB)"; got != want {
		t.Errorf("Name = %q, want %q", got, want)
	}
	free, total := memInfo(t, d)
	if total != 80*GiB || free != 80*GiB-512*MiB {
		t.Errorf("MemGetInfo = %d free of %d, want %d of %d", free, total, uint64(80*GiB-512*MiB), uint64(80*GiB))
	}
	if d.Granularity() != 2*MiB {
		t.Errorf("Granularity = %d", d.Granularity())
	}
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name      string
		cfg       sim.Config
		wantFree  uint64
		wantTotal uint64
		wantErr   string
	}{
		{"small device gets an eighth as context", sim.Config{Capacity: 256 * MiB}, 224 * MiB, 256 * MiB, ""},
		{"explicit overhead", sim.Config{Capacity: 24 * GiB, ContextOverhead: GiB}, 23 * GiB, 24 * GiB, ""},
		{"no context", sim.Config{Capacity: 8 * GiB, NoContext: true}, 8 * GiB, 8 * GiB, ""},
		{"H200 preset", sim.H200(), 150_100_000_000&^(MiB-1) - 1_500_000_000, 150_100_000_000 &^ (MiB - 1), ""},
		{"overhead fills the device", sim.Config{Capacity: GiB, ContextOverhead: GiB}, 0, 0, "leaves nothing"},
		{"capacity below a page", sim.Config{Capacity: MiB}, 0, 0, "less than one"},
		{"negative latency", sim.Config{FreeLatency: -time.Second}, 0, 0, "negative latency"},
		{"negative index", sim.Config{Index: -1}, 0, 0, "negative device index"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := sim.New(tc.cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(err.Error(), "sim: ") {
					t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			free, total := memInfo(t, d)
			if free != tc.wantFree || total != tc.wantTotal {
				t.Errorf("MemGetInfo = %d free of %d, want %d of %d", free, total, tc.wantFree, tc.wantTotal)
			}
		})
	}
}

func TestMallocRoundsToPagesAndReusesAddresses(t *testing.T) {
	d := newDevice(t, sim.Config{Capacity: 64 * MiB, NoContext: true})
	steps := []struct {
		malloc   uint64 // 0: free the address of step free
		free     int
		wantAddr uint64
		wantFree uint64
	}{
		{malloc: 1, wantAddr: sim.BaseAddress, wantFree: 62 * MiB},
		{malloc: 3 * MiB, wantAddr: sim.BaseAddress + 2*MiB, wantFree: 58 * MiB},
		{malloc: 2 * MiB, wantAddr: sim.BaseAddress + 6*MiB, wantFree: 56 * MiB},
		{free: 1, wantFree: 60 * MiB},
		{malloc: 2 * MiB, wantAddr: sim.BaseAddress + 2*MiB, wantFree: 58 * MiB}, // first fit in the hole
		{malloc: 4 * MiB, wantAddr: sim.BaseAddress + 8*MiB, wantFree: 54 * MiB}, // the 2 MiB left is too small
		{malloc: 2 * MiB, wantAddr: sim.BaseAddress + 4*MiB, wantFree: 52 * MiB},
	}
	addrs := map[int]uint64{}
	for i, s := range steps {
		if s.malloc > 0 {
			a, err := d.Malloc(s.malloc)
			if err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			if a != s.wantAddr {
				t.Errorf("step %d: Malloc(%d) = %#x, want %#x", i, s.malloc, a, s.wantAddr)
			}
			addrs[i] = a
		} else if err := d.Free(addrs[s.free]); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if free, _ := memInfo(t, d); free != s.wantFree {
			t.Errorf("step %d: free = %d MiB, want %d MiB", i, free/MiB, s.wantFree/MiB)
		}
	}
	st := d.Stats()
	if st.Mallocs != 6 || st.Frees != 1 || st.Allocated != 12*MiB || st.Peak != 12*MiB {
		t.Errorf("stats %+v", st)
	}
}

func TestAddressesAreDeterministic(t *testing.T) {
	run := func() []uint64 {
		d := newDevice(t, sim.Config{})
		var out []uint64
		var live []uint64
		for i := range 40 {
			a, err := d.Malloc(uint64(i%7+1) * 3 * MiB)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, a)
			live = append(live, a)
			if i%3 == 2 {
				if err := d.Free(live[i/2]); err != nil {
					t.Fatal(err)
				}
			}
		}
		return out
	}
	a, b := run(), run()
	for i := range a {
		if a[i] != b[i] || a[i]%(2*MiB) != 0 {
			t.Fatalf("call %d: %#x then %#x (must be equal and 2 MiB aligned)", i, a[i], b[i])
		}
	}
}

func TestOutOfMemory(t *testing.T) {
	d := newDevice(t, sim.Config{Capacity: 64 * MiB, ContextOverhead: 8 * MiB})
	if _, err := d.Malloc(40 * MiB); err != nil {
		t.Fatal(err)
	}
	_, err := d.Malloc(17 * MiB) // 18 MiB after rounding, 16 MiB free
	var oom interface{ OutOfMemory() bool }
	if !errors.As(err, &oom) || !oom.OutOfMemory() {
		t.Fatalf("got %v, want an error with OutOfMemory() == true", err)
	}
	var e *sim.OutOfMemoryError
	if !errors.As(err, &e) || e.Op != "Malloc" || e.Size != 18*MiB || e.Free != 16*MiB || e.Total != 64*MiB {
		t.Errorf("got %#v", e)
	}
	if want := "sim: Malloc(18874368): CUDA_ERROR_OUT_OF_MEMORY: out of memory (16 MiB free of 64 MiB)"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if free, _ := memInfo(t, d); free != 16*MiB {
		t.Errorf("a failed Malloc changed free memory to %d", free)
	}
	if _, err := d.Malloc(16 * MiB); err != nil {
		t.Errorf("the last 16 MiB: %v", err)
	}
	if st := d.Stats(); st.OutOfMemory != 1 || st.Mallocs != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestMallocAndFreeErrors(t *testing.T) {
	d := newDevice(t, sim.Config{})
	a, err := d.Malloc(4 * MiB)
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.ReserveAddress(4 * MiB)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		run  func() error
	}{
		{"Malloc(0)", func() error { _, err := d.Malloc(0); return err }},
		{"unknown address", func() error { return d.Free(0x1234) }},
		{"interior address", func() error { return d.Free(a + 2*MiB) }},
		{"a reservation", func() error { return d.Free(r) }},
		{"double free", func() error {
			if err := d.Free(a); err != nil {
				return nil // the first Free must work; make the test fail below
			}
			return d.Free(a)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.run(); !errors.Is(err, sim.ErrInvalidValue) || !strings.HasPrefix(err.Error(), "sim: ") {
				t.Errorf("got %v, want a sim: error wrapping ErrInvalidValue", err)
			}
		})
	}
}
