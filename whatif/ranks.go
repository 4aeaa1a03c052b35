package whatif

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"text/tabwriter"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/snapshot"
)

// Rank is one rank's snapshot (a job on several GPUs writes one per process),
// replayed.
type Rank struct {
	Path   string
	Result *Result
	// Own is the setting the snapshot was recorded under ([SnapshotSetting]); nil
	// when it could not be read.
	Own *Setting
}

// Ranks are the snapshots of one job's ranks replayed under the same settings, in
// the order given.
type Ranks []Rank

// Files reads and replays the snapshots at paths, one per rank, under settings (none:
// each snapshot's own), like [File]. Ranks are read and replayed concurrently, at most
// GOMAXPROCS at a time (each holds its snapshot in memory while it runs), and each
// replays its settings in parallel as [Replay] does, so every core is used. An error
// names the file; every rank's error is returned.
func Files(paths []string, settings []Setting, opts Options) (Ranks, error) {
	if len(paths) == 0 {
		return nil, errors.New("whatif: no snapshots")
	}
	out := make(Ranks, len(paths))
	errs := make([]error, len(paths))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				s, err := snapshot.ReadFileMax(paths[i], opts.MaxSnapshotSize)
				var res *Result
				if err == nil {
					res, err = Replay(s, settings, opts)
				} else {
					err = fmt.Errorf("whatif: %w", err)
				}
				if err != nil {
					errs[i] = fmt.Errorf("rank %d (%s): %w", i, paths[i], err)
					continue
				}
				out[i] = Rank{Path: paths[i], Result: res}
				if own, err := SnapshotSetting(s); err == nil {
					out[i].Own = &own
				}
			}
		}()
	}
	for i := range paths {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// Worst is, for one setting, the rank and device whose replay reserved the most at
// its peak, judged on the high end of the figure's range, and the ranks that hit an
// out-of-memory error under it.
type Worst struct {
	Setting Setting
	Rank    int // index in Ranks
	Run     Run // the worst rank's run (its device: Run.Device)
	// Reserved is the worst run's peak reserved {figure, low, high} (low and high
	// over its timing and address ranges).
	Reserved [3]int64
	OOMRanks int      // ranks with a FirstOOM under this setting
	OOMFiles []string // their files, in rank order
}

// Worst returns one row per setting (by [Setting.Label], in the order of the first
// rank's runs): the rank whose peak reserved has the highest high end of its range
// (the figure itself when it has none; the first such on a tie, then the highest
// figure).
func (rs Ranks) Worst() []Worst {
	var out []Worst
	at := map[string]int{}
	for k, r := range rs {
		ooms := map[string]bool{}
		for _, run := range r.Result.Runs {
			l := run.Setting.Label()
			res := figureSpan(&run, "reserved_bytes.all.peak", run.MaxReserved)
			i, ok := at[l]
			if !ok {
				i = len(out)
				at[l] = i
				out = append(out, Worst{Setting: run.Setting, Rank: k, Run: run, Reserved: res})
			} else if w := out[i].Reserved; res[2] > w[2] || res[2] == w[2] && res[0] > w[0] {
				out[i].Rank, out[i].Run, out[i].Reserved = k, run, res
			}
			if run.FirstOOM != nil && !ooms[l] {
				ooms[l] = true
				out[i].OOMRanks++
				out[i].OOMFiles = append(out[i].OOMFiles, r.Path)
			}
		}
	}
	return out
}

// Advice is [Ranks.Advise] against the ranks' own setting when they share one.
func (rs Ranks) Advice() *Advice {
	var own *Setting
	for k, r := range rs {
		if r.Own == nil || k > 0 && (own == nil || r.Own.Label() != own.Label()) {
			own = nil
			break
		}
		own = r.Own
	}
	return rs.Advise(own)
}

// WriteTable prints each rank's table ([Result.WriteTable]) under its file's name,
// then the worst rank per setting.
func (rs Ranks) WriteTable(w io.Writer) error {
	for k, r := range rs {
		fmt.Fprintf(w, "rank %d: %s: %s\n", k, r.Path, r.Result.About)
		if err := r.Result.WriteTable(w); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "worst of %d ranks (the highest peak reserved, judged on the high end of its range):\n", len(rs))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "setting\trank\tfile\tdevice\tpeak allocated\tpeak reserved\tranks with an OOM\t")
	worst := rs.Worst()
	for _, x := range worst {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%s\t%d\t\n", x.Setting.ShortLabel(), x.Rank, rs[x.Rank].Path, x.Run.Device,
			allocator.FormatSize(x.Run.MaxAllocated), sizeSpan(x.Reserved), x.OOMRanks)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, x := range worst {
		if len(x.OOMFiles) > 0 {
			fmt.Fprintf(w, "%s: out of memory on %d of %d ranks: %s\n", x.Setting.ShortLabel(), len(x.OOMFiles), len(rs), strings.Join(x.OOMFiles, ", "))
		}
	}
	if a := rs.Advice(); a != nil {
		fmt.Fprintf(w, "\n%s\n", a.text(" on its worst rank"))
	}
	_, err := fmt.Fprintln(w)
	return err
}

// WriteJSON writes {"ranks": [{"file", "runs", "warnings", "events"}, …] (each as
// [Result.WriteJSON] writes it, with its file), "worst": [{"conf", "fraction", "cap",
// "rank", "file", "device", "max_memory_allocated", "max_memory_reserved",
// "max_memory_reserved_range": [low, high], "ranks_with_oom", "files_with_oom"}, …],
// "advice" ([Ranks.Advice], absent with one setting)}.
func (rs Ranks) WriteJSON(w io.Writer) error {
	type rank struct {
		File string `json:"file"`
		jsonResult
	}
	type worst struct {
		Conf          string   `json:"conf"`
		Fraction      *float64 `json:"fraction"`
		Cap           *int64   `json:"cap"`
		Rank          int      `json:"rank"`
		File          string   `json:"file"`
		Device        int      `json:"device"`
		MaxAllocated  int64    `json:"max_memory_allocated"`
		MaxReserved   int64    `json:"max_memory_reserved"`
		ReservedRange [2]int64 `json:"max_memory_reserved_range"`
		OOMRanks      int      `json:"ranks_with_oom"`
		OOMFiles      []string `json:"files_with_oom"`
	}
	out := struct {
		Ranks  []rank      `json:"ranks"`
		Worst  []worst     `json:"worst"`
		Advice *jsonAdvice `json:"advice,omitempty"`
	}{Ranks: []rank{}, Worst: []worst{}, Advice: rs.Advice().json(true)}
	for _, r := range rs {
		out.Ranks = append(out.Ranks, rank{File: r.Path, jsonResult: r.Result.jsonResult()})
	}
	for _, x := range rs.Worst() {
		j := worst{Conf: x.Setting.Conf.String(), Rank: x.Rank, File: rs[x.Rank].Path, Device: x.Run.Device,
			MaxAllocated: x.Run.MaxAllocated, MaxReserved: x.Run.MaxReserved, OOMRanks: x.OOMRanks,
			ReservedRange: [2]int64{x.Reserved[1], x.Reserved[2]}, OOMFiles: x.OOMFiles}
		if j.OOMFiles == nil {
			j.OOMFiles = []string{}
		}
		j.Fraction, j.Cap = x.Setting.jsonCap()
		out.Worst = append(out.Worst, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(out)
}
