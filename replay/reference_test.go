package replay

import (
	"path/filepath"
	"testing"

	"memlab.dev/memlab/reference"
)

// referenceDir returns the PyTorch 2.11 ground truth that ships in the
// repository (reference/torch-2.11); its absence fails the test.
func referenceDir(t testing.TB) string {
	t.Helper()
	dir, err := reference.Dir(reference.Torch211)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestExtraTraces replays the ground truth recorded for memlab on the H200 with
// replay_torch.py (testdata/torch-2.11-extra): OOMs under a fraction cap, garbage
// collection, list-form roundup_power2_divisions, other max_split_size_mb values and
// expandable segments combined with caps and max_split_size_mb.
func TestExtraTraces(t *testing.T) {
	checkDir(t, filepath.Join("testdata", "torch-2.11-extra"))
}

// TestReferenceTraces replays every PyTorch 2.11 ground-truth file and requires every op
// and the final summary to match.
func TestReferenceTraces(t *testing.T) {
	checkDir(t, referenceDir(t))
}

func checkDir(t *testing.T, ref string) {
	files, err := filepath.Glob(filepath.Join(ref, "*.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(ref, "*.jsonl"))
	files = append(files, more...)
	if len(files) == 0 {
		t.Fatalf("no ground-truth files in %s", ref)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			tr, err := ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Summary == "" {
				t.Errorf("no summary file beside %s", f)
			}
			res, err := Check(tr, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !res.OK() {
				t.Fatalf("%d of %d ops matched; first difference:\n%s", res.Matched, res.Ops, res.Diff)
			}
			if res.Matched != len(tr.Ops) {
				t.Fatalf("matched %d of %d ops", res.Matched, len(tr.Ops))
			}
			if res.GuessedAddresses != 0 {
				t.Errorf("%d device allocations had no recorded address", res.GuessedAddresses)
			}
		})
	}
}
