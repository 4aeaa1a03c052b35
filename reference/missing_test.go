package reference_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"memlab.dev/memlab/reference"
)

// groundTruthTests names, per package, the tests that read reference/ (a
// pattern for go test -run). TestGroundTruthMissingFailsLoudly runs them
// without the ground truth; TestGroundTruthTestsAreListed makes sure a package
// whose tests use package reference is listed here.
var groundTruthTests = map[string]string{
	"memlab.dev/memlab/replay": "^TestReferenceTraces$",
}

// exercisesGroundTruth is the exercises module's test that reads reference/
// (the module stands alone, so it finds the folder itself, or by MEMLAB_ROOT).
const exercisesGroundTruth = "^TestSolutionsAgreeWithPyTorch$"

// fakeRoot returns a directory that passes for a memlab checkout (a go.mod of
// the module) but holds no reference/ folder.
func fakeRoot(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+reference.Module+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// goTest runs go test in dir with MEMLAB_ROOT set to root and returns its
// output and whether it failed.
func goTest(t *testing.T, dir, root string, args ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command("go", append([]string{"test", "-count=1"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MEMLAB_ROOT="+root, "GOWORK=off", "GOFLAGS=")
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("go test %v: %v", args, err)
	}
	return string(out), err != nil
}

// With the ground truth removed (MEMLAB_ROOT pointing at a checkout without
// reference/), every test that compares with PyTorch fails, naming what is
// missing: none skips, none passes on nothing.
func TestGroundTruthMissingFailsLoudly(t *testing.T) {
	repo, err := reference.Root()
	if err != nil {
		t.Fatal(err)
	}
	root := fakeRoot(t)
	check := func(what, out string, failed bool) {
		t.Helper()
		switch {
		case !failed:
			t.Errorf("%s passed without the ground truth:\n%s", what, out)
		case strings.Contains(out, "--- SKIP"):
			t.Errorf("%s skipped without the ground truth:\n%s", what, out)
		case !strings.Contains(out, "ground truth missing"):
			t.Errorf("%s failed without saying the ground truth is missing:\n%s", what, out)
		}
	}
	for pkg, run := range groundTruthTests {
		out, failed := goTest(t, repo, root, "-v", "-run", run, "-bench", "^$", pkg)
		check(pkg, out, failed)
	}
	out, failed := goTest(t, filepath.Join(repo, "exercises"), root, "-v", "-tags", "solution", "-run", exercisesGroundTruth, "./internal/groundtruth")
	check("exercises/internal/groundtruth", out, failed)
}

// Every package whose tests look up ground truth (reference.Dir, File or
// Glob) is in groundTruthTests.
func TestGroundTruthTestsAreListed(t *testing.T) {
	repo, err := reference.Root()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{.Dir}}|{{join .TestGoFiles \",\"}},{{join .XTestGoFiles \",\"}}", "./...")
	cmd.Dir = repo
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	found := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "|", 3)
		if len(f) != 3 || f[0] == "memlab.dev/memlab/reference" {
			continue
		}
		for _, name := range strings.Split(f[2], ",") {
			if name == "" {
				continue
			}
			src, err := os.ReadFile(filepath.Join(f[1], name))
			if err != nil {
				t.Fatal(err)
			}
			if !lookup.Match(src) {
				continue
			}
			found++
			if _, ok := groundTruthTests[f[0]]; !ok {
				t.Errorf("%s (%s) looks up ground truth but is not in groundTruthTests: list the tests that read it", f[0], name)
			}
			break
		}
	}
	if found < len(groundTruthTests) {
		t.Errorf("%d packages' tests look up ground truth, %d are listed: remove the ones that no longer do", found, len(groundTruthTests))
	}
}

// lookup matches a call of the ground-truth lookups.
var lookup = regexp.MustCompile(`\breference\.(Dir|File|Glob)\(`)
