package whatif

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"text/tabwriter"

	"memlab.dev/memlab/allocator"
)

// Rank is one rank's snapshot (a job on several GPUs writes one per process),
// replayed.
type Rank struct {
	Path   string
	Result *Result
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
				res, err := File(paths[i], settings, opts)
				if err != nil {
					errs[i] = fmt.Errorf("rank %d (%s): %w", i, paths[i], err)
					continue
				}
				out[i] = Rank{Path: paths[i], Result: res}
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
// its peak, and how many ranks hit an out-of-memory error under it.
type Worst struct {
	Setting  Setting
	Rank     int // index in Ranks
	Run      Run // the worst rank's run (its device: Run.Device)
	OOMRanks int // ranks with a FirstOOM under this setting
}

// Worst returns one row per setting (by [Setting.Label], in the order of the first
// rank's runs): the rank whose peak reserved is the highest (the first such on a tie).
func (rs Ranks) Worst() []Worst {
	var out []Worst
	at := map[string]int{}
	for k, r := range rs {
		ooms := map[string]bool{}
		for _, run := range r.Result.Runs {
			l := run.Setting.Label()
			i, ok := at[l]
			if !ok {
				i = len(out)
				at[l] = i
				out = append(out, Worst{Setting: run.Setting, Rank: k, Run: run})
			} else if run.MaxReserved > out[i].Run.MaxReserved {
				out[i].Rank, out[i].Run = k, run
			}
			if run.FirstOOM != nil && !ooms[l] {
				ooms[l] = true
				out[i].OOMRanks++
			}
		}
	}
	return out
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
	fmt.Fprintf(w, "worst of %d ranks (the highest peak reserved):\n", len(rs))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "setting\trank\tdevice\tpeak allocated\tpeak reserved\tranks with an OOM\t")
	for _, x := range rs.Worst() {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%d\t\n", x.Setting.ShortLabel(), x.Rank, x.Run.Device,
			allocator.FormatSize(x.Run.MaxAllocated), allocator.FormatSize(x.Run.MaxReserved), x.OOMRanks)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w)
	return err
}

// WriteJSON writes {"ranks": [{"file", "runs", "warnings", "events"}, …] (each as
// [Result.WriteJSON] writes it, with its file), "worst": [{"conf", "fraction", "cap",
// "rank", "device", "max_memory_allocated", "max_memory_reserved", "ranks_with_oom"},
// …]}.
func (rs Ranks) WriteJSON(w io.Writer) error {
	type rank struct {
		File string `json:"file"`
		jsonResult
	}
	type worst struct {
		Conf         string   `json:"conf"`
		Fraction     *float64 `json:"fraction"`
		Cap          *int64   `json:"cap"`
		Rank         int      `json:"rank"`
		Device       int      `json:"device"`
		MaxAllocated int64    `json:"max_memory_allocated"`
		MaxReserved  int64    `json:"max_memory_reserved"`
		OOMRanks     int      `json:"ranks_with_oom"`
	}
	out := struct {
		Ranks []rank  `json:"ranks"`
		Worst []worst `json:"worst"`
	}{Ranks: []rank{}, Worst: []worst{}}
	for _, r := range rs {
		out.Ranks = append(out.Ranks, rank{File: r.Path, jsonResult: r.Result.jsonResult()})
	}
	for _, x := range rs.Worst() {
		j := worst{Conf: x.Setting.Conf.String(), Rank: x.Rank, Device: x.Run.Device,
			MaxAllocated: x.Run.MaxAllocated, MaxReserved: x.Run.MaxReserved, OOMRanks: x.OOMRanks}
		if f := x.Setting.Fraction; f > 0 && f < 1 {
			j.Fraction = &f
		}
		if c := x.Setting.Cap; c > 0 {
			j.Cap = &c
		}
		out.Worst = append(out.Worst, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(out)
}
