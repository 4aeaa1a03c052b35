package nbexec

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
)

// synthetic is a notebook of the shape scripts/mknotebooks writes: markdown,
// the import cell, two cells that run and a declaration between them.
func synthetic(edition string) *Notebook {
	md := func(s string) *Cell { return &Cell{CellType: "markdown", Source: splitLines(s)} }
	code := func(s string) *Cell {
		return &Cell{CellType: "code", Source: splitLines(s), Metadata: map[string]any{}}
	}
	return &Notebook{
		Metadata: map[string]any{"memlab": map[string]any{"edition": edition}},
		NBFormat: 4, NBFormatMinor: 4,
		Cells: []*Cell{
			md("# A notebook"),
			code("%env MEMLAB_LANG=" + edition + "\nimport \"fmt\""),
			code("%%\nfirst()"),
			code("func helper() {}"),
			md("## Next"),
			code("%%\nsecond()"),
		},
	}
}

func TestExecute(t *testing.T) {
	fig, err := memplot.Bars("t", "MiB", []string{"a"}, memplot.BarSeries{Name: "s", Values: []float64{1}})
	if err != nil {
		t.Fatal(err)
	}
	var lang string
	cells := []memlab.Cell{
		{Notebook: "nb", Section: "A", Name: "first", Plot: true, Func: func() {
			lang = os.Getenv("MEMLAB_LANG")
			fmt.Println("before the table")
			memlab.NewTable("k", "v").Row("x", 1).Show()
			memlab.Measured("after the table")
			fmt.Fprintln(os.Stderr, "a warning")
			memlab.Show(fig, nil)
			fmt.Println("after the figure")
		}},
		{Notebook: "nb", Section: "B", Name: "second", Func: func() {
			fmt.Println("partial output")
			memlab.Check(errors.New("device on fire"))
		}},
	}
	nb := synthetic("zh-CN")
	t.Setenv("MEMLAB_LANG", "en")
	when := time.Date(2026, 12, 1, 17, 0, 0, 0, time.FixedZone("CET", 3600))
	err = Execute(nb, Options{Cells: cells, Device: "sim:8GiB", Commit: "abc1234", Command: "memlab lab -ipynb x", Now: func() time.Time { return when }})
	var ce *CellError
	if !errors.As(err, &ce) || ce.Index != 6 || ce.Name != "second" || !strings.Contains(err.Error(), "device on fire") {
		t.Fatalf("Execute = %v, want the second cell's failure", err)
	}
	if lang != "zh-CN" || os.Getenv("MEMLAB_LANG") != "en" {
		t.Errorf("MEMLAB_LANG was %q in the cell and %q after; want the notebook's edition, then restored", lang, os.Getenv("MEMLAB_LANG"))
	}
	stamp, ok := nb.Executed()
	if !ok || stamp.Device != "sim:0, memlab simulated GPU (8 GiB), 8.00 GiB" || stamp.Date != "2026-12-01T16:00:00Z" || stamp.Commit != "abc1234" || stamp.Command != "memlab lab -ipynb x" {
		t.Errorf("stamp = %+v", stamp)
	}

	type out struct{ kind, text string }
	summary := func(c *Cell) []out {
		var s []out
		for _, o := range c.Outputs {
			switch o["output_type"] {
			case "stream":
				s = append(s, out{o["name"].(string), strings.Join(o["text"].([]string), "")})
			case "display_data":
				data := o["data"].(map[string]any)
				if png, ok := data["image/png"].(string); ok {
					b, err := base64.StdEncoding.DecodeString(png)
					if err != nil || !strings.HasPrefix(string(b), "\x89PNG") {
						t.Errorf("image/png is not a base64 PNG: %v", err)
					}
					s = append(s, out{"png", ""})
				} else {
					s = append(s, out{"html", strings.Join(data["text/html"].([]string), "") + " | " + strings.Join(data["text/plain"].([]string), "")})
				}
			case "error":
				s = append(s, out{"error", o["evalue"].(string)})
			}
		}
		return s
	}
	first := summary(nb.Cells[2])
	want := []out{
		{"stdout", "before the table\n"},
		{"html", memlab.NewTable("k", "v").Row("x", 1).HTML() + " | k  v\nx  1\n"},
		{"stdout", "实测：after the table\n"},
		{"stderr", "a warning\n"},
		{"png", ""},
		{"stdout", "after the figure\n"},
	}
	if fmt.Sprint(first) != fmt.Sprint(want) {
		t.Errorf("first cell's outputs:\n got %q\nwant %q", first, want)
	}
	second := summary(nb.Cells[5])
	if len(second) != 2 || second[0] != (out{"stdout", "partial output\n"}) || second[1].kind != "error" || !strings.Contains(second[1].text, "device on fire") {
		t.Errorf("second cell's outputs: %q", second)
	}
	for i, c := range nb.Cells {
		m, _ := c.Metadata["memlab"].(map[string]any)
		if c.CellType != "code" {
			if m != nil || c.ExecutionCount != nil {
				t.Errorf("markdown cell %d got %v, count %v", i+1, m, c.ExecutionCount)
			}
			continue
		}
		if m["source_sha256"] != c.Source.SHA256() {
			t.Errorf("cell %d: source_sha256 %v", i+1, m["source_sha256"])
		}
		_, timed := m["elapsed_s"]
		if timed != IsMain(c.Source) || (!IsMain(c.Source) && len(c.Outputs) != 0) {
			t.Errorf("cell %d: elapsed_s recorded %v, outputs %d: only the cells that run have them", i+1, timed, len(c.Outputs))
		}
	}
	if c := nb.Cells[3]; *c.ExecutionCount != 3 {
		t.Errorf("the declaration cell's execution_count = %d, want 3", *c.ExecutionCount)
	}

	// What it writes is a notebook Fresh accepts against the pristine one,
	// once its error is gone.
	nb.Cells[5].Outputs = nb.Cells[5].Outputs[:1]
	b, err := nb.Encode()
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/nb.ipynb"
	writeFile(t, path, b)
	back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Fresh("nb", synthetic("zh-CN"), back); err != nil {
		t.Errorf("the executed notebook is not fresh against its source: %v", err)
	}
}

func TestExecuteRefuses(t *testing.T) {
	cell := memlab.Cell{Notebook: "nb", Name: "first", Func: func() {}}
	opt := Options{Cells: []memlab.Cell{cell, cell}, Device: "sim", Commit: "c", Command: "x"}
	if err := Execute(synthetic("en"), Options{Cells: []memlab.Cell{cell}, Device: "sim", Commit: "c", Command: "x"}); err == nil ||
		!strings.Contains(err.Error(), "2 cells that run (%%) but its package registers 1") {
		t.Errorf("a notebook with more %%%% cells than its package: %v", err)
	}
	nb := synthetic("en")
	nb.Metadata = map[string]any{}
	if err := Execute(nb, opt); err == nil || !strings.Contains(err.Error(), "no metadata memlab.edition") {
		t.Errorf("a notebook without an edition: %v", err)
	}
	opt.Commit = ""
	if err := Execute(synthetic("en"), opt); err == nil || !strings.Contains(err.Error(), "needs a commit") {
		t.Errorf("no commit: %v", err)
	}
	// No device: the environment's MEMLAB_DEVICE stands.
	t.Setenv("MEMLAB_DEVICE", "sim:2GiB")
	opt.Device = ""
	nb = synthetic("en")
	if err := Execute(nb, Options{Cells: opt.Cells, Commit: "c", Command: "x"}); err != nil {
		t.Fatal(err)
	}
	if s, _ := nb.Executed(); !strings.HasPrefix(s.Device, "sim:0, memlab simulated GPU (2 GiB)") || os.Getenv("MEMLAB_DEVICE") != "sim:2GiB" {
		t.Errorf("with MEMLAB_DEVICE=sim:2GiB and no -device, the stamp's device is %q and MEMLAB_DEVICE %q after", s.Device, os.Getenv("MEMLAB_DEVICE"))
	}
	opt.Commit, opt.Device = "c", "nosuchdevice"
	if err := Execute(synthetic("en"), opt); err == nil || !strings.Contains(err.Error(), "opening the device") {
		t.Errorf("a bad device: %v", err)
	}
}
