package sim_test

import (
	"testing"
	"time"

	"memlab.dev/memlab/device/sim"
)

func TestH200Latency(t *testing.T) {
	tests := []struct {
		size uint64
		want time.Duration
	}{
		{512, 74 * time.Microsecond},
		{1 << 20, 74 * time.Microsecond},
		{20 << 20, 86 * time.Microsecond},
		{256 << 20, 218 * time.Microsecond},
		{(1<<20 + 20<<20) / 2, 80 * time.Microsecond},    // halfway between the 1 and 20 MiB anchors
		{(20<<20 + 256<<20) / 2, 152 * time.Microsecond}, // halfway between 20 and 256 MiB
		{492 << 20, 350 * time.Microsecond},              // extrapolated along the last segment
	}
	for _, tc := range tests {
		if got := sim.H200Latency(tc.size); got != tc.want {
			t.Errorf("H200Latency(%d) = %v, want %v", tc.size, got, tc.want)
		}
	}
}

func TestModelledLatencyIsCounted(t *testing.T) {
	tests := []struct {
		name           string
		cfg            sim.Config
		wantMalloc     time.Duration // per 20 MiB Malloc
		wantFree       time.Duration
		wantMap, wantU time.Duration // per 2 MiB Map and Unmap
	}{
		{"no latency by default", sim.Config{NoWait: true}, 0, 0, 0, 0},
		{"explicit", sim.Config{MallocLatency: time.Millisecond, FreeLatency: 2 * time.Millisecond, NoWait: true}, time.Millisecond, 2 * time.Millisecond, time.Millisecond, 2 * time.Millisecond},
		{"H200 model charges half the pair to each call", sim.Config{ModelLatency: true, NoWait: true}, 43 * time.Microsecond, 43 * time.Microsecond, sim.H200Latency(page) / 2, sim.H200Latency(page) / 2},
		{"explicit wins over the model", sim.Config{ModelLatency: true, MallocLatency: time.Second, NoWait: true}, time.Second, 43 * time.Microsecond, time.Second, sim.H200Latency(page) / 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newDevice(t, tc.cfg)
			for range 3 {
				a, err := d.Malloc(20 * MiB)
				if err != nil {
					t.Fatal(err)
				}
				if err := d.Free(a); err != nil {
					t.Fatal(err)
				}
			}
			r, err := d.ReserveAddress(page)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Map(r, page); err != nil {
				t.Fatal(err)
			}
			if err := d.Unmap(r, page); err != nil {
				t.Fatal(err)
			}
			st := d.Stats()
			if st.Mallocs != 3 || st.Frees != 3 || st.MallocTime != 3*tc.wantMalloc || st.FreeTime != 3*tc.wantFree || st.MapTime != tc.wantMap || st.UnmapTime != tc.wantU {
				t.Errorf("stats %+v", st)
			}
			if got, want := st.DriverTime(), 3*tc.wantMalloc+3*tc.wantFree+tc.wantMap+tc.wantU; got != want {
				t.Errorf("DriverTime = %v, want %v", got, want)
			}
			d.ResetStats()
			if st := d.Stats(); st.Mallocs != 0 || st.DriverTime() != 0 {
				t.Errorf("after ResetStats: %+v", st)
			}
		})
	}
}

// TestLatencyIsSpent checks only a lower bound: the call cannot return before
// its latency has passed.
func TestLatencyIsSpent(t *testing.T) {
	d := newDevice(t, sim.Config{MallocLatency: 3 * time.Millisecond})
	start := time.Now()
	if _, err := d.Malloc(1); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 3*time.Millisecond {
		t.Errorf("Malloc returned after %v, before its 3ms latency", el)
	}
}
