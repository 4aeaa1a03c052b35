package memlab_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoPlottingLibrary: the packages notebook cells (and their declarations)
// use without drawing — memlab, tensor, ch2, ch4, whatif, progress — link
// no plotting library, so that such a cell's program builds and links without
// gonum/plot and its fonts (issue 30; scripts/link-time.sh measures the
// difference); memplot, which draws, does.
func TestNoPlottingLibrary(t *testing.T) {
	lean := []string{"memlab.dev/memlab/memlab", "memlab.dev/memlab/tensor", "memlab.dev/memlab/experiments/ch2", "memlab.dev/memlab/experiments/ch4",
		"memlab.dev/memlab/whatif", "memlab.dev/memlab/progress"}
	deps := func(pkgs ...string) []string {
		t.Helper()
		out, err := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", strings.Join(pkgs, " "), err, out)
		}
		return strings.Fields(string(out))
	}
	for _, p := range deps(lean...) {
		if strings.HasPrefix(p, "gonum.org/") || p == "memlab.dev/memlab/memplot" {
			t.Errorf("%s is linked into a cell that imports %s and draws nothing", p, strings.Join(lean, " or "))
		}
	}
	found := false
	for _, p := range deps("memlab.dev/memlab/memplot") {
		found = found || p == "gonum.org/v1/plot"
	}
	if !found {
		t.Error("memplot does not import gonum.org/v1/plot: the check above checks nothing")
	}
}
