package bench

import (
	"bytes"
	"strings"
	"testing"

	"memlab.dev/memlab/device/sim"
)

// TestRunSimulated runs every benchmark on the simulated device, as CI does,
// and checks that the report covers every figure without judging goals.
func TestRunSimulated(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every kernel")
	}
	d, err := sim.New(sim.Config{Capacity: 8 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rep, err := Run(Options{Device: d, Quick: true, Iters: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Simulated {
		t.Error("report of the simulated device is not marked simulated")
	}
	want := []string{"alloc_raw_512B", "alloc_cached_256MiB", "copy_f32", "relu__bf16", "add_f32", "transpose_f32", "layernorm_f32", "softmax_f32", "matmul_f32", "matmul_bf16"}
	keys := map[string]Row{}
	for _, r := range rep.Rows {
		keys[r.Key] = r
		if r.Met != "" {
			t.Errorf("%s: goal judged (%q) on the simulated device", r.Key, r.Met)
		}
	}
	for _, k := range want {
		r, ok := keys[k]
		if !ok {
			t.Errorf("no row %s", k)
			continue
		}
		if r.Memlab <= 0 && r.Unit != "TFLOP/s" {
			t.Errorf("%s: figure %v", k, r.Memlab)
		}
	}
	var buf bytes.Buffer
	rep.WriteTable(&buf)
	if !strings.Contains(buf.String(), "SIMULATED DEVICE") {
		t.Error("table does not say the figures are simulated")
	}
}

func TestRowRatio(t *testing.T) {
	tests := []struct {
		r    Row
		want float64
	}{
		{Row{Unit: "GB/s", Memlab: 3000, Torch: 1500}, 2},
		{Row{Unit: "µs", Memlab: 0.5, Torch: 2.5}, 5},
		{Row{Unit: "GB/s", Memlab: 3000}, 0},
	}
	for _, tt := range tests {
		if got := tt.r.Ratio(); got != tt.want {
			t.Errorf("%+v.Ratio() = %v, want %v", tt.r, got, tt.want)
		}
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {nil, 0}}
	for _, tt := range tests {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestLastJSON(t *testing.T) {
	out := []byte("warming up\n{\"torch\": \"2.11\"}\n")
	if got := string(lastJSON(out)); got != `{"torch": "2.11"}` {
		t.Errorf("lastJSON = %q", got)
	}
}
