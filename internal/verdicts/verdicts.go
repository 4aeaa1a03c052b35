// Package verdicts reads the verdict lines that memlab.Judge prints —
// `Chapter: … | measured: … → holds` — out of a notebook's output, and checks
// that a run of a notebook's cells on the simulator gives the same verdicts as
// the executed copy recorded on a GPU (notebooks/executed/), so that no lesson
// is true on one device and false on the other unless it says so.
//
// A notebook's test uses it in three lines:
//
//	out := nbtest.All(t, Cells)                        // every cell, on the simulator
//	verdicts.Agree(t, "02-memory-mechanics", out, allowed, 20)
//
// where allowed names the claims whose verdict may differ between the devices,
// each with the sentence of the notebook that says so.
package verdicts

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"memlab.dev/memlab/internal/nbexec"
	"memlab.dev/memlab/memlab"
)

// Verdict is one verdict line of a cell's output.
type Verdict struct {
	Cell    string         // the cell's name (the //nb:cell function), "" if unknown
	Claim   string         // the claim as printed, in the output's edition
	Verdict memlab.Verdict // what the measurement made of it
	Line    string         // the whole line, wrapped lines joined
}

// Parse returns the verdict lines of one cell's output, in order. A verdict
// line wrapped in a notebook (continuation lines indented by two spaces, see
// memlab.OutputWidth) is joined back before it is read.
func Parse(cell, output string) []Verdict {
	var out []Verdict
	lines := strings.Split(output, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \r")
		if !strings.HasPrefix(line, "Chapter: ") && !strings.HasPrefix(line, "教材：") {
			continue
		}
		for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "  ") && strings.TrimSpace(lines[i+1]) != "" {
			i++
			line += " " + strings.TrimSpace(lines[i])
		}
		if claim, v, ok := memlab.ParseVerdict(line); ok {
			out = append(out, Verdict{Cell: cell, Claim: claim, Verdict: v, Line: line})
		}
	}
	return out
}

// Cell is one code cell of an executed copy: its name, whether it is fresh
// (its recorded source is the pristine notebook's cell as it is now) and the
// verdicts its recorded output holds.
type Cell struct {
	Name     string
	Fresh    bool
	Verdicts []Verdict
}

// ReadExecuted reads the code cells of the executed copy kept at keptPath,
// each marked fresh when its recorded source_sha256 is that of a code cell of
// the pristine notebook at pristinePath. Cells without a name (the
// declarations) are left out.
func ReadExecuted(pristinePath, keptPath string) ([]Cell, error) {
	p, err := nbexec.Read(pristinePath)
	if err != nil {
		return nil, fmt.Errorf("verdicts: %w", err)
	}
	k, err := nbexec.Read(keptPath)
	if err != nil {
		return nil, fmt.Errorf("verdicts: %w", err)
	}
	current := map[string]bool{}
	for _, c := range p.Cells {
		if c.CellType == "code" {
			current[c.Source.SHA256()] = true
		}
	}
	var cells []Cell
	for _, c := range k.Cells {
		if c.CellType != "code" {
			continue
		}
		m, _ := c.Metadata["memlab"].(map[string]any)
		name, _ := m["cell"].(string)
		sum, _ := m["source_sha256"].(string)
		if name == "" {
			continue
		}
		cells = append(cells, Cell{Name: name, Fresh: current[sum], Verdicts: Parse(name, c.OutputText())})
	}
	return cells, nil
}

// Agree checks notebook name's verdicts on two devices: sim holds the output
// of every cell run on the simulator, by cell name (nbtest.All); the executed
// copy is notebooks/executed/en/NAME.ipynb, recorded on a GPU, read from the
// notebook's source package (two levels below notebooks/). It fails the test
//
//   - when the simulator's run prints fewer than min verdicts, or a claim twice;
//   - when a claim's verdict differs between the two, unless allowed names the
//     claim (its English text) with a sentence that notebooks/en/NAME.ipynb
//     contains, the lesson's word on the difference;
//   - when a fresh cell of the executed copy (recorded from the cell's
//     current source) printed other claims than the simulator's run;
//   - when every cell that judges a claim is fresh (the copy was recorded from
//     the current sources) and the copy holds fewer than min verdicts.
//
// Verdicts of cells recorded from older sources are compared where both runs
// have them, so that the test passes between a change to the cells and the
// recording of the executed copies on the GPU; Agree logs how many cells
// wait for it.
func Agree(t testing.TB, name string, sim map[string]string, allowed map[string]string, min int) {
	t.Helper()
	dir := filepath.Join("..", "..")
	AgreeFiles(t, filepath.Join(dir, "en", name+".ipynb"), filepath.Join(dir, nbexec.ExecutedDir, "en", name+".ipynb"), sim, allowed, min)
}

// AgreeFiles is [Agree] with the pristine notebook and its executed copy
// named by path.
func AgreeFiles(t testing.TB, pristine, kept string, sim map[string]string, allowed map[string]string, min int) {
	t.Helper()
	name := strings.TrimSuffix(filepath.Base(pristine), ".ipynb")
	cells, err := ReadExecuted(pristine, kept)
	if err != nil {
		t.Fatal(err)
	}
	nb, err := nbexec.Read(pristine)
	if err != nil {
		t.Fatal(err)
	}
	var prose []string
	for _, c := range nb.Cells {
		if c.CellType == "markdown" {
			prose = append(prose, c.Source.Text())
		}
	}
	text := words(strings.Join(prose, "\n"))
	ran := map[string]Verdict{}
	judging := map[string]bool{} // cells that judge a claim on the simulator
	names := make([]string, 0, len(sim))
	for n := range sim {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, v := range Parse(n, sim[n]) {
			if prev, dup := ran[v.Claim]; dup {
				t.Errorf("claim %q is judged twice, by cells %s and %s: one verdict per claim", v.Claim, prev.Cell, n)
			}
			ran[v.Claim] = v
			judging[n] = true
		}
	}
	if len(ran) < min {
		t.Errorf("%s prints %d verdicts on the simulator, want at least %d", name, len(ran), min)
	}
	for claim, sentence := range allowed {
		if !strings.Contains(text, words(sentence)) {
			t.Errorf("allowed difference for %q: the notebook does not say %q", claim, sentence)
		}
	}
	recorded, stale := 0, 0
	fresh := map[string]bool{}
	for _, c := range cells {
		fresh[c.Name] = c.Fresh
	}
	for n := range judging {
		if !fresh[n] {
			stale++
		}
	}
	for _, c := range cells {
		var got []string
		for _, v := range c.Verdicts {
			recorded++
			got = append(got, v.Claim)
			s, ok := ran[v.Claim]
			switch {
			case !ok:
				if c.Fresh {
					t.Errorf("cell %s: the executed copy judges %q, the simulator's run does not", c.Name, v.Claim)
				}
			case s.Verdict != v.Verdict:
				if _, ok := allowed[v.Claim]; !ok {
					t.Errorf("cell %s: %q %s on the simulator but %s in the executed copy (GPU):\n\tsim: %s\n\tGPU: %s",
						c.Name, v.Claim, s.Verdict.In("en"), v.Verdict.In("en"), s.Line, v.Line)
				}
			}
		}
		if c.Fresh {
			var want []string
			for _, v := range Parse(c.Name, sim[c.Name]) {
				want = append(want, v.Claim)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("cell %s: the executed copy judges %q, the simulator's run %q", c.Name, got, want)
			}
		}
	}
	if stale > 0 {
		t.Logf("%s: %d cells that judge claims were executed from older sources; their verdicts are compared once the executed copies are recorded again", name, stale)
	} else if recorded < min {
		t.Errorf("the executed copy of %s holds %d verdicts, want at least %d", name, recorded, min)
	}
}

// words is s with every run of white space made one space, so that a
// sentence is found however the markdown breaks its lines.
func words(s string) string { return strings.Join(strings.Fields(s), " ") }
