// Package progress shows, from a notebook cell, how far a learner has got with
// the course exercises of one notebook: which pass, which are under way, how many
// hints were seen, and what to do next. It reads the exercises' state as
// `memlab exercises list` does — their README's Section: line, the hints file
// .progress.json, and a `go test` run of their packages (cached by Go, so a
// second look is quick) — and prints in the edition's language (MEMLAB_LANG).
//
// Notebook cells cannot import memlab's internal packages; this is the public
// face of internal/workbook for them:
//
//	progress.Show("02") // the exercises of notebook 02
package progress

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"memlab.dev/memlab/internal/workbook"
	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memlab"
)

// Timeout bounds the go test run behind Of and Show.
const Timeout = 5 * time.Minute

// Exercise is one exercise and the learner's state on it.
type Exercise struct {
	Number    int    // its number, as `memlab exercises check N` takes it
	Slug      string // its folder, such as "04-round-size"
	Title     string // the README's title, in the workbook's edition (README.zh-CN.md's in Chinese)
	Section   string // the notebook section, such as "Notebook 02, §2.2 The caching allocator"
	Readme    string // the README's path from the repository root: exercises/04-round-size/README.md
	Work      string // the learner's copy of it (absolute), whose code is tested; "" when there is no working copy
	Passed    bool   // every test passes
	State     string // "passing", "not started", "in progress (3/7)" or "does not build"
	HintsSeen int    // hints revealed with `memlab exercises hint N`
	Hints     int    // hints it has
}

// notebookRE is a notebook's number.
var notebookRE = regexp.MustCompile(`^[0-9]{2}$`)

// Of returns the exercises whose Section: line names notebook nn ("02"), in
// order, with the learner's state on each; with nn "" it returns every
// exercise. The exercises folder is found from the working directory up (the
// repository's exercises/), as `memlab exercises` finds it; running their tests
// needs the Go toolchain on PATH.
func Of(nn string) ([]Exercise, error) {
	if nn != "" && !notebookRE.MatchString(nn) {
		return nil, fmt.Errorf("progress: notebook %q: want its two-digit number, such as \"02\"", nn)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("progress: %w", err)
	}
	root, err := workbook.FindRoot(cwd, "")
	if err != nil {
		return nil, fmt.Errorf("progress: %w", err)
	}
	all, err := workbook.Load(root)
	if err != nil {
		return nil, fmt.Errorf("progress: %w", err)
	}
	var exs []workbook.Exercise
	for _, ex := range all {
		if nn == "" || NotebookOf(ex.Section) == nn {
			exs = append(exs, ex)
		}
	}
	if len(exs) == 0 {
		return nil, nil
	}
	// The learner's working copy when there is one; else the exercises
	// folder itself (an instructor's checkout).
	work := workbook.WorkingCopy(root)
	hints, err := workbook.LoadProgress(workbook.ProgressDir(root, work))
	if err != nil {
		return nil, fmt.Errorf("progress: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	reports, err := workbook.RunExercises(ctx, root, work, exs, workbook.RunOptions{})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("progress: the exercises' tests took longer than %v: %w", Timeout, err)
		}
		return nil, fmt.Errorf("progress: %w", err)
	}
	out := make([]Exercise, len(exs))
	for i, ex := range exs {
		r := reports[ex.Slug]
		title := ex.Title
		if ed, err := workbook.InEdition(ex, lang.Current()); err == nil {
			title = ed.Title // the Chinese edition's title, from README.zh-CN.md
		}
		out[i] = Exercise{
			Number: ex.Number, Slug: ex.Slug, Title: title, Section: ex.Section,
			Readme:    filepath.ToSlash(filepath.Join("exercises", ex.Slug, "README.md")),
			Passed:    r != nil && r.Passed(),
			State:     workbook.State(r),
			HintsSeen: hints.HintsRevealed[ex.Slug],
			Hints:     len(ex.Hints),
		}
		if work != "" {
			out[i].Work = filepath.Join(work, ex.Slug)
		}
	}
	return out, nil
}

// NotebookOf is the notebook number a Section: line names ("Notebook 02, §2.2
// …" is "02"), or "" when it names none.
func NotebookOf(section string) string {
	rest, ok := strings.CutPrefix(section, "Notebook ")
	if !ok || len(rest) < 2 || !notebookRE.MatchString(rest[:2]) {
		return ""
	}
	return rest[:2]
}

// Show shows the learner's progress on the exercises of notebook nn ("02"): a
// table of them (folder, title) with their state and hints seen, then how many
// pass and the next one to do with the command that checks it. A notebook with
// no exercises of its own (00, 05) shows all the course's. In a notebook the
// table is HTML (memlab.Table); elsewhere it prints. What stops it (no
// exercises folder, no Go toolchain) is said in one line; it never panics.
func Show(nn string) {
	t, summary := Report(nn)
	if t != nil {
		t.Show()
	}
	memlab.ShowText(summary)
}

// Text is what Show shows, as plain text.
func Text(nn string) string {
	t, summary := Report(nn)
	if t == nil {
		return summary + "\n"
	}
	return t.String() + "\n" + summary + "\n"
}

// Report is Show's table (nil when there is nothing to tabulate) and the text
// after it, in the current edition's language, in lines that fit a notebook's
// output (memlab.OutputWidth).
func Report(nn string) (*memlab.Table, string) {
	zh := lang.Current() == lang.Chinese
	caption := ""
	exs, err := Of(nn)
	if err == nil && len(exs) == 0 && nn != "" {
		caption = fmt.Sprintf("Notebook %s has no exercises of its own; here are all the course's.", nn)
		if zh {
			caption = fmt.Sprintf("笔记本 %s 没有自己的练习；下面是本课程的全部练习。", nn)
		}
		exs, err = Of("")
	}
	switch {
	case errors.Is(err, exec.ErrNotFound) && zh:
		return nil, "这台机器上没有 Go 工具链，无法运行练习的测试；\n在你自己的仓库副本里运行这个单元格，即可看到你的练习进度。"
	case errors.Is(err, exec.ErrNotFound):
		return nil, "This machine has no Go toolchain to run the exercises' tests:\nrun this cell in your own checkout to see your progress on them."
	case err != nil && zh:
		return nil, "无法显示练习进度：" + err.Error()
	case err != nil:
		return nil, "Progress is not available here: " + err.Error()
	case len(exs) == 0 && zh:
		return nil, "没有找到练习。"
	case len(exs) == 0:
		return nil, "No exercises found."
	}
	// An exercise by its folder in exercises/, which holds its number and its
	// README.md (the Next line names the README's path): the table fits a
	// notebook's output.
	t := memlab.NewTable("Exercise", "Title", "Status", "Hints")
	if zh {
		t = memlab.NewTable("练习", "标题", "状态", "提示")
	}
	t.Caption = caption
	passing := 0
	var next *Exercise
	for i, ex := range exs {
		if ex.Passed {
			passing++
		} else if next == nil {
			next = &exs[i]
		}
		state := workbook.StateText(ex.State)
		t.Row(ex.Slug, strings.ReplaceAll(ex.Title, "`", ""), state, fmt.Sprintf("%d/%d", ex.HintsSeen, ex.Hints))
	}
	switch {
	case zh && next == nil:
		return t, fmt.Sprintf("%d 道练习全部通过。", len(exs))
	case zh && next.Work != "":
		return t, fmt.Sprintf("%d 道练习中已通过 %d 道。下一道：练习 %d —— 先读 %s，\n在笔记本 06 里完成它（你的副本：%s），\n再运行 go run ./cmd/memlab exercises check %d（检查的就是你的副本）；\n卡住了就运行 go run ./cmd/memlab exercises hint %d。",
			len(exs), passing, next.Number, next.Readme, shortPath(next.Work), next.Number, next.Number)
	case zh:
		return t, fmt.Sprintf("%d 道练习中已通过 %d 道。下一道：练习 %d —— 先读 %s，\n再运行 go run ./cmd/memlab exercises check %d；\n卡住了就运行 go run ./cmd/memlab exercises hint %d。",
			len(exs), passing, next.Number, next.Readme, next.Number, next.Number)
	case next == nil:
		return t, fmt.Sprintf("All %d exercises pass.", len(exs))
	case next.Work != "":
		return t, fmt.Sprintf("%d of %d exercises pass. Next: exercise %d — read %s,\nwrite it in notebook 06 (your copy: %s),\nthen go run ./cmd/memlab exercises check %d (it checks your copy;\ngo run ./cmd/memlab exercises hint %d if stuck).",
			passing, len(exs), next.Number, next.Readme, shortPath(next.Work), next.Number, next.Number)
	}
	return t, fmt.Sprintf("%d of %d exercises pass. Next: exercise %d — read %s,\nthen go run ./cmd/memlab exercises check %d\n(go run ./cmd/memlab exercises hint %d if stuck).",
		passing, len(exs), next.Number, next.Readme, next.Number, next.Number)
}

// shortPath is path from the repository root (MEMLAB_REPO, else the folder
// above the exercises) when it lies inside it, else path itself.
func shortPath(path string) string {
	repo := os.Getenv("MEMLAB_REPO")
	if repo == "" {
		cwd, _ := os.Getwd()
		if root, err := workbook.FindRoot(cwd, ""); err == nil {
			repo = filepath.Dir(root)
		}
	}
	if rel, err := filepath.Rel(repo, path); err == nil && repo != "" && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel) + "/"
	}
	return path + "/"
}
