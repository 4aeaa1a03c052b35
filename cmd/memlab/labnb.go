package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"memlab.dev/memlab/internal/nbexec"
	"memlab.dev/memlab/memlab"
)

// runNotebook is memlab lab -ipynb: it runs a notebook's code cells (its
// package's memlab cells, in order) in this process and writes the executed
// notebook, with the device, date, commit and this command in its metadata.
// A cell that fails leaves an error output in the notebook written and makes
// the command fail.
func runNotebook(in, out, dev, commit string, args []string, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "memlab lab: "+format+"\n", a...)
		return 1
	}
	if in == "" || out == "" {
		fmt.Fprintln(stderr, "memlab lab: -ipynb and -o go together: memlab lab -ipynb notebooks/en/NAME.ipynb -o notebooks/executed/en/NAME.ipynb")
		return 2
	}
	if abs(in) == abs(out) {
		fmt.Fprintf(stderr, "memlab lab: -o %s would overwrite the notebook it executes\n", out)
		return 2
	}
	nb, err := nbexec.Read(in)
	if err != nil {
		return fail("%v", err)
	}
	name := strings.TrimSuffix(filepath.Base(in), ".ipynb")
	var cells []memlab.Cell
	for _, c := range memlab.Cells() {
		if c.Notebook == name {
			cells = append(cells, c)
		}
	}
	if len(cells) == 0 {
		return fail("-ipynb %s: no notebook %q is built into this memlab (its package under notebooks/src/ registers no cells)", in, name)
	}
	if commit == "" {
		b, err := exec.Command("git", "describe", "--always", "--dirty").Output()
		if err != nil {
			return fail("-commit not given and git describe failed (%v): pass -commit", err)
		}
		commit = strings.TrimSpace(string(b))
	}
	fmt.Fprintf(stdout, "=== %s (%s)\n", in, nb.Edition())
	err = nbexec.Execute(nb, nbexec.Options{
		Cells:    cells,
		Device:   dev,
		Commit:   commit,
		Command:  "memlab lab " + strings.Join(args, " "),
		Progress: stdout,
	})
	var cellErr *nbexec.CellError
	if err != nil && !errors.As(err, &cellErr) {
		return fail("-ipynb %s: %v", in, err)
	}
	data, encErr := nb.Encode()
	if encErr != nil {
		return fail("%v", encErr)
	}
	if mkErr := os.MkdirAll(filepath.Dir(out), 0o755); mkErr != nil {
		return fail("%v", mkErr)
	}
	if wErr := os.WriteFile(out, data, 0o644); wErr != nil {
		return fail("%v", wErr)
	}
	stamp, _ := nb.Executed()
	fmt.Fprintf(stdout, "wrote %s (device %s, commit %s)\n", out, stamp.Device, stamp.Commit)
	if err != nil {
		return fail("%s: cells failed (their errors are in the notebook written):\n%v", in, err)
	}
	return 0
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}
