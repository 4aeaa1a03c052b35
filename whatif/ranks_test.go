package whatif

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"memlab.dev/memlab/reference"
)

// TestRanksOfRecordedPrograms: three single-GPU recordings replayed as one job's
// ranks (no multi-GPU recording is shipped): under each setting the summary names
// as the worst the rank whose peak reserved PyTorch measured highest, with its file.
func TestRanksOfRecordedPrograms(t *testing.T) {
	progs := []string{"bert_encode", "gpt2_train", "multistream_branches"}
	confs := []string{"", "expandable_segments:True", "max_split_size_mb:128", "roundup_power2_divisions:4"}
	tags := []string{"default", "expandable_segments_True", "max_split_size_mb_128", "roundup_power2_divisions_4"}
	var paths []string
	for _, p := range progs {
		path, err := reference.Pickle(reference.Workloads211, p+"__default.pickle")
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	ranks, err := Files(paths, settings(t, confs...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	worst := ranks.Worst()
	if len(worst) != len(confs) {
		t.Fatalf("%d worst rows, want %d", len(worst), len(confs))
	}
	var b bytes.Buffer
	if err := ranks.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for i, tag := range tags {
		want, hi := -1, int64(-1)
		for k, p := range progs {
			fp, err := reference.File(reference.Workloads211, p+"__"+tag+".facts.json")
			if err != nil {
				t.Fatal(err)
			}
			if f := readFacts(t, fp); f.MaxReserved > hi {
				want, hi = k, f.MaxReserved
			}
		}
		w := worst[i]
		if w.Setting.Conf.String() != confs[i] || w.Rank != want {
			t.Errorf("%q: worst rank %d (%s), want rank %d (%s), PyTorch's highest peak reserved %d", confs[i], w.Rank, progs[w.Rank], want, progs[want], hi)
		}
		row := fmt.Sprintf("%s  %d     %s", w.Setting.ShortLabel(), want, paths[want])
		if !strings.Contains(b.String(), paths[want]) || !strings.Contains(strings.Join(strings.Fields(b.String()), " "), strings.Join(strings.Fields(row), " ")) {
			t.Errorf("summary lacks the row %q:\n%s", row, b.String())
		}
	}
	for k, p := range paths {
		if !strings.Contains(b.String(), fmt.Sprintf("rank %d: %s: ", k, p)) {
			t.Errorf("summary does not name rank %d's file %s", k, p)
		}
	}
}

// ranksOutside are the figures of reference/ranks-2.11 outside the what-if's
// ranges (program, setting, memory_stats key), as measured: a change either way
// fails TestRanksWorldSize1, so that this list stays what is true.
var ranksOutside = map[[3]string]bool{
	// (DDP under expandable segments, one 20 MiB page more than PyTorch mapped, lies
	// inside the timing range since it lets go of the first buckets at their rebuild
	// too: the default run let go of them some 250 allocations later, history.earliest)
	// DDP capped at 1.15 × the default's peak allocated: PyTorch's own peak allocated
	// is 132 MiB below the default run's, with the same 396 allocations: the
	// program's requests differed under this setting, which the default's snapshot
	// cannot show
	{"ddp_train", "max_split_size_mb:64,garbage_collection_threshold:0.6", "allocated_bytes.all.peak"}: true,
	{"ddp_train", "max_split_size_mb:64,garbage_collection_threshold:0.6", "reserved_bytes.all.peak"}:  true,
}

// TestRanksWorldSize1: the FSDP2 and DDP programs recorded per rank with world size 1
// (reference/ranks-2.11): each rank's default snapshot replayed under every recorded
// setting gives PyTorch's figures (peaks, cudaMalloc, retries, OOMs) exactly or
// inside the printed range, but for ranksOutside; the two programs' ranks replayed as
// one job name as the worst the rank PyTorch measured worst.
func TestRanksWorldSize1(t *testing.T) {
	keys := []string{"allocated_bytes.all.peak", "reserved_bytes.all.peak", "num_device_alloc", "num_alloc_retries", "num_ooms"}
	var defaults []string
	for _, prog := range []string{"ddp_train", "fsdp2_train_ranks"} {
		snap, err := reference.Pickle(reference.Ranks211, prog+"__default.rank0.pickle")
		if err != nil {
			t.Fatal(err)
		}
		defaults = append(defaults, snap)
		factFiles, err := reference.Glob(reference.Ranks211, prog+"__*.rank0.facts.json")
		if err != nil {
			t.Fatal(err)
		}
		if len(factFiles) != 5 {
			t.Fatalf("%s: %d facts files, want the recorder's 5 settings", prog, len(factFiles))
		}
		var sts []Setting
		var fs []facts
		for _, p := range factFiles {
			f := readFacts(t, p)
			fs = append(fs, f)
			sts = append(sts, f.setting(t))
		}
		res, err := File(snap, sts, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range fs {
			run := res.Runs[i]
			for _, k := range keys {
				got := run.Stats[k]
				lo, hi := got, got
				for _, m := range []map[string][2]int64{run.TimingRange, run.AddressRange, run.AfterOOMRange} {
					if r, ok := m[k]; ok {
						lo, hi = min(lo, r[0]), max(hi, r[1])
					}
				}
				want := f.Stats[k]
				outside := want < lo || want > hi
				if outside != ranksOutside[[3]string{prog, f.Conf, k}] {
					t.Errorf("%s [%s] %s: PyTorch %d, memlab %d {%d, %d}: outside %v, ranksOutside says %v", prog, f.Conf, k, want, got, lo, hi, outside, !outside)
				}
			}
		}
	}
	ranks, err := Files(defaults, settings(t, "", "expandable_segments:True", "max_split_size_mb:128", "roundup_power2_divisions:4"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	tags := []string{"default", "expandable_segments_True", "max_split_size_mb_128", "roundup_power2_divisions_4"}
	progs := []string{"ddp_train", "fsdp2_train_ranks"}
	for i, w := range ranks.Worst() {
		want, hi := -1, int64(-1)
		for k, p := range progs {
			fp, err := reference.File(reference.Ranks211, p+"__"+tags[i]+".rank0.facts.json")
			if err != nil {
				t.Fatal(err)
			}
			if f := readFacts(t, fp); f.MaxReserved > hi {
				want, hi = k, f.MaxReserved
			}
		}
		if w.Rank != want {
			t.Errorf("%s: worst rank %d (%s), PyTorch's is %d (%s)", tags[i], w.Rank, progs[w.Rank], want, progs[want])
		}
	}
}
