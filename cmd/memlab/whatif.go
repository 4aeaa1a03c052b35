package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
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
       memlab whatif SNAPSHOT.pickle --min-cap [--conf CONF]... [--json FILE|-]

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
range), one row per result (settings with the same figures share the row of the one with
the fewest options; a line names the others, --json their "same_figures_as"), names
the settings whose replay stopped (--json "stopped_settings"): those that run out of
memory where the recorded run did not and, of a program that ran out and went on,
those that serve a request it failed, which the snapshot cannot follow; then it replays
the first --advise of them (default 3; and as many that serve a failed request) again
with their ranges, beside the snapshot's own setting, and ends with advice as below;
--min-cap finds, per configuration, the smallest cap at which no placement of the
device allocations tried, and no GPU timing of the frees that waited for other streams
(or of DDP's gradient buckets), runs out (where the recorded run did not), beside the
model placement's own at the snapshot's timing (--json: "min_cap", one entry a setting).
A figure that depends on where the driver places device allocations carries its range
over placements, replayed on every core until it stops widening, within --range-time
per configuration (the output says how many were tried and whether it converged); one
that depends on when frees that waited for other streams complete, or on when DDP's
gradient buckets are let go of (their stack frames name DDP's Reducer), carries its
range over timings of them ([low, high]; --json "timing_range").
Several snapshots (one per rank of a job on several GPUs) are replayed at once, on
every core, each under the same settings: one table per rank, then the worst rank
per configuration (--json writes them all; --plot, --sweep and --min-cap take one).
No output overwrites a snapshot, and an output's folder must exist; --json - writes
the JSON alone on stdout and the table on stderr.

With several settings the output ends with advice (JSON: "advice"): the setting that
lowers peak reserved most without an OOM, judged on the high end of each figure's
range against the recorded run's setting (marked "(recorded run)" in the table), what
it saves and what it costs in cudaMalloc calls (under expandable segments, mappings
of pages, which the cudaMalloc column counts as PyTorch's num_device_alloc does) and
retries. Several ranks: each
setting judged on its worst rank, ranked by the high end of its range; the summary
names each rank's file and lists the files of the ranks that run out.

The output starts with a header: the snapshot, the PyTorch its keys show, the device
size assumed (--total), the events, streams and private pools, and, for a snapshot whose
run ran out of device memory, what its OOM says the run could get there (its reserved
memory and the driver's free bytes then); the replay's device holds the least such figure
less one 2 MiB page, which the driver may take for itself later in the run, and up to an
earlier OOM that said more, what that one said. Under a cap (--cap,
--fraction) or a garbage_collection_threshold, a note says whether they engaged.
Allocations of private pools (CUDA graphs, torch.compile's reduce-overhead, a
torch.cuda.MemPool) go to their pool under every setting; PyTorch 2.11 records no pool
in its trace entries, so the pool is inferred, and the output says how. Under
torch.backends.cudnn.benchmark, PyTorch empties the cache inside convolutions and,
where a benchmark's workspace does not fit, catches the OOM and asks for half as
much: the replay does both, and a warning says that cuDNN's timing picks the
workspaces, so another run can request other sizes.

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

// whatifRequest is a checked `memlab whatif` command line.
type whatifRequest struct {
	paths          []string // the snapshots: one, or one per rank
	confs          []string // --conf, as given
	base           whatif.Setting
	opts           whatif.Options
	jsonOut, plot  string
	sweep, minCap  bool
	top, advise    int
	table, stdout  io.Writer // table is stderr when --json - takes stdout
	stderr         io.Writer
	memLimit       int64 // the soft memory limit to set while replaying (0: none)
	limitFromFiles bool  // memLimit is from the files' sizes (not GOMEMLIMIT)
}

func runWhatif(args []string, stdout, stderr io.Writer) int {
	req, code := parseWhatif(args, stdout, stderr)
	if req == nil {
		return code
	}
	if req.limitFromFiles {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(req.memLimit))
	}
	if len(req.paths) > 1 {
		return whatifRanks(req.paths, req.confs, req.base, req.opts, req.jsonOut, req.table, stdout, stderr)
	}
	s, err := snapshot.ReadFileMax(req.paths[0], req.opts.MaxSnapshotSize)
	if err != nil {
		return req.failed("%v", sizeHint(err))
	}
	if req.limitFromFiles {
		raiseMemoryLimit()
	}
	settings, err := whatif.ParseSettings(req.confs...)
	if err != nil {
		return req.usage("%v", err)
	}
	if len(settings) == 0 {
		own, err := whatif.SnapshotSetting(s)
		if err != nil {
			return req.failed("%v", err)
		}
		settings = []whatif.Setting{own}
	}
	for i := range settings {
		settings[i].Fraction, settings[i].Cap = req.base.Fraction, req.base.Cap
	}
	if req.minCap {
		return req.minCaps(s, settings)
	}
	var res, checked *whatif.Result
	if req.sweep {
		res, checked, err = req.sweepSettings(s)
	} else {
		res, err = req.replay(s, settings)
	}
	if err != nil {
		return req.failed("%v", err)
	}
	return req.report(res, checked)
}

// parseWhatif reads and checks the command line; a nil request comes with the
// exit status (2: a usage error, 0: -help, 1: a snapshot too large to read).
func parseWhatif(args []string, stdout, stderr io.Writer) (*whatifRequest, int) {
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
	total := fs.String("total", "", "the device's memory, as torch.cuda.mem_get_info() gives its total (default the H200's 150109880320 bytes); the replay keeps 694 MiB of it back for CUDA's context and libraries unless the snapshot's OOMs say what was usable")
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
		return nil, helpOr2(err)
	}
	req := &whatifRequest{paths: pos, confs: confs, jsonOut: *jsonOut, plot: *plot, sweep: *sweep, minCap: *minCap,
		top: *top, advise: *advise, table: stdout, stdout: stdout, stderr: stderr,
		opts: whatif.Options{ContinueAfterOOM: *keepGoing, RangeBudget: *rangeTime}}
	// --json - writes JSON alone on stdout: the table goes to stderr.
	if *jsonOut == "-" {
		req.table = stderr
	}
	fail := func(format string, a ...any) (*whatifRequest, int) { return nil, req.usage(format, a...) }
	if len(pos) == 0 {
		fs.Usage()
		return fail("give one snapshot file, or one per rank")
	}
	if *rangeTime <= 0 {
		return fail("--range-time %v: want a positive duration (1m, 30s)", *rangeTime)
	}
	if n, err := parseBytes(*maxSize); err != nil || n == 0 || n > snapshot.DefaultMaxSize+1 {
		return fail("--max-snapshot-size %q: want a size in bytes or with a unit, at most 4GiB (the largest pickle memlab reads)", *maxSize)
	} else {
		req.opts.MaxSnapshotSize = int64(min(n, snapshot.DefaultMaxSize))
	}
	if *total != "" {
		n, err := parseBytes(*total)
		if err != nil {
			return fail("--total: %v", err)
		}
		req.opts.TotalMemory = int64(n)
	}
	if *fraction != "" && *capFlag != "" {
		return fail("give --fraction or --cap, not both")
	}
	if *fraction != "" {
		f, err := strconv.ParseFloat(*fraction, 64)
		if err != nil || !(f > 0 && f <= 1) {
			return fail("--fraction %q: want a number in (0, 1]", *fraction)
		}
		req.base.Fraction = f
	}
	if *capFlag != "" {
		n, err := parseBytes(*capFlag)
		if err != nil {
			return fail("--cap: %v", err)
		}
		req.base.Cap = int64(n)
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
	if *minCap && (*fraction != "" || *capFlag != "") {
		return fail("--min-cap finds the cap itself; drop --cap and --fraction")
	}
	if *minCap && *plot != "" {
		return fail("--min-cap draws nothing; drop --plot (replay under --cap to draw a capped run)")
	}
	if *plot != "" {
		if ext := strings.ToLower(filepath.Ext(*plot)); ext != ".png" && ext != ".svg" {
			return fail("--plot %q: want a .png or .svg file", *plot)
		}
	}
	if err := checkOutputs(pos, output{"--json", *jsonOut}, output{"--plot", *plot}); err != nil {
		return fail("%v", err)
	}
	if len(pos) > 1 {
		switch {
		case *sweep || *minCap || *plot != "":
			return fail("--sweep, --min-cap and --plot take one snapshot, got %d", len(pos))
		case len(confs) == 0 && (req.base.Cap > 0 || req.base.Fraction > 0):
			return fail(`with several snapshots, --cap and --fraction need --conf ("" for PyTorch's defaults)`)
		}
	}
	if req.memLimit, req.limitFromFiles, err = memoryLimit(pos, req.opts.MaxSnapshotSize); err != nil {
		return nil, req.failed("%v", sizeHint(err))
	}
	return req, 0
}

// usage says what is wrong with the command line and returns its exit status, 2.
func (req *whatifRequest) usage(format string, a ...any) int {
	fmt.Fprintf(req.stderr, "memlab whatif: "+format+"\n", a...)
	return 2
}

// failed says why the snapshot could not be read, replayed or reported, and
// returns its exit status, 1.
func (req *whatifRequest) failed(format string, a ...any) int {
	fmt.Fprintf(req.stderr, "memlab whatif: "+format+"\n", a...)
	return 1
}

// minCapJSON is one setting's entry of --min-cap in its --json (key "min_cap").
type minCapJSON struct {
	Conf string `json:"conf"`
	whatif.CapSearch
}

// minCaps prints, per setting, the smallest cap at which no placement or GPU timing
// tried runs out, and writes them to --json ({"snapshot", "min_cap": [...]}).
func (req *whatifRequest) minCaps(s *snapshot.Snapshot, settings []whatif.Setting) int {
	var found []minCapJSON
	for _, st := range settings {
		c, err := whatif.MinCapRange(s, st, req.opts)
		if err != nil {
			return req.failed("%v", err)
		}
		found = append(found, minCapJSON{st.Conf.String(), c})
		conv := "converged"
		if !c.Converged {
			conv = "not converged"
		}
		without, none, keeps := "without OOM", "no OOM", ""
		if c.RecordedOOMs > 0 {
			without, none = "without an OOM the recorded run did not have", "no such OOM"
			keeps = fmt.Sprintf("; under it the replay fails the %d requests the recorded run failed, as that run did", c.RecordedOOMs)
		}
		tried := fmt.Sprintf("in any of %d placements of the device allocations tried (%s)", c.Placements, conv)
		switch {
		case c.Placements <= 1 && st.Conf.ExpandableSegments:
			tried = "at the driver model's placement, the only one tried: " + whatif.MappedNoPlacement
		case c.Placements <= 1:
			tried = "at the driver model's placement, the only one tried"
		}
		alone := "with the driver model's placement alone"
		if c.Timings > 0 {
			tried += fmt.Sprintf(", nor in any of %d GPU timings of %s", c.Timings, timedFrees(c.CrossStreamFrees, c.HeldFrees))
			alone = "with the driver model's placement and the snapshot's GPU timing alone"
		}
		fmt.Fprintf(req.table, "%s: smallest cap %s %s (%d bytes): %s %s; %s %s (%d bytes)%s\n",
			st.Label(), without, allocator.FormatSize(c.Cap), c.Cap, none, tried, alone, allocator.FormatSize(c.ModelCap), c.ModelCap, keeps)
	}
	err := writeJSON(req.jsonOut, req.stdout, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Snapshot string       `json:"snapshot"`
			MinCap   []minCapJSON `json:"min_cap"`
		}{req.paths[0], found})
	})
	if err != nil {
		return req.failed("--json: %v", err)
	}
	return 0
}

// sweepSettings searches the settings (--sweep) and prints the header; checked is
// the first --advise of them replayed again with their ranges (nil for --advise 0).
func (req *whatifRequest) sweepSettings(s *snapshot.Snapshot) (res, checked *whatif.Result, err error) {
	base := req.base
	if base.Conf, err = allocator.ParseConfig(""); err != nil {
		return nil, nil, err
	}
	sw, err := whatif.Sweep(s, base, req.opts)
	if err != nil {
		return nil, nil, err
	}
	about := whatif.Describe(s, req.opts)
	fmt.Fprintf(req.table, "%s: %s\n\n", req.paths[0], about)
	results, through := sw.Entries()
	differ := fmt.Sprintf("%d different results", results)
	if results == 1 {
		differ = "1 result"
	}
	switch {
	case len(sw.Stopped) == 0 && sw.Runs[0].FirstOOM == nil:
		fmt.Fprintf(req.table, "%d settings without OOM, %s; lowest peak reserved first:\n\n", through, differ)
	case sw.Runs[0].FirstOOM == nil:
		fmt.Fprintf(req.table, "%d of %d settings without OOM, %s; lowest peak reserved first (the %d that stopped are named below the table):\n\n",
			through, sw.Tried, differ, len(sw.Stopped))
	default:
		verb := "run"
		if through == 1 {
			verb = "runs"
		}
		fmt.Fprintf(req.table, "%d of %d settings %s through, failing the requests the recorded run failed, as it did, and no other; %s, lowest peak reserved first (the %d that stopped are named below the table):\n\n",
			through, sw.Tried, verb, differ, len(sw.Stopped))
	}
	res = sw.Result(req.top, about)
	if req.advise > 0 {
		if checked, err = whatif.SweepAdvice(s, sw, base, req.advise, req.opts); err != nil {
			return nil, nil, err
		}
		checked.Warnings = nil // res has them
	}
	return res, checked, nil
}

// replay replays the snapshot under the settings, advises with several, and
// prints the header.
func (req *whatifRequest) replay(s *snapshot.Snapshot, settings []whatif.Setting) (*whatif.Result, error) {
	var own *whatif.Setting
	if o, err := whatif.SnapshotSetting(s); err == nil {
		own = &o
	}
	// Nothing reads s after Replay, so its trace (72 bytes an entry)
	// is garbage while the settings replay from their own compact histories
	// (issue 28: resident at most 3× the file).
	res, err := whatif.Replay(s, settings, req.opts)
	if err != nil {
		return nil, err
	}
	if len(settings) > 1 {
		res.Advise(own)
	}
	fmt.Fprintf(req.table, "%s: %s\n\n", req.paths[0], res.About)
	return res, nil
}

// report prints the table (and a sweep's checked settings), writes --json and
// --plot, and returns the exit status: exitOOM when a replay predicts an OOM.
func (req *whatifRequest) report(res, checked *whatif.Result) int {
	if err := res.WriteTable(req.table); err != nil {
		return req.failed("%v", err)
	}
	if checked != nil {
		fmt.Fprintf(req.table, "\nThe sweep's first settings again, with their ranges over placements, beside the snapshot's own setting (--advise %d):\n\n", req.advise)
		if err := checked.WriteTable(req.table); err != nil {
			return req.failed("%v", err)
		}
		res.Advice = checked.Advice
	}
	if err := writeJSON(req.jsonOut, req.stdout, res.WriteJSON); err != nil {
		return req.failed("--json: %v", err)
	}
	if req.plot != "" {
		f, err := memplot.Compare("What if: "+filepath.Base(req.paths[0]), res)
		if err == nil {
			// a file read on its own: wider than a notebook's figure, and sharp
			f.Width, f.DPI = plotWidth, 192
			err = f.Save(req.plot)
		}
		if err != nil {
			return req.failed("--plot: %v", err)
		}
		fmt.Fprintf(req.table, "wrote %s\n", req.plot)
	}
	if !req.sweep && predictsOOM(res.Runs) {
		return exitOOM
	}
	return 0
}

// writeJSON writes --json with write: to the file at path, or to stdout for "-";
// nothing for an empty path.
func writeJSON(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "" {
		return nil
	}
	w, err := create(path, stdout)
	if err != nil {
		return err
	}
	return errors.Join(write(w), w.Close())
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
	if err := writeJSON(jsonOut, stdout, ranks.WriteJSON); err != nil {
		fmt.Fprintf(stderr, "memlab whatif: --json: %v\n", err)
		return 1
	}
	for _, r := range ranks {
		if predictsOOM(r.Result.Runs) {
			return exitOOM
		}
	}
	return 0
}

// limitPerPickleByte is memlab whatif's soft memory limit per byte of pickle: a
// real 82 MiB training snapshot with Python stacks (962,734 entries) peaked at
// 2.0–2.1× its file resident with it, on 2 cores and on 16 (BENCHMARKS.md); on the
// 2-core machine a one-setting what-if took the same time as under 2.25 (2.0 s),
// on the H200's host 1.8–1.9 s against 1.4–1.6 s before this limit and the
// collection raiseMemoryLimit runs (the two not timed apart). raiseMemoryLimit
// lifts it where a snapshot holds more.
const limitPerPickleByte = 2

// memoryLimit is the Go runtime's soft memory limit for replaying the snapshots at
// paths: limitPerPickleByte × the size of their pickles, at least 128 MiB (a
// gzip-compressed one's pickle is decoded from a temporary file, as a plain one
// from the file: snapshot.ReadFileMax); ok is false when GOMEMLIMIT sets one. What
// is live at the peak (the converted trace beside what the decoder still holds,
// then beside the replay's prepared history) is about 1.6× the pickle for a real
// snapshot with stack frames; without a limit the collector lets the heap grow to
// twice what is live (BENCHMARKS.md, "Big snapshots", has the figures). A gzip file's pickle is measured by decompressing
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
		total += n * limitPerPickleByte
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
// the heap live then when that is above it: a snapshot whose entries take fewer
// bytes of pickle (no stack frames) holds more per byte of file, and a limit near
// what is live would make the collector run without end. It collects first: the
// last collection ran while the decoder's tables were still live, and a limit
// raised from them would let the replay's heap grow past the file's limit.
func raiseMemoryLimit() {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	if want := int64(sample[0].Value.Uint64()) * 7 / 4; want > debug.SetMemoryLimit(-1) {
		debug.SetMemoryLimit(want)
	}
}

// timedFrees names what a GPU timing times: the cross-stream frees and the frees of
// DDP's gradient buckets.
func timedFrees(cross, held int) string {
	var what []string
	if cross > 0 {
		what = append(what, fmt.Sprintf("the %d cross-stream frees", cross))
	}
	if held > 0 {
		what = append(what, fmt.Sprintf("the %d frees of DDP's gradient buckets", held))
	}
	return strings.Join(what, " and ")
}
