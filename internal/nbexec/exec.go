package nbexec

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"memlab.dev/memlab/device"
	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
)

// Options are what [Execute] needs besides the notebook.
type Options struct {
	// Cells are the notebook's memlab cells in the notebook's order (its
	// package's Cells): the n-th cell with a "%%" line runs Cells[n].
	Cells []memlab.Cell
	// Device is MEMLAB_DEVICE for the run ("cuda", "sim"); "" keeps the
	// environment's choice (a GPU if there is one, else the simulator).
	Device string
	// Commit and Command go into the stamp (metadata memlab.executed).
	Commit, Command string
	// Now is the clock for the stamp's date; nil is time.Now.
	Now func() time.Time
	// Progress, if not nil, gets one line per executed cell.
	Progress io.Writer
}

// CellError is a cell that failed: the notebook still gets its outputs and
// an error output under the cell.
type CellError struct {
	Index int    // the cell's position in the notebook, from 1
	Name  string // the memlab cell's function name
	Err   error
}

// Error says which cell failed and why.
func (e *CellError) Error() string {
	return fmt.Sprintf("cell %d (%s): %v", e.Index, e.Name, e.Err)
}

// Unwrap returns the cell's own error.
func (e *CellError) Unwrap() error { return e.Err }

// Execute runs nb's code cells in order, in this process, and fills in their
// outputs as GoNB would show them: what the cell prints (stream outputs),
// tables and preformatted text (display_data, text/html and text/plain),
// figures (display_data, image/png) and a failure (an error output). Every code
// cell gets metadata memlab.source_sha256, the ones that run also
// memlab.elapsed_s and memlab.cell (the function's name); the notebook gets
// memlab.executed (see [Stamp]). MEMLAB_LANG is set from the notebook's
// metadata memlab.edition for the run.
//
// A notebook whose "%%" cells do not match opt.Cells one for one is an error
// before anything runs. Cells that fail are returned as *CellError values
// (errors.Join of them), after every cell has run: nb is then complete, with
// the errors shown under their cells.
func Execute(nb *Notebook, opt Options) error {
	edition := nb.Edition()
	if edition == "" {
		return errors.New("nbexec: the notebook has no metadata memlab.edition (generate it with go run ./scripts/mknotebooks)")
	}
	var mains []int
	for i, c := range nb.Cells {
		if c.CellType == "code" && IsMain(c.Source) {
			mains = append(mains, i)
		}
	}
	if len(mains) != len(opt.Cells) {
		return fmt.Errorf("nbexec: the notebook has %d cells that run (%%%%) but its package registers %d memlab cells: regenerate it with go run ./scripts/mknotebooks", len(mains), len(opt.Cells))
	}
	if opt.Commit == "" || opt.Command == "" {
		return errors.New("nbexec: the stamp needs a commit and a command")
	}
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}

	vars := map[string]string{"MEMLAB_LANG": edition}
	if opt.Device != "" {
		vars[device.EnvVar] = opt.Device
	}
	restore := setenv(vars)
	defer restore()
	desc, err := describe()
	if err != nil {
		return err
	}

	var failed []error
	count := 0
	next := 0
	for i, c := range nb.Cells {
		if c.CellType != "code" {
			continue
		}
		count++
		n := count
		c.ExecutionCount = &n
		c.Outputs = nil
		meta := map[string]any{"source_sha256": c.Source.SHA256()}
		if c.Metadata == nil {
			c.Metadata = map[string]any{}
		}
		c.Metadata["memlab"] = meta
		if !IsMain(c.Source) {
			continue
		}
		mc := opt.Cells[next]
		next++
		t0 := time.Now()
		outs, err := run(mc)
		elapsed := time.Since(t0).Seconds()
		c.Outputs = outs
		meta["cell"] = mc.Name
		meta["elapsed_s"] = math.Round(elapsed*1e6) / 1e6
		status := "ok"
		if err != nil {
			failed = append(failed, &CellError{Index: i + 1, Name: mc.Name, Err: err})
			c.Outputs = append(c.Outputs, map[string]any{
				"output_type": "error",
				"ename":       "memlab cell failed",
				"evalue":      err.Error(),
				"traceback":   []string{err.Error()},
			})
			status = "FAILED: " + err.Error()
		}
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "  cell %d %s: %.3fs %s\n", i+1, mc.Name, elapsed, status)
		}
	}
	nb.setExecuted(Stamp{Device: desc, Date: now().UTC().Format(time.RFC3339), Commit: opt.Commit, Command: opt.Command})
	return errors.Join(failed...)
}

// describe is the device line (memlab's DeviceLine, in English in either
// edition) for the device the cells will open: "cuda:0, NVIDIA H200, 139.80 GiB".
func describe() (string, error) {
	l, err := memlab.Open()
	if err != nil {
		return "", fmt.Errorf("nbexec: opening the device: %w", err)
	}
	defer l.Close()
	return l.DeviceLine(), nil
}

// setenv sets the variables and returns the function that restores them.
func setenv(vars map[string]string) (restore func()) {
	type saved struct {
		v   string
		had bool
	}
	prev := map[string]saved{}
	for k, v := range vars {
		old, had := os.LookupEnv(k)
		prev[k] = saved{old, had}
		os.Setenv(k, v)
	}
	return func() {
		for k, s := range prev {
			if s.had {
				os.Setenv(k, s.v)
			} else {
				os.Unsetenv(k)
			}
		}
	}
}

// run executes one memlab cell with stdout and stderr captured in files (so
// that what it prints is ordered exactly with what it displays) and returns
// its outputs.
func run(mc memlab.Cell) (outs []map[string]any, err error) {
	stdout, err := newCapture("stdout")
	if err != nil {
		return nil, err
	}
	defer stdout.close()
	stderr, err := newCapture("stderr")
	if err != nil {
		return nil, err
	}
	defer stderr.close()

	var sinkErr error
	flush := func() {
		for _, c := range []*capture{stdout, stderr} {
			text, err := c.drain()
			if err != nil {
				sinkErr = errors.Join(sinkErr, err)
			}
			outs = appendStream(outs, c.name, text)
		}
	}
	prevOut, prevErr, prevW := os.Stdout, os.Stderr, memlab.Output
	os.Stdout, os.Stderr, memlab.Output = stdout.f, stderr.f, nil
	prevFig := memlab.SetFigureSink(func(mf memlab.Figure) error {
		f, ok := mf.(*memplot.Figure)
		if !ok {
			return fmt.Errorf("nbexec: a figure of type %T, not a memplot figure", mf)
		}
		png, err := f.PNG()
		if err != nil {
			return err
		}
		flush()
		title := f.Plot.Title.Text // in the edition's words, where Name is an English slug
		if title == "" {
			title = f.Name
		}
		outs = append(outs, map[string]any{
			"output_type": "display_data",
			"data": map[string]any{
				"image/png":  base64.StdEncoding.EncodeToString(png),
				"text/plain": []string{fmt.Sprintf(lang.Text("<memlab figure: %s>"), strings.Join(strings.Fields(title), " "))},
			},
			"metadata": map[string]any{},
		})
		return nil
	})
	prevDisp := memlab.SetDisplaySink(func(d memlab.Display) error {
		flush()
		outs = append(outs, map[string]any{
			"output_type": "display_data",
			"data": map[string]any{
				"text/html":  splitLines(d.HTML),
				"text/plain": splitLines(d.Text),
			},
			"metadata": map[string]any{},
		})
		return nil
	})
	_, err = mc.Exec()
	memlab.SetDisplaySink(prevDisp)
	memlab.SetFigureSink(prevFig)
	os.Stdout, os.Stderr, memlab.Output = prevOut, prevErr, prevW
	flush()
	if sinkErr != nil {
		err = errors.Join(err, fmt.Errorf("nbexec: reading the cell's output: %w", sinkErr))
	}
	return outs, err
}

// appendStream appends text as a stream output, to the last output when it
// is the same stream.
func appendStream(outs []map[string]any, name, text string) []map[string]any {
	if text == "" {
		return outs
	}
	if n := len(outs); n > 0 && outs[n-1]["output_type"] == "stream" && outs[n-1]["name"] == name {
		prev := strings.Join(outs[n-1]["text"].([]string), "")
		outs[n-1]["text"] = splitLines(prev + text)
		return outs
	}
	return append(outs, map[string]any{"output_type": "stream", "name": name, "text": splitLines(text)})
}

// capture is a temporary file standing in for stdout or stderr.
type capture struct {
	name string
	f    *os.File
	off  int64
}

func newCapture(name string) (*capture, error) {
	f, err := os.CreateTemp("", "memlab-cell-"+name+"-*")
	if err != nil {
		return nil, fmt.Errorf("nbexec: capturing %s: %w", name, err)
	}
	return &capture{name: name, f: f}, nil
}

// drain returns what was written since the last drain.
func (c *capture) drain() (string, error) {
	end, err := c.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return "", err
	}
	if end <= c.off {
		return "", nil
	}
	buf := make([]byte, end-c.off)
	if _, err := c.f.ReadAt(buf, c.off); err != nil {
		return "", err
	}
	c.off = end
	return string(buf), nil
}

func (c *capture) close() {
	c.f.Close()
	os.Remove(c.f.Name())
}
