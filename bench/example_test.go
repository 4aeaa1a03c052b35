package bench_test

import (
	"os"
	"time"

	"memlab.dev/memlab/bench"
)

func ExampleReport_WriteTable() {
	r := &bench.Report{
		Device: "cuda:0", Name: "NVIDIA H200", Torch: "2.11.0 on NVIDIA H200",
		Date: time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC),
		Rows: []bench.Row{{Key: "copy_f32", Name: "copy f32", Unit: "GB/s", Memlab: 3900, Torch: 4000,
			MemlabSpread: [2]float64{3850, 3920}, TorchSpread: [2]float64{3990, 4010},
			Goal: "≥ 90% of 4196 GB/s", Met: "yes", Check: "rel. err 0.0e+00 ≤ 0e+00"}},
	}
	r.WriteTable(os.Stdout)
	// Output:
	// memlab bench on cuda:0 (NVIDIA H200), 2026-11-29 09:00 UTC
	// PyTorch: 2.11.0 on NVIDIA H200
	//
	// Kernel figures: median of the timed samples; spread: slowest–fastest sample, memlab / PyTorch.
	//
	// | figure | memlab | PyTorch | memlab vs PyTorch | spread | goal | met | check |
	// |---|---:|---:|---:|---|---|---|---|
	// | copy f32 | 3900 GB/s | 4000 GB/s | 0.97× | 3850–3920 / 3990–4010 | ≥ 90% of 4196 GB/s | yes | rel. err 0.0e+00 ≤ 0e+00 |
}
