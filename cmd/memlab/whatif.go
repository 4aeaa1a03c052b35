package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/internal/gunzip"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/snapshot"
	"memlab.dev/memlab/whatif"

	"gonum.org/v1/plot/vg"
)

func init() {
	register(command{
		name:    "whatif",
		summary: "replay a PyTorch memory snapshot under other allocator settings: peaks, cudaMallocs, OOMs",
		run:     runWhatif,
	})
}

const whatifUsage = `usage: memlab whatif SNAPSHOT.pickle... [--conf CONF]... [--fraction F | --cap BYTES] [--json FILE|-] [--plot FILE.png|.svg]
       memlab whatif SNAPSHOT.pickle --sweep [--fraction F | --cap BYTES]
       memlab whatif SNAPSHOT.pickle --min-cap [--conf CONF]...

SNAPSHOT.pickle is written by torch.cuda.memory._dump_snapshot() after
torch.cuda.memory._record_memory_history(); a gzip-compressed one (snapshot.pickle.gz,
recognised by its first bytes, not its name) is read too, decompressed in memory: one
whose pickle is larger than --max-snapshot-size (default 4GiB, the largest pickle
memlab reads) is refused at that size (a small .gz can expand to gigabytes). Its
allocation history is replayed, on the recorded streams, under each --conf (PYTORCH_CUDA_ALLOC_CONF syntax; "" is PyTorch's
defaults; none: the snapshot's own settings), and one row per configuration is printed.
--sweep tries max_split_size_mb, roundup_power2_divisions, expandable_segments (and,
under a cap, garbage_collection_threshold) and lists the settings with the lowest peak
reserved (ranked by the driver model's placement: its rows say they carry no address
range), then replays the first --advise of them (default 3) again with their ranges,
beside the snapshot's own setting, and ends with advice as below; --min-cap finds, per configuration, the smallest cap at which no placement of
the device allocations tried runs out, beside the model placement's own.
A figure that depends on where the driver places device allocations carries its range
over placements, replayed on every core until it stops widening, within --range-time
per configuration (the output says how many were tried and whether it converged).
Several snapshots (one per rank of a job on several GPUs) are replayed at once, on
every core, each under the same settings: one table per rank, then the worst rank
per configuration (--json writes them all; --plot, --sweep and --min-cap take one).
No output overwrites a snapshot, and an output's folder must exist; --json - writes
the JSON alone on stdout and the table on stderr.

With several settings the output ends with advice (JSON: "advice"): the setting that
lowers peak reserved most without an OOM, judged on the high end of each figure's
range against the recorded run's setting (marked "(recorded run)" in the table), what
it saves and what it costs in cudaMalloc calls and retries. Several ranks: each
setting judged on its worst rank, ranked by the high end of its range; the summary
names each rank's file and lists the files of the ranks that run out.

The output starts with a header: the snapshot, the PyTorch its keys show, the device
size assumed (--total), the events, streams and private pools. Under a cap (--cap,
--fraction) or a garbage_collection_threshold, a note says whether they engaged.
Allocations of private pools (CUDA graphs, torch.compile's reduce-overhead, a
torch.cuda.MemPool) go to their pool under every setting; PyTorch 2.11 records no pool
in its trace entries, so the pool is inferred, and the output says how.

Exit status: 0 when every replay ran without an out-of-memory error, 3 when a
replay predicts one (the table and the first OOM's message say where; --sweep
and --min-cap exit 0 when they found an answer), 1 when the snapshot could not be
read or replayed, 2 for a usage error.
`

// plotWidth is the width of --plot's figure: room for the curves beside the key.
const plotWidth = 11 * vg.Inch

// exitOOM is the exit status of a replay that predicts an out-of-memory error.
const exitOOM = 3

// confList is the repeatable --conf flag.
type confList []string

func (c *confList) String() string     { return strings.Join(*c, " ") }
func (c *confList) Set(s string) error { *c = append(*c, s); return nil }

func runWhatif(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("whatif", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var confs confList
	fs.Var(&confs, "conf", "allocator configuration to replay under (repeatable)")
	fraction := fs.String("fraction", "", "cap reserved memory at this fraction of the device (set_per_process_memory_fraction)")
	capFlag := fs.String("cap", "", "cap reserved memory at this many bytes (or with a unit: 20GiB)")
	jsonOut := fs.String("json", "", "write the runs as JSON to this file (- for stdout)")
	plot := fs.String("plot", "", "draw reserved and allocated memory per configuration to this .png or .svg")
	sweep := fs.Bool("sweep", false, "search the settings for the lowest peak reserved")
	minCap := fs.Bool("min-cap", false, "find the smallest cap on reserved memory that does not OOM, per configuration")
	total := fs.String("total", "", "the device's memory (default the H200's 150109880320 bytes)")
	top := fs.Int("top", 10, "rows --sweep prints")
	advise := fs.Int("advise", 3, "settings --sweep replays again with their ranges, beside the snapshot's own, for its advice (0: no advice)")
	maxSize := fs.String("max-snapshot-size", "4GiB", "refuse a gzip-compressed snapshot (.pickle.gz) whose pickle is larger than this once decompressed (a gzip bomb); 4GiB is the largest pickle memlab reads")
	rangeTime := fs.Duration("range-time", whatif.DefaultRangeBudget, "time one setting's address range may take: its placements stop when the range converges, or when this runs out (the output says which)")
	keepGoing := fs.Bool("keep-going", false, "replay on after an allocation fails that the recorded run made (by default a replay stops there, as the program would have)")
	fs.Usage = func() {
		fmt.Fprint(stderr, whatifUsage)
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return helpOr2(err)
	}
	// --json - writes JSON alone on stdout: the table goes to stderr.
	table := stdout
	if *jsonOut == "-" {
		table = stderr
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "memlab whatif: "+format+"\n", a...)
		return 2
	}
	if len(pos) == 0 {
		fs.Usage()
		return fail("give one snapshot file, or one per rank")
	}
	if *rangeTime <= 0 {
		return fail("--range-time %v: want a positive duration (1m, 30s)", *rangeTime)
	}
	opts := whatif.Options{ContinueAfterOOM: *keepGoing, RangeBudget: *rangeTime}
	if n, err := parseBytes(*maxSize); err != nil || n == 0 || n > snapshot.DefaultMaxSize+1 {
		return fail("--max-snapshot-size %q: want a size in bytes or with a unit, at most 4GiB (the largest pickle memlab reads)", *maxSize)
	} else {
		opts.MaxSnapshotSize = int64(min(n, snapshot.DefaultMaxSize))
	}
	if *total != "" {
		n, err := parseBytes(*total)
		if err != nil {
			return fail("--total: %v", err)
		}
		opts.TotalMemory = int64(n)
	}
	var base whatif.Setting
	if *fraction != "" && *capFlag != "" {
		return fail("give --fraction or --cap, not both")
	}
	if *fraction != "" {
		f, err := strconv.ParseFloat(*fraction, 64)
		if err != nil || !(f > 0 && f <= 1) {
			return fail("--fraction %q: want a number in (0, 1]", *fraction)
		}
		base.Fraction = f
	}
	if *capFlag != "" {
		n, err := parseBytes(*capFlag)
		if err != nil {
			return fail("--cap: %v", err)
		}
		base.Cap = int64(n)
	}
	if *advise < 0 {
		return fail("--advise %d: give 0 (no advice) or more settings", *advise)
	}
	if *sweep && *minCap {
		return fail("give --sweep or --min-cap, not both")
	}
	if *sweep && len(confs) > 0 {
		return fail("--sweep searches the settings itself; drop --conf")
	}
	if *plot != "" {
		if ext := strings.ToLower(filepath.Ext(*plot)); ext != ".png" && ext != ".svg" {
			return fail("--plot %q: want a .png or .svg file", *plot)
		}
	}
	if err := checkOutputs(pos, output{"--json", *jsonOut}, output{"--plot", *plot}); err != nil {
		return fail("%v", err)
	}
	lim, limited, err := memoryLimit(pos, opts.MaxSnapshotSize)
	if err != nil {
		fmt.Fprintf(stderr, "memlab whatif: %v\n", sizeHint(err))
		return 1
	}
	if limited {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(lim))
	}
	if len(pos) > 1 {
		switch {
		case *sweep || *minCap || *plot != "":
			return fail("--sweep, --min-cap and --plot take one snapshot, got %d", len(pos))
		case len(confs) == 0 && (base.Cap > 0 || base.Fraction > 0):
			return fail(`with several snapshots, --cap and --fraction need --conf ("" for PyTorch's defaults)`)
		}
		return whatifRanks(pos, confs, base, opts, *jsonOut, table, stdout, stderr)
	}
	s, err := snapshot.ReadFileMax(pos[0], opts.MaxSnapshotSize)
	if err != nil {
		fmt.Fprintf(stderr, "memlab whatif: %v\n", sizeHint(err))
		return 1
	}
	if limited {
		raiseMemoryLimit()
	}
	settings, err := whatif.ParseSettings(confs...)
	if err != nil {
		return fail("%v", err)
	}
	if len(settings) == 0 {
		own, err := whatif.SnapshotSetting(s)
		if err != nil {
			fmt.Fprintf(stderr, "memlab whatif: %v\n", err)
			return 1
		}
		settings = []whatif.Setting{own}
	}
	for i := range settings {
		settings[i].Fraction, settings[i].Cap = base.Fraction, base.Cap
	}
	if *minCap {
		for _, st := range settings {
			c, err := whatif.MinCapRange(s, st, opts)
			if err != nil {
				fmt.Fprintf(stderr, "memlab whatif: %v\n", err)
				return 1
			}
			conv := "converged"
			if !c.Converged {
				conv = "not converged"
			}
			fmt.Fprintf(table, "%s: smallest cap without OOM %s (%d bytes): no OOM in any of %d placements of the device allocations tried (%s); with the driver model's placement alone %s (%d bytes)\n",
				st.Label(), allocator.FormatSize(c.Cap), c.Cap, c.Placements, conv, allocator.FormatSize(c.ModelCap), c.ModelCap)
		}
		return 0
	}
	var res, checked *whatif.Result
	if *sweep {
		if base.Conf, err = allocator.ParseConfig(""); err != nil {
			return fail("%v", err)
		}
		runs, err := whatif.Sweep(s, base, opts)
		if err != nil {
			fmt.Fprintf(stderr, "memlab whatif: %v\n", err)
			return 1
		}
		fmt.Fprintf(table, "%s: %s\n\n", pos[0], whatif.Describe(s, opts))
		fmt.Fprintf(table, "%d settings without OOM; lowest peak reserved first:\n\n", len(runs))
		if len(runs) > *top && *top > 0 {
			runs = runs[:*top]
		}
		res = &whatif.Result{Runs: runs, About: whatif.Describe(s, opts)}
		if *advise > 0 {
			if checked, err = whatif.SweepAdvice(s, runs, base, *advise, opts); err != nil {
				fmt.Fprintf(stderr, "memlab whatif: %v\n", err)
				return 1
			}
		}
	} else {
		var own *whatif.Setting
		if o, err := whatif.SnapshotSetting(s); err == nil {
			own = &o
		}
		// Nothing reads s after Replay, so its trace (some 120 bytes an entry)
		// is garbage while the settings replay from their own compact histories
		// (issue 28: resident at most 3× the file).
		res, err = whatif.Replay(s, settings, opts)
		if err != nil {
			fmt.Fprintf(stderr, "memlab whatif: %v\n", err)
			return 1
		}
		if len(settings) > 1 {
			res.Advise(own)
		}
		fmt.Fprintf(table, "%s: %s\n\n", pos[0], res.About)
	}
	if err := res.WriteTable(table); err != nil {
		fmt.Fprintf(stderr, "memlab whatif: %v\n", err)
		return 1
	}
	if checked != nil {
		fmt.Fprintf(table, "\nThe sweep's first settings again, with their ranges over placements, beside the snapshot's own setting (--advise %d):\n\n", *advise)
		if err := checked.WriteTable(table); err != nil {
			fmt.Fprintf(stderr, "memlab whatif: %v\n", err)
			return 1
		}
		res.Advice = checked.Advice
	}
	if *jsonOut != "" {
		w, err := create(*jsonOut, stdout)
		if err == nil {
			err = errors.Join(res.WriteJSON(w), w.Close())
		}
		if err != nil {
			fmt.Fprintf(stderr, "memlab whatif: --json: %v\n", err)
			return 1
		}
	}
	if *plot != "" {
		f, err := memplot.Compare("What if: "+filepath.Base(pos[0]), res)
		if err == nil {
			// a file read on its own: wider than a notebook's figure, and sharp
			f.Width, f.DPI = plotWidth, 192
			err = f.Save(*plot)
		}
		if err != nil {
			fmt.Fprintf(stderr, "memlab whatif: --plot: %v\n", err)
			return 1
		}
		fmt.Fprintf(table, "wrote %s\n", *plot)
	}
	if !*sweep && predictsOOM(res.Runs) {
		return exitOOM
	}
	return 0
}

// predictsOOM reports whether an allocation failed in any of the runs.
func predictsOOM(runs []whatif.Run) bool {
	for i := range runs {
		if runs[i].FirstOOM != nil {
			return true
		}
	}
	return false
}

// whatifRanks replays several ranks' snapshots (whatif.Files) and prints each and the
// worst to table; --json - writes to stdout.
func whatifRanks(paths []string, confs []string, base whatif.Setting, opts whatif.Options, jsonOut string, table, stdout, stderr io.Writer) int {
	settings, err := whatif.ParseSettings(confs...)
	if err != nil {
		fmt.Fprintf(stderr, "memlab whatif: %v\n", err)
		return 2
	}
	for i := range settings {
		settings[i].Fraction, settings[i].Cap = base.Fraction, base.Cap
	}
	ranks, err := whatif.Files(paths, settings, opts)
	if err != nil {
		fmt.Fprintf(stderr, "memlab whatif: %v\n", sizeHint(err))
		return 1
	}
	if err := ranks.WriteTable(table); err != nil {
		fmt.Fprintf(stderr, "memlab whatif: %v\n", err)
		return 1
	}
	if jsonOut != "" {
		w, err := create(jsonOut, stdout)
		if err == nil {
			err = errors.Join(ranks.WriteJSON(w), w.Close())
		}
		if err != nil {
			fmt.Fprintf(stderr, "memlab whatif: --json: %v\n", err)
			return 1
		}
	}
	for _, r := range ranks {
		if predictsOOM(r.Result.Runs) {
			return exitOOM
		}
	}
	return 0
}

// memoryLimit is the Go runtime's soft memory limit for replaying the snapshots at
// paths: 2.25× the size of their pickles, at least 128 MiB (a gzip-compressed
// one's pickle is decoded from a temporary file, as a plain one from the file:
// snapshot.ReadFileMax); ok is false when GOMEMLIMIT sets one. What is live at the peak (the converted trace
// beside what the decoder still holds, then beside the replay's prepared history)
// is about 1.6× the pickle for a snapshot with stack frames; without a limit the
// collector lets the heap grow to twice what is live (BENCHMARKS.md, "Big
// snapshots", has the figures). A gzip file's pickle is measured by decompressing
// it once, counting (snapshot.PickleSize: its trailer's size is only a hint);
// one larger than maxSize is the error reading it would give, found before any
// of it is kept. A path that is not a regular file (a FIFO, <(…)) has no size before it
// is read: then no limit is set (ok false); reading it is bounded by maxSize.
func memoryLimit(paths []string, maxSize int64) (limit int64, ok bool, err error) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return 0, false, nil
	}
	var total int64
	for _, p := range paths {
		n, gz, err := snapshot.PickleSize(p, maxSize)
		if errors.Is(err, snapshot.ErrNotRegular) {
			return 0, false, nil // a stream's size is unknown until it is read: no limit
		}
		if err != nil {
			if gz {
				return 0, false, err
			}
			continue // reading it says what is wrong
		}
		total += n * 9 / 4
	}
	return max(total, 128<<20), true, nil
}

// sizeHint adds to the error of a gzip-compressed snapshot larger than a bound
// below the largest the flag that raises it.
func sizeHint(err error) error {
	var tl *gunzip.TooLargeError
	if errors.As(err, &tl) && tl.Limit < snapshot.DefaultMaxSize {
		return fmt.Errorf("%w; --max-snapshot-size raises the bound", err)
	}
	return err
}

// raiseMemoryLimit raises the soft memory limit, once a snapshot is read, to 1.75×
// the heap live at the last collection when that is above it: a snapshot whose
// entries take fewer bytes of pickle (no stack frames) holds more per byte of file,
// and a limit near what is live would make the collector run without end.
func raiseMemoryLimit() {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	if want := int64(sample[0].Value.Uint64()) * 7 / 4; want > debug.SetMemoryLimit(-1) {
		debug.SetMemoryLimit(want)
	}
}
