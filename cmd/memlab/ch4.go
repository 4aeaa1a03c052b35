package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"memlab.dev/memlab/experiments/ch4"
	"memlab.dev/memlab/experiments/ch4/ch4plot"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/model"
)

func init() {
	register(command{
		name:    "ch4",
		summary: "run section 4.4: the transformer's baseline vs optimised inference, at a size, on a device",
		run:     runCh4,
	})
}

// runCh4 runs ch4.Inference and prints its table; with -plots it also writes
// the figures.
func runCh4(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ch4", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dev := fs.String("device", "", `device spec: "" (MEMLAB_DEVICE, else a GPU if present, else the simulator), "sim", "cuda", "cuda:1"`)
	var sizes []string
	for _, s := range model.Sizes {
		sizes = append(sizes, s.Name)
	}
	size := fs.String("size", "small", "model and workload size: "+strings.Join(sizes, ", "))
	modes := fs.String("modes", "", "comma-separated modes to compare, the first the reference (default: baseline and each optimisation, then all)")
	plots := fs.String("plots", "", "directory to write the figures to (PNG); empty for none")
	record := fs.String("record", "", "file to save the run to (JSON, with the command, date and card), as experiments/ch4/recorded holds them; empty for none")
	recorded := fs.Bool("recorded", false, "print the GPU runs recorded in experiments/ch4/recorded, with their findings, and exit")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: memlab ch4 [-device spec] [-size name] [-modes list] [-plots dir] [-record file.json] | -recorded")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return helpOr2(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "memlab ch4: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *recorded {
		runs, err := ch4.LoadRecorded()
		if err != nil {
			fmt.Fprintf(stderr, "memlab ch4: %v\n", err)
			return 1
		}
		fmt.Fprint(stdout, runs)
		return 0
	}
	var ms []model.Mode
	if *modes != "" {
		for _, name := range strings.Split(*modes, ",") {
			m, err := model.ParseMode(strings.TrimSpace(name))
			if err != nil {
				fmt.Fprintf(stderr, "memlab ch4: -modes: %v\n", err)
				return 2
			}
			ms = append(ms, m)
		}
	}
	if _, err := model.SizeByName(*size); err != nil {
		fmt.Fprintf(stderr, "memlab ch4: -size: %v\n", err)
		return 2
	}
	r, err := ch4.Inference(ch4.Setup{Device: *dev}, *size, ms...)
	if err != nil {
		fmt.Fprintf(stderr, "memlab ch4: %v\n", err)
		return 1
	}
	if *record != "" {
		// The command that made it, without where it was saved.
		cmd := []string{"memlab", "ch4"}
		fs.Visit(func(f *flag.Flag) {
			if f.Name != "record" && f.Name != "plots" {
				cmd = append(cmd, "-"+f.Name, f.Value.String())
			}
		})
		rec := ch4.NewRecording(strings.Join(cmd, " "), r)
		data, err := rec.Marshal()
		if err == nil {
			err = os.WriteFile(*record, data, 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "memlab ch4: -record: %v\n", err)
			return 1
		}
		fmt.Fprintln(stdout, rec.Header())
		if note := rec.Note(); note != "" {
			fmt.Fprintln(stdout, note)
		}
	}
	fmt.Fprint(stdout, r)
	fmt.Fprint(stdout, r.Findings())
	if *record != "" {
		fmt.Fprintf(stdout, "recorded: %s\n", *record)
	}
	if *plots == "" {
		return 0
	}
	for name, plot := range map[string]func(ch4.InferenceResult) (*memplot.Figure, error){
		"memory": ch4plot.Inference, "latency": ch4plot.Latency, "curves": ch4plot.InferenceCurves,
	} {
		f, err := plot(r)
		if err == nil {
			path := filepath.Join(*plots, fmt.Sprintf("4.4-%s-%s.png", *size, name))
			if err = f.Save(path); err == nil {
				fmt.Fprintf(stdout, "figure: %s\n", path)
				continue
			}
		}
		fmt.Fprintf(stderr, "memlab ch4: %s figure: %v\n", name, err)
		return 1
	}
	return 0
}
