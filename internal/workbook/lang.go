package workbook

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"memlab.dev/memlab/lang"
)

// ChineseSuffix is how an exercise's Chinese files are named beside the
// English ones: README.zh-CN.md beside README.md, HINTS.zh-CN.md beside HINTS.md.
const ChineseSuffix = ".zh-CN.md"

// InEdition returns ex as the edition reads it: for lang.Chinese, the title
// and hints of README.zh-CN.md and HINTS.zh-CN.md (a missing file keeps the
// English); for English, ex itself. The Chinese hints must be as many as the
// English ones, so that the hints already seen count the same in both.
func InEdition(ex Exercise, edition string) (Exercise, error) {
	if edition != lang.Chinese {
		return ex, nil
	}
	if readme, err := os.ReadFile(filepath.Join(ex.Dir, "README"+ChineseSuffix)); err == nil {
		if title, _ := parseReadme(string(readme)); title != "" {
			ex.Title = title
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return ex, fmt.Errorf("workbook: exercise %s: %w", ex.Slug, err)
	}
	data, err := os.ReadFile(filepath.Join(ex.Dir, "HINTS"+ChineseSuffix))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return ex, nil
	case err != nil:
		return ex, fmt.Errorf("workbook: exercise %s: %w", ex.Slug, err)
	}
	hints := parseHints(string(data))
	if len(hints) != len(ex.Hints) {
		return ex, fmt.Errorf("workbook: exercise %s: HINTS%s has %d hints, HINTS.md %d", ex.Slug, ChineseSuffix, len(hints), len(ex.Hints))
	}
	ex.Hints = hints
	return ex, nil
}
