package ch4

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

//go:embed recorded
var recordedFS embed.FS

// Recorded is the saved output of one `memlab ch4` run on a real device.
type Recorded struct {
	Name string // the file name without .txt, such as "h200-large"
	Text string
}

// RecordedRuns are the runs saved in experiments/ch4/recorded (see its
// README), in file-name order: the GPU's figures, which a notebook on the
// simulated device cannot measure.
type RecordedRuns []Recorded

// LoadRecorded returns the recorded runs embedded in the package.
func LoadRecorded() (RecordedRuns, error) {
	files, err := fs.Glob(recordedFS, "recorded/*.txt")
	if err != nil {
		return nil, fmt.Errorf("ch4: LoadRecorded: %w", err)
	}
	var runs RecordedRuns
	for _, f := range files {
		b, err := recordedFS.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("ch4: LoadRecorded: %w", err)
		}
		runs = append(runs, Recorded{Name: strings.TrimSuffix(path.Base(f), ".txt"), Text: string(b)})
	}
	return runs, nil
}

// String prints every run, or how to record one when there is none.
func (r RecordedRuns) String() string {
	if len(r) == 0 {
		return "no GPU run is recorded yet: see experiments/ch4/recorded/README.md for the command\n"
	}
	var b strings.Builder
	for _, run := range r {
		fmt.Fprintf(&b, "=== %s\n%s\n", run.Name, strings.TrimRight(run.Text, "\n"))
	}
	return b.String()
}
