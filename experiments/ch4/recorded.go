package ch4

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"memlab.dev/memlab/model"
)

//go:embed recorded
var recordedFS embed.FS

// Recording is one [Inference] run saved by `memlab ch4 -record FILE`: what
// ran, where and when, and the result. The program writes the whole file,
// header included, so that nothing in it is typed by hand.
type Recording struct {
	Command string    // the command line that made it
	Date    time.Time // when it ran, UTC
	Card    string    // the device's name, such as "NVIDIA H200"
	Result  InferenceResult
}

// NewRecording wraps r, run by command now.
func NewRecording(command string, r InferenceResult) Recording {
	return Recording{Command: command, Date: time.Now().UTC().Truncate(time.Second), Card: r.Card, Result: r}
}

// Header is the line that says where and when the run was made.
func (r Recording) Header() string {
	return fmt.Sprintf("# %s, %s: %s", r.Date.Format("2006-01-02 15:04 UTC"), r.Card, r.Command)
}

// Missing returns the modes of model.Modes the recording has no row for:
// modes added to memlab after the run was recorded, or left out by its
// -modes.
func (r Recording) Missing() []model.Mode {
	var out []model.Mode
	for _, m := range model.Modes {
		if _, ok := r.Result.Row(m); !ok {
			out = append(out, m)
		}
	}
	return out
}

// Note says which of today's modes the recording lacks, or is empty.
func (r Recording) Note() string {
	missing := r.Missing()
	if len(missing) == 0 {
		return ""
	}
	names := make([]string, len(missing))
	for i, m := range missing {
		names[i] = m.String()
	}
	list := fmt.Sprintf("the mode%s %s", plural(len(names)), strings.Join(names, ", "))
	if strings.Contains(r.Command, "-modes") {
		return "note: this recording left out (by its -modes) " + list
	}
	they := map[bool][2]string{true: {"they are", "them"}, false: {"it is", "it"}}[len(names) > 1]
	return fmt.Sprintf("note: this recording predates %s: %s not in it; run `memlab ch4 -device cuda -size %s` on a GPU for %s",
		list, they[0], r.Result.Size.Name, they[1])
}

// plural is "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// String prints the header, the note on missing modes if any, and the
// result's table.
func (r Recording) String() string {
	if n := r.Note(); n != "" {
		return r.Header() + "\n" + n + "\n" + r.Result.String()
	}
	return r.Header() + "\n" + r.Result.String()
}

// Marshal encodes the recording as the indented JSON LoadRecorded reads.
func (r Recording) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return nil, fmt.Errorf("ch4: Recording.Marshal: %w", err)
	}
	return append(b, '\n'), nil
}

// ParseRecording decodes a recording Marshal wrote and checks that it holds
// a result: a known size, at least one mode, no mode twice.
func ParseRecording(data []byte) (Recording, error) {
	var r Recording
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("ch4: ParseRecording: %w", err)
	}
	res := &r.Result
	switch {
	case r.Command == "" || r.Card == "" || r.Date.IsZero():
		return r, fmt.Errorf("ch4: ParseRecording: header incomplete (command %q, card %q, date %v)", r.Command, r.Card, r.Date)
	case len(res.Rows) == 0:
		return r, fmt.Errorf("ch4: ParseRecording: no modes")
	}
	if _, err := model.SizeByName(res.Size.Name); err != nil {
		return r, fmt.Errorf("ch4: ParseRecording: %w", err)
	}
	seen := map[model.Mode]bool{}
	for _, row := range res.Rows {
		if seen[row.Mode] {
			return r, fmt.Errorf("ch4: ParseRecording: mode %v twice", row.Mode)
		}
		seen[row.Mode] = true
	}
	return r, nil
}

// RecordedRuns are the runs saved in experiments/ch4/recorded (see its
// README), in file-name order: the GPU's figures, which a notebook on the
// simulated device cannot measure.
type RecordedRuns []Recording

// LoadRecorded returns the recorded runs embedded in the package.
func LoadRecorded() (RecordedRuns, error) {
	files, err := fs.Glob(recordedFS, "recorded/*.json")
	if err != nil {
		return nil, fmt.Errorf("ch4: LoadRecorded: %w", err)
	}
	var runs RecordedRuns
	for _, f := range files {
		b, err := recordedFS.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("ch4: LoadRecorded: %w", err)
		}
		r, err := ParseRecording(b)
		if err != nil {
			return nil, fmt.Errorf("ch4: LoadRecorded: %s: %w", path.Base(f), err)
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// Size returns the run of the named model size, or false.
func (r RecordedRuns) Size(name string) (Recording, bool) {
	for _, run := range r {
		if run.Result.Size.Name == name {
			return run, true
		}
	}
	return Recording{}, false
}

// String prints every run with its findings, or how to record one when
// there is none.
func (r RecordedRuns) String() string {
	if len(r) == 0 {
		return "no GPU run is recorded yet: see experiments/ch4/recorded/README.md for the command\n"
	}
	var b strings.Builder
	for _, run := range r {
		fmt.Fprintf(&b, "%s\n%s\n", run, run.Result.Findings())
	}
	return b.String()
}
