// Package workbook finds, describes and runs the exercises of the memlab course:
// the numbered folders of the exercises/ module, their instructions and hints, a
// learner's revealed-hint progress, and their go test results.
//
// It is the engine behind "memlab exercises". Exercises are plain Go packages, so
// everything here works offline with only the Go toolchain.
package workbook

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Command is the one way the course tells a learner to run the exercise
// commands: from the repository root, with Go alone (make lab installs it),
// so every instruction and every message prints it the same way.
const Command = "go run ./cmd/memlab exercises"

// ModulePath is the module path of the exercises module (exercises/go.mod).
const ModulePath = "memlab.dev/memlab/exercises"

// Exercise is one exercise folder.
type Exercise struct {
	Number  int      // position in the course, from the folder name ("04-…" is 4)
	Slug    string   // folder name, such as "04-round-size"
	Title   string   // the README's title without its number
	Section string   // the notebook section it belongs to, such as "Notebook 02, §2.2 The caching allocator"
	Dir     string   // absolute path of the folder
	Hints   []string // hint texts from HINTS.md, in order
}

// ErrNotFound is returned (wrapped) by FindRoot when no exercises module is found.
var ErrNotFound = errors.New("workbook: exercises folder not found")

// FindRoot returns the absolute path of the exercises module to use. If dir is not
// empty it must be that folder (the one holding the exercises' go.mod). Otherwise
// FindRoot walks up from start and, at each level, accepts the folder itself or its
// "exercises" subfolder if it holds a go.mod declaring ModulePath.
func FindRoot(start, dir string) (string, error) {
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", fmt.Errorf("workbook: %w", err)
		}
		if !isExercisesModule(abs) {
			return "", fmt.Errorf("%w: %s has no go.mod declaring module %s", ErrNotFound, abs, ModulePath)
		}
		return abs, nil
	}
	cur, err := filepath.Abs(start)
	if err != nil {
		return "", fmt.Errorf("workbook: %w", err)
	}
	for {
		for _, cand := range []string{cur, filepath.Join(cur, "exercises")} {
			if isExercisesModule(cand) {
				return cand, nil
			}
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", fmt.Errorf("%w above %s (run inside the memlab repository or pass --dir)", ErrNotFound, start)
		}
		cur = parent
	}
}

// isExercisesModule reports whether dir holds a go.mod declaring ModulePath.
func isExercisesModule(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	return modulePath(data) == ModulePath
}

// modulePath returns the module path declared in the go.mod contents data.
func modulePath(data []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module"); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// slugPattern matches an exercise folder name: two digits, a dash, a name.
var slugPattern = regexp.MustCompile(`^([0-9]{2})-[a-z0-9-]+$`)

// Load reads every exercise folder of the exercises module at root, ordered by
// number. A folder is an exercise if its name matches "NN-name" and it holds a
// README.md.
func Load(root string) ([]Exercise, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("workbook: %w", err)
	}
	var exs []Exercise
	for _, e := range entries {
		m := slugPattern.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		ex, err := loadExercise(filepath.Join(root, e.Name()))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		exs = append(exs, ex)
	}
	if len(exs) == 0 {
		return nil, fmt.Errorf("%w: %s holds no NN-name folders with a README.md", ErrNotFound, root)
	}
	sort.Slice(exs, func(i, j int) bool { return exs[i].Number < exs[j].Number })
	return exs, nil
}

// loadExercise reads one exercise folder.
func loadExercise(dir string) (Exercise, error) {
	slug := filepath.Base(dir)
	n, _ := strconv.Atoi(slug[:2])
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		return Exercise{}, fmt.Errorf("workbook: exercise %s: %w", slug, err)
	}
	ex := Exercise{Number: n, Slug: slug, Dir: dir}
	ex.Title, ex.Section = parseReadme(string(readme))
	if ex.Title == "" {
		ex.Title = slug
	}
	hints, err := os.ReadFile(filepath.Join(dir, "HINTS.md"))
	switch {
	case err == nil:
		ex.Hints = parseHints(string(hints))
	case !errors.Is(err, os.ErrNotExist):
		return Exercise{}, fmt.Errorf("workbook: exercise %s: %w", slug, err)
	}
	return ex, nil
}

// markdownLink matches [text](target).
var markdownLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// parseReadme returns the title (the first "# " heading, without a leading
// "NN · ") and the section (the text of the "Section:" line, links reduced to their
// text) of an exercise README.
func parseReadme(s string) (title, section string) {
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if t, ok := strings.CutPrefix(line, "# "); ok && title == "" {
			title = t
			if num, rest, ok := strings.Cut(t, "·"); ok && strings.TrimSpace(num) != "" && isDigits(strings.TrimSpace(num)) {
				title = strings.TrimSpace(rest)
			}
		}
		if sec, ok := strings.CutPrefix(line, "Section:"); ok && section == "" {
			section = strings.TrimSpace(markdownLink.ReplaceAllString(sec, "$1"))
		}
	}
	return title, section
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// parseHints splits HINTS.md into hints: the text under each "## " heading, in order.
func parseHints(s string) []string {
	var hints []string
	var cur *strings.Builder
	flush := func() {
		if cur != nil {
			if h := strings.TrimSpace(cur.String()); h != "" {
				hints = append(hints, h)
			}
		}
	}
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "## ") {
			flush()
			cur = &strings.Builder{}
			continue
		}
		if cur != nil {
			cur.WriteString(line)
			cur.WriteByte('\n')
		}
	}
	flush()
	return hints
}

// Lookup returns the exercise that arg names: its number ("4" or "04"), its folder
// name ("04-round-size") or the folder name without the number ("round-size").
func Lookup(exs []Exercise, arg string) (Exercise, error) {
	if n, err := strconv.Atoi(arg); err == nil {
		for _, ex := range exs {
			if ex.Number == n {
				return ex, nil
			}
		}
		return Exercise{}, fmt.Errorf("workbook: no exercise number %d (there are %d; try \"%s list\")", n, len(exs), Command)
	}
	for _, ex := range exs {
		if ex.Slug == arg || ex.Slug[3:] == arg {
			return ex, nil
		}
	}
	return Exercise{}, fmt.Errorf("workbook: no exercise named %q (try \"%s list\")", arg, Command)
}
