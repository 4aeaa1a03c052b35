package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"memlab.dev/memlab/bench"
	"memlab.dev/memlab/device"
)

func init() {
	register(command{
		name:    "bench",
		summary: "measure allocator and kernels on a device, beside PyTorch on a GPU",
		run:     runBench,
	})
}

// maxIters bounds -iters: each sample is bench.Reps runs of every kernel, so more
// than this would run for hours and hold the samples of each in memory.
const maxIters = 10000

// runBench is "memlab bench [-device SPEC] [-torch torch_bench.py] [-json FILE] [-quick] [-iters N]".
func runBench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	spec := fs.String("device", "", `device to measure: "cuda", "cuda:N", "sim", ... (default: $MEMLAB_DEVICE, else automatic)`)
	torch := fs.String("torch", "", "path of bench/torch_bench.py, to measure PyTorch on the same GPU (empty: skip)")
	python := fs.String("python", "python3", "Python interpreter that has PyTorch")
	jsonOut := fs.String("json", "", "also write the report as JSON to this file")
	quick := fs.Bool("quick", false, "small problems and few runs (always on for the simulated device)")
	iters := fs.Int("iters", 0, "timed samples per kernel (each of bench.Reps runs); the median is reported (default 20)")
	if err := fs.Parse(args); err != nil {
		return helpOr2(err)
	}
	if *iters < 0 || *iters > maxIters {
		fmt.Fprintf(stderr, "memlab bench: -iters %d: want 1 to %d timed samples per kernel (0: the default)\n", *iters, maxIters)
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "memlab bench: unexpected arguments %q\n", fs.Args())
		return 2
	}
	dev, err := device.Open(*spec)
	if err != nil {
		fmt.Fprintf(stderr, "memlab bench: %v\n", err)
		return 1
	}
	defer dev.Close()
	sim := dev.Kind() != device.CUDA
	rep, err := bench.Run(bench.Options{
		Device: dev, Quick: *quick || sim, Iters: *iters, Torch: *torch, Python: *python, Log: stderr,
	})
	if err != nil {
		fmt.Fprintf(stderr, "memlab bench: %v\n", err)
		return 1
	}
	rep.WriteTable(stdout)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(*jsonOut, b, 0o644); err != nil {
			fmt.Fprintf(stderr, "memlab bench: %v\n", err)
			return 1
		}
	}
	return 0
}
