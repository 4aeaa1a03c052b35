package reference_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/reference"
)

// exercisesGroundTruth is the exercises module's test that reads reference/
// (the module stands alone, so it finds the folder itself, or by MEMLAB_ROOT).
const exercisesGroundTruth = "^TestSolutionsAgreeWithPyTorch$"

// groundTruthTests finds, in every package of the module, the tests and
// benchmarks that look up ground truth: those whose body calls reference.Dir,
// File, Glob, Pickle or GlobPickles, directly or through helpers of the package's
// test files. It
// returns them by import path: test names and benchmark names.
func groundTruthTests(t *testing.T, repo string) map[string][2][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{.Dir}}|{{join .TestGoFiles \",\"}},{{join .XTestGoFiles \",\"}}", "./...")
	cmd.Dir = repo
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	found := map[string][2][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "|", 3)
		if len(f) != 3 || f[0] == "memlab.dev/memlab/reference" {
			continue
		}
		calls := map[string][]string{} // function -> functions and methods it calls
		reads := map[string]bool{}     // functions that call a lookup themselves
		fset := token.NewFileSet()
		for _, name := range strings.Split(f[2], ",") {
			if name == "" {
				continue
			}
			file, err := parser.ParseFile(fset, filepath.Join(f[1], name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range file.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					switch c := call.Fun.(type) {
					case *ast.Ident:
						calls[fn.Name.Name] = append(calls[fn.Name.Name], c.Name)
					case *ast.SelectorExpr:
						if x, ok := c.X.(*ast.Ident); ok && x.Name == "reference" && slices.Contains([]string{"Dir", "File", "Glob", "Pickle", "GlobPickles"}, c.Sel.Name) {
							reads[fn.Name.Name] = true
						}
					}
					return true
				})
			}
		}
		for changed := true; changed; { // a function that calls one that reads, reads
			changed = false
			for fn, callees := range calls {
				if !reads[fn] && slices.ContainsFunc(callees, func(c string) bool { return reads[c] }) {
					reads[fn], changed = true, true
				}
			}
		}
		var tb [2][]string
		for fn := range reads {
			switch {
			case strings.HasPrefix(fn, "Test"):
				tb[0] = append(tb[0], fn)
			case strings.HasPrefix(fn, "Benchmark"):
				tb[1] = append(tb[1], fn)
			}
		}
		if len(tb[0])+len(tb[1]) > 0 {
			slices.Sort(tb[0])
			slices.Sort(tb[1])
			found[f[0]] = tb
		}
	}
	return found
}

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

func pattern(names []string) string {
	if len(names) == 0 {
		return "^$"
	}
	return "^(" + strings.Join(names, "|") + ")$"
}

// With the ground truth removed (MEMLAB_ROOT pointing at a checkout without
// reference/), every test and benchmark that looks it up fails, naming what is
// missing: none skips, none passes on nothing.
func TestGroundTruthMissingFailsLoudly(t *testing.T) {
	repo, err := reference.Root()
	if err != nil {
		t.Fatal(err)
	}
	tests := groundTruthTests(t, repo)
	if _, ok := tests["memlab.dev/memlab/replay"]; !ok || len(tests["memlab.dev/memlab/replay"][0]) == 0 {
		t.Fatalf("found no ground-truth tests in replay (the search is broken): %v", tests)
	}
	t.Logf("tests that look up ground truth: %v", tests)
	root := fakeRoot(t)
	check := func(what, out string, failed bool) {
		t.Helper()
		switch {
		case !failed:
			t.Errorf("%s passed without the ground truth:\n%s", what, out)
		case regexp.MustCompile(`--- SKIP`).MatchString(out):
			t.Errorf("%s skipped without the ground truth:\n%s", what, out)
		case !strings.Contains(out, "ground truth missing"):
			t.Errorf("%s failed without saying the ground truth is missing:\n%s", what, out)
		}
	}
	for pkg, tb := range tests {
		for i, names := range tb {
			for _, name := range names {
				args := []string{"-v", "-run", "^$", "-bench", "^$", "-benchtime", "1x", pkg}
				args[2+2*i] = pattern([]string{name})
				out, failed := goTest(t, repo, root, args...)
				check(pkg+"."+name, out, failed)
			}
		}
	}
	out, failed := goTest(t, filepath.Join(repo, "exercises"), root, "-v", "-tags", "solution", "-run", exercisesGroundTruth, "./internal/groundtruth")
	check("exercises/internal/groundtruth", out, failed)
}
