package workbook

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ProgressFile is the name of the file, in the exercises folder, that records how
// many hints of each exercise a learner has seen. exercises/.gitignore keeps it out
// of version control.
const ProgressFile = ".progress.json"

// Progress is a learner's state that go test cannot derive: hints revealed so far.
type Progress struct {
	// HintsRevealed maps an exercise's folder name to the number of hints shown.
	HintsRevealed map[string]int `json:"hints_revealed"`
}

// ProgressDir returns the folder whose progress file records the learner's
// hints: the working copy work (see WorkingCopy) when there is one, else the
// exercises folder root itself (an instructor's checkout, or --tracked).
func ProgressDir(root, work string) string {
	if work != "" {
		return work
	}
	return root
}

// LoadProgress reads the progress file of the exercises folder root. A missing
// file is an empty Progress.
func LoadProgress(root string) (Progress, error) {
	p := Progress{HintsRevealed: map[string]int{}}
	data, err := os.ReadFile(filepath.Join(root, ProgressFile))
	if errors.Is(err, os.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return p, fmt.Errorf("workbook: %w", err)
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return p, fmt.Errorf("workbook: %s is corrupt (delete it to start over): %w", filepath.Join(root, ProgressFile), err)
	}
	if p.HintsRevealed == nil {
		p.HintsRevealed = map[string]int{}
	}
	return p, nil
}

// Save writes p to the progress file of the exercises folder root.
func (p Progress) Save(root string) error {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	if err := os.WriteFile(filepath.Join(root, ProgressFile), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("workbook: saving progress: %w", err)
	}
	return nil
}

// NextHint returns the next hint of ex that p has not revealed, its number
// (1-based) and true, and records it as revealed in p. When every hint has been
// shown it returns "", 0, false and leaves p unchanged.
func (p *Progress) NextHint(ex Exercise) (hint string, number int, ok bool) {
	if p.HintsRevealed == nil {
		p.HintsRevealed = map[string]int{}
	}
	shown := p.HintsRevealed[ex.Slug]
	if shown >= len(ex.Hints) {
		return "", 0, false
	}
	p.HintsRevealed[ex.Slug] = shown + 1
	return ex.Hints[shown], shown + 1, true
}
