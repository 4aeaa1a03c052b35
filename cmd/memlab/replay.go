package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"memlab.dev/memlab/replay"
	"memlab.dev/memlab/snapshot"
	"memlab.dev/memlab/units"
)

func init() {
	register(command{
		name:    "replay",
		summary: "replay an allocation trace through the caching allocator; --check compares with PyTorch",
		run:     runReplay,
	})
}

const replayUsage = `usage: memlab replay --trace FILE [--out STATE.jsonl [--full]] [--summary SUMMARY.txt] [--conf STR] [--capacity BYTES] [--viz SNAPSHOT.json|.pickle]
       memlab replay --check FILE [--conf STR]

FILE is a ground-truth file written by shared/tools/replay_torch.py (.jsonl or
.jsonl.gz; device allocations get the addresses the GPU gave them) or a bare JSON
op list such as [["a",1048576],["f",0],["e"]] (addresses from a simulated device).

--out writes one short line per op, whatever the number of segments; with --full
each line holds the whole allocator state instead (every statistic, segment and
block, as replay_torch.py records it), so lines grow with the segments and a
long trace can fill a disk.

--check replays FILE and compares every op with the recorded PyTorch state and the
final summary with FILE's .summary.txt; it prints the matched ops and the first
difference, and exits 1 on any difference.
`

func runReplay(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	trace := fs.String("trace", "", "trace to replay")
	check := fs.String("check", "", "ground-truth file to replay and compare")
	out := fs.String("out", "", "write one JSON line per op to this file (- for stdout): memory allocated and reserved, the segment count and the segments made and freed; --full writes the whole state")
	full := fs.Bool("full", false, "with --out, write the whole state after each op (every statistic, segment and block: lines grow with the segments)")
	summary := fs.String("summary", "", "write the final memory summary to this file (- for stdout)")
	conf := fs.String("conf", "", "allocator configuration in PYTORCH_CUDA_ALLOC_CONF syntax (overrides the trace's)")
	viz := fs.String("viz", "", "write a memory_viz snapshot with the event history at the end (.pickle: PyTorch's pickle, else JSON); open it at pytorch.org/memory_viz")
	capacity := fs.String("capacity", "", "simulated device size for bare op lists, in bytes or with a unit (80GiB); default the H200's 150109880320")
	maxSize := fs.String("max-trace-size", "256MiB", "refuse a trace larger than this once decompressed (a gzip bomb)")
	fs.Usage = func() {
		fmt.Fprint(stderr, replayUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return helpOr2(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "memlab replay: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *full && *out == "" {
		fmt.Fprintln(stderr, "memlab replay: --full needs --out")
		return 2
	}
	if (*trace == "") == (*check == "") {
		fmt.Fprintln(stderr, "memlab replay: give exactly one of --trace FILE or --check FILE")
		fs.Usage()
		return 2
	}
	var opts replay.Options
	confSet := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "conf" {
			confSet = true
		}
	})
	if confSet {
		opts.Conf = conf
	}
	if *capacity != "" {
		c, err := parseBytes(*capacity)
		if err != nil {
			fmt.Fprintf(stderr, "memlab replay: --capacity: %v\n", err)
			return 2
		}
		opts.Capacity = c
	}
	limit, err := parseBytes(*maxSize)
	if err != nil {
		fmt.Fprintf(stderr, "memlab replay: --max-trace-size: %v\n", err)
		return 2
	}
	if *check != "" {
		return runCheck(*check, opts, int64(limit), stdout, stderr)
	}
	if *viz != "" {
		opts.History = 1000000
	}
	if err := checkOutputs([]string{*trace, summaryBeside(*trace)},
		output{"--out", *out}, output{"--summary", *summary}, output{"--viz", *viz}); err != nil {
		fmt.Fprintf(stderr, "memlab replay: %v\n", err)
		return 2
	}

	t, err := replay.ReadFileMax(*trace, int64(limit))
	if err != nil {
		fmt.Fprintf(stderr, "memlab replay: %v\n", err)
		return 1
	}
	var w *bufio.Writer
	var closeOut func() error
	if *out != "" {
		f, err := create(*out, stdout)
		if err != nil {
			fmt.Fprintf(stderr, "memlab replay: --out: %v\n", err)
			return 1
		}
		w = bufio.NewWriterSize(f, 1<<16)
		closeOut = f.Close
		var werr error
		opts.States = func(s replay.State) {
			if werr != nil {
				return
			}
			var v any = s
			if !*full {
				v = compact(s)
			}
			b, err := json.Marshal(v)
			if err != nil {
				werr = err
				return
			}
			b = append(b, '\n')
			_, werr = w.Write(b)
		}
		defer func() {
			if werr != nil {
				fmt.Fprintf(stderr, "memlab replay: --out: %v\n", werr)
			}
		}()
	}
	res, err := replay.Run(t, opts)
	if err != nil {
		fmt.Fprintf(stderr, "memlab replay: %v\n", err)
		return 1
	}
	if w != nil {
		if err := w.Flush(); err != nil {
			fmt.Fprintf(stderr, "memlab replay: --out: %v\n", err)
			return 1
		}
		if err := closeOut(); err != nil {
			fmt.Fprintf(stderr, "memlab replay: --out: %v\n", err)
			return 1
		}
	}
	if *summary != "" {
		f, err := create(*summary, stdout)
		if err != nil {
			fmt.Fprintf(stderr, "memlab replay: --summary: %v\n", err)
			return 1
		}
		if _, err := io.WriteString(f, res.Summary); err != nil {
			fmt.Fprintf(stderr, "memlab replay: --summary: %v\n", err)
			return 1
		}
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "memlab replay: --summary: %v\n", err)
			return 1
		}
	}
	a := res.Allocator
	if *viz != "" {
		if err := writeViz(*viz, res); err != nil {
			fmt.Fprintf(stderr, "memlab replay: --viz: %v\n", err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "memlab replay: %d ops, %d OOMs; allocated %s, reserved %s (peaks %s / %s)\n",
		res.Ops, res.OOMs, units.FormatBytes(a.MemoryAllocated()), units.FormatBytes(a.MemoryReserved()),
		units.FormatBytes(a.MaxMemoryAllocated()), units.FormatBytes(a.MaxMemoryReserved()))
	return 0
}

// summaryBeside is the X.summary.txt that replay.ReadFile reads beside X.jsonl.gz.
func summaryBeside(path string) string {
	base := path
	for _, ext := range []string{".gz", ".jsonl", ".json"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base + ".summary.txt"
}

func runCheck(path string, opts replay.Options, limit int64, stdout, stderr io.Writer) int {
	t, err := replay.ReadFileMax(path, limit)
	if err != nil {
		fmt.Fprintf(stderr, "memlab replay: %v\n", err)
		return 1
	}
	if !t.GroundTruth() {
		fmt.Fprintf(stderr, "memlab replay: --check: %s is a bare op list, not ground truth\n", path)
		return 2
	}
	res, err := replay.Check(t, opts)
	if err != nil {
		fmt.Fprintf(stderr, "memlab replay: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %d/%d ops matched\n", path, res.Matched, res.Ops)
	if res.GuessedAddresses > 0 {
		fmt.Fprintf(stdout, "note: %d device allocations had no recorded address\n", res.GuessedAddresses)
	}
	if !res.OK() {
		fmt.Fprintf(stdout, "first difference: %s\n", res.Diff)
		return 1
	}
	if res.SummaryChecked {
		fmt.Fprintln(stdout, "summary: byte-identical")
	} else {
		fmt.Fprintln(stdout, "summary: not checked (no .summary.txt beside the trace)")
	}
	return 0
}

func writeViz(path string, res *replay.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	snap := res.Allocator.Snapshot()
	if strings.HasSuffix(path, ".pickle") || strings.HasSuffix(path, ".pkl") {
		err = snapshot.Write(f, snap)
	} else {
		err = snap.WriteMemoryVizJSON(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// parseBytes reads a positive byte size for a flag (units.ParseBytes: "80GiB",
// "1073741824"); sizes the allocator cannot hold (above 2^63-1) are refused.
func parseBytes(s string) (uint64, error) {
	n, err := units.ParseBytes(s)
	switch {
	case err != nil:
		return 0, err
	case n == 0:
		return 0, fmt.Errorf("size %q is 0: it must be positive", s)
	case n > math.MaxInt64:
		return 0, fmt.Errorf("size %q is more than 2^63-1 bytes", s)
	}
	return n, nil
}

type nopCloser struct{ io.Writer }

// Close does nothing: stdout stays open.
func (nopCloser) Close() error { return nil }

// create opens path for writing; "-" is stdout.
func create(path string, stdout io.Writer) (io.WriteCloser, error) {
	if path == "-" {
		return nopCloser{stdout}, nil
	}
	return os.Create(path)
}

// compactState is one --out line without --full: the op, its result, the
// memory figures and what changed in the segments, not the whole state.
type compactState struct {
	Kind               string      `json:"kind"`
	I                  int         `json:"i"`
	Op                 replay.Op   `json:"op"`
	ID                 *int        `json:"id,omitempty"`
	Ptr                *uint64     `json:"ptr,omitempty"`
	MemoryAllocated    *int64      `json:"memory_allocated,omitempty"`
	MemoryReserved     *int64      `json:"memory_reserved,omitempty"`
	MaxMemoryAllocated *int64      `json:"max_memory_allocated,omitempty"`
	MaxMemoryReserved  *int64      `json:"max_memory_reserved,omitempty"`
	Segments           int         `json:"segments"`
	NewSegs            [][2]uint64 `json:"new_segs,omitempty"`
	GoneSegs           [][2]uint64 `json:"gone_segs,omitempty"`
	OOM                bool        `json:"oom,omitempty"`
	Msg                string      `json:"msg,omitempty"`
	Noop               bool        `json:"noop,omitempty"`
}

func compact(s replay.State) compactState {
	return compactState{
		Kind: s.Kind, I: s.I, Op: s.Op, ID: s.ID, Ptr: s.Ptr,
		MemoryAllocated: s.MemoryAllocated, MemoryReserved: s.MemoryReserved,
		MaxMemoryAllocated: s.MaxMemoryAllocated, MaxMemoryReserved: s.MaxMemoryReserved,
		Segments: len(s.SegSizes), NewSegs: s.NewSegs, GoneSegs: s.GoneSegs,
		OOM: s.OOM, Msg: s.Msg, Noop: s.Noop,
	}
}
