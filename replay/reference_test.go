package replay

import (
	"os"
	"path/filepath"
	"testing"
)

// referenceDir finds ../shared/reference/torch-2.11 from the module root.
func referenceDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("go.mod not found above the test directory")
		}
		dir = parent
	}
	ref := filepath.Join(dir, "..", "shared", "reference", "torch-2.11")
	if _, err := os.Stat(ref); err != nil {
		t.Skipf("ground truth not available (%s missing); CI provides ../shared next to the repository", ref)
	}
	return ref
}

// referenceDirIfPresent returns ../shared/reference/torch-2.11 or "".
func referenceDirIfPresent() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
	ref := filepath.Join(dir, "..", "shared", "reference", "torch-2.11")
	if _, err := os.Stat(ref); err != nil {
		return ""
	}
	return ref
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
		t.Skipf("no ground-truth files in %s", ref)
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
