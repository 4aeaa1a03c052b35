package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"memlab.dev/memlab/device"
	"memlab.dev/memlab/memlab"

	_ "memlab.dev/memlab/notebooks/src/00-setup-and-tour"    // registers notebook 00's cells
	_ "memlab.dev/memlab/notebooks/src/02-memory-mechanics"  // registers notebook 02's cells
	_ "memlab.dev/memlab/notebooks/src/04-reuse-and-sharing" // registers notebook 04's cells
	_ "memlab.dev/memlab/notebooks/src/05-what-if"           // registers notebook 05's cells
	_ "memlab.dev/memlab/notebooks/src/06-exercises"         // registers notebook 06's cell
)

func init() {
	register(command{
		name:    "lab",
		summary: "run the chapters' experiments as a plain program (no Jupyter needed)",
		run:     runLab,
	})
	register(command{name: "experiments", summary: "the same as lab", run: runLab})
}

// runLab runs every notebook cell written as Go (memlab.Cells) and every
// registered experiment, or those -run selects, on one device; it prints
// what each prints and writes its figures as PNG files.
func runLab(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lab", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dev := fs.String("device", "", `device spec: "" (MEMLAB_DEVICE, else a GPU if present, else the simulator), "sim", "sim:24GiB", "cuda", "cuda:1"`)
	plots := fs.String("plots", "build/lab-plots", "directory for the figures (PNG); empty to skip them")
	sel := fs.String("run", "", "run only experiments whose \"section name\" matches this regular expression")
	list := fs.Bool("list", false, "list the experiments and exit")
	ipynb := fs.String("ipynb", "", "execute this notebook's cells (notebooks/EDITION/NAME.ipynb) and write the executed notebook to -o")
	outPath := fs.String("o", "", "with -ipynb: the executed notebook to write (notebooks/executed/EDITION/NAME.ipynb)")
	commit := fs.String("commit", "", "with -ipynb: the commit to stamp (default: git describe --always --dirty)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: memlab lab [-device spec] [-plots dir] [-run regexp] [-list]")
		fmt.Fprintln(stderr, "       memlab lab -ipynb notebooks/EDITION/NAME.ipynb -o OUT.ipynb [-device spec] [-commit C]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return helpOr2(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "memlab lab: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *ipynb != "" || *outPath != "" {
		return runNotebook(*ipynb, *outPath, *dev, *commit, args, stdout, stderr)
	}
	re, err := regexp.Compile(*sel)
	if err != nil {
		fmt.Fprintf(stderr, "memlab lab: -run: %v\n", err)
		return 2
	}
	var cells []memlab.Cell
	for _, c := range memlab.Cells() {
		if re.MatchString(c.Notebook + " " + c.Section + " " + c.Name) {
			cells = append(cells, c)
		}
	}
	var exps []memlab.Experiment
	for _, e := range memlab.Experiments() {
		if re.MatchString(e.Section + " " + e.Name) {
			exps = append(exps, e)
		}
	}
	if len(exps)+len(cells) == 0 {
		fmt.Fprintf(stderr, "memlab lab: no cell or experiment matches %q\n", *sel)
		return 2
	}
	if *list {
		for _, c := range cells {
			fmt.Fprintf(stdout, "%s  %s  %s\n", c.Notebook, c.Section, c.Name)
		}
		for _, e := range exps {
			fmt.Fprintf(stdout, "%-5s %s\n", e.Section, e.Name)
		}
		return 0
	}
	if *plots != "" {
		if err := os.MkdirAll(*plots, 0o755); err != nil {
			fmt.Fprintf(stderr, "memlab lab: %v\n", err)
			return 1
		}
	}
	failed := 0
	if len(cells) > 0 {
		failed += runCells(cells, *dev, *plots, stdout)
	}
	for _, e := range exps {
		fmt.Fprintf(stdout, "=== %s %s\n", e.Section, e.Name)
		t0 := time.Now()
		rep, err := e.Run(*dev)
		if err != nil {
			fmt.Fprintf(stdout, "FAILED: %v\n\n", err)
			failed++
			continue
		}
		fmt.Fprintln(stdout, strings.TrimRight(rep.Text, "\n"))
		for i, f := range rep.Figures {
			if *plots == "" || f == nil {
				continue
			}
			name := fmt.Sprintf("%s-%s", e.Section, slug(e.Name))
			if len(rep.Figures) > 1 {
				name += fmt.Sprintf("-%d", i+1)
			}
			path := filepath.Join(*plots, name+".png")
			if err := saveFigure(f, path); err != nil {
				fmt.Fprintf(stdout, "FAILED to save a figure: %v\n", err)
				failed++
				continue
			}
			fmt.Fprintf(stdout, "figure: %s\n", path)
		}
		fmt.Fprintf(stdout, "(%s)\n\n", time.Since(t0).Round(time.Millisecond))
	}
	if failed > 0 {
		fmt.Fprintf(stdout, "%d of %d cells and experiments failed\n", failed, len(cells)+len(exps))
		return 1
	}
	fmt.Fprintf(stdout, "all %d cells and %d experiments ran\n", len(cells), len(exps))
	return 0
}

// saveFigure writes f to path (its extension names the format): memplot's
// figures can; another kind is an error.
func saveFigure(f memlab.Figure, path string) error {
	s, ok := f.(interface{ Save(path string) error })
	if !ok {
		return fmt.Errorf("memlab lab: a figure of type %T cannot be saved to a file", f)
	}
	return s.Save(path)
}

// runCells runs notebook cells as GoNB would, one after another: a cell opens
// its lab with memlab.MustOpen(), which reads the device from MEMLAB_DEVICE,
// so -device is passed that way. It returns how many cells failed.
func runCells(cells []memlab.Cell, dev, plots string, stdout io.Writer) (failed int) {
	if dev != "" {
		prev, had := os.LookupEnv(device.EnvVar)
		os.Setenv(device.EnvVar, dev)
		defer func() {
			if had {
				os.Setenv(device.EnvVar, prev)
			} else {
				os.Unsetenv(device.EnvVar)
			}
		}()
	}
	prevOut := memlab.Output
	memlab.Output = stdout
	defer func() { memlab.Output = prevOut }()
	for _, c := range cells {
		fmt.Fprintf(stdout, "=== %s · %s · %s\n", c.Notebook, c.Section, c.Name)
		n := 0
		prev := memlab.SetFigureSink(func(f memlab.Figure) error {
			n++
			if plots == "" {
				return nil
			}
			path := filepath.Join(plots, fmt.Sprintf("%s-%s-%d.png", slug(c.Notebook), slug(c.Name), n))
			if err := saveFigure(f, path); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "figure: %s\n", path)
			return nil
		})
		t0 := time.Now()
		_, err := c.Exec()
		memlab.SetFigureSink(prev)
		if err != nil {
			fmt.Fprintf(stdout, "FAILED: %v\n\n", err)
			failed++
			continue
		}
		fmt.Fprintf(stdout, "(%s)\n\n", time.Since(t0).Round(time.Millisecond))
	}
	return failed
}

var nonWord = regexp.MustCompile(`[^a-z0-9.]+`)

func slug(s string) string {
	return strings.Trim(nonWord.ReplaceAllString(strings.ToLower(s), "-"), "-")
}
