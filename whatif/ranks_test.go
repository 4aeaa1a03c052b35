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
