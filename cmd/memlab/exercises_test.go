package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"memlab.dev/memlab/internal/workbook/workbooktest"
	"memlab.dev/memlab/progress"
)

// TestExercisesSession walks through the command as a new learner and an
// instructor would, on a scratch copy of two real exercises: list, hints one at a
// time, a failing check, the solution swapped in, a passing check, grading.
func TestExercisesSession(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	root := workbooktest.Module(t, "01-strides", "05-segment-size")
	t.Setenv("MEMLAB_WORKBOOK", t.TempDir()) // no working copy: the tracked folder, as an instructor's
	work := filepath.Join(t.TempDir(), "workbook", "exercises")
	stubCopy := filepath.Join(t.TempDir(), "my-attempt")
	if err := os.CopyFS(stubCopy, os.DirFS(filepath.Join(root, "05-segment-size"))); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name     string
		before   func(t *testing.T)
		args     []string
		wantCode int
		wantOut  []string // substrings of stdout
		notOut   []string // must not be in stdout
		wantErr  string   // substring of stderr
	}{
		{name: "list as shipped", args: []string{"list"}, wantOut: []string{
			"Row-major strides", "Notebook 02, §2.1 Tensor storage and views", "not started", "0/3", "0 of 2 exercises pass", "Next: exercise 1"}},
		{name: "first hint", args: []string{"hint", "1"}, wantOut: []string{"hint 1 of 3", "running product", `"go run ./cmd/memlab exercises hint 1" again`}},
		{name: "second hint", args: []string{"hint", "01-strides"}, wantOut: []string{"hint 2 of 3", "max(size, 1)"}, notOut: []string{"Walk the dimensions"}},
		{name: "third hint", args: []string{"hint", "strides"}, wantOut: []string{"hint 3 of 3"}, notOut: []string{"again for the next"}},
		{name: "no more hints", args: []string{"hint", "1"}, wantOut: []string{"All 3 hints of exercise 1 are shown", "HINTS.md"}},
		{name: "check the stub", args: []string{"check", "1"}, wantCode: 1, wantOut: []string{
			"Exercise 1 · Row-major strides", "TODO  TestA_RowMajorStrides — RowMajorStrides: not implemented yet", "exercise 1 is not started"}},
		{name: "check after solving", before: func(t *testing.T) { workbooktest.SwapInSolution(t, filepath.Join(root, "01-strides")) },
			args: []string{"check", "1"}, wantOut: []string{"PASS  TestA_RowMajorStrides (8/8)", "PASS  all", "Next: exercise 5"}, notOut: []string{"FAIL", "TODO"}},
		{name: "one part only", args: []string{"check", "--run", "TestB", "1"}, wantOut: []string{"PASS  TestB_Offset"}, notOut: []string{"TestA_"}},
		{name: "list after solving", args: []string{"list"}, wantOut: []string{"passing", "3/3", "1 of 2 exercises pass", "Next: exercise 5"}},
		{name: "instructor checks a solution", args: []string{"check", "5", "--solution"}, wantOut: []string{"PASS  all"}},
		{name: "grade a solved folder", args: []string{"grade", "--student", filepath.Join(root, "01-strides")}, wantOut: []string{"Score for 01-strides: 25/25 cases"}},
		{name: "grade a folder named otherwise", args: []string{"grade", "--student", stubCopy, "--exercise", "5"}, wantCode: 1, wantOut: []string{"Score for 05-segment-size: 0/", "not started"}},
		{name: "grade a whole exercises folder as JSON", args: []string{"grade", "--json", "--student", root}, wantCode: 1, wantOut: []string{
			`{"exercise":"01-strides","state":"passing","passed":25,"total":25}`, `{"exercise":"05-segment-size","state":"not started"`}},
		{name: "copy for the notebook", args: []string{"copy", "5", "--to", work}, wantOut: []string{"exercise 5: your copy is " + filepath.Join(work, "05-segment-size")}},
		{name: "copy kept", args: []string{"copy", "5", "--to", work}, wantOut: []string{"is kept as it is"}},
		{name: "check the copy", args: []string{"check", "5", "--student", filepath.Join(work, "05-segment-size")}, wantCode: 1, wantOut: []string{"exercise 5 is not started"}},
		{name: "check a copy that is not there", args: []string{"check", "5", "--student", filepath.Join(work, "nothing")}, wantCode: 1, wantErr: "no such file"},
		{name: "--run matching nothing", args: []string{"check", "1", "--run", "TestZ"}, wantCode: 2, wantErr: "no test of exercise 1 matches --run \"TestZ\""},
		{name: "no command", args: nil, wantCode: 2, wantErr: "usage: memlab exercises"},
		{name: "unknown command", args: []string{"frobnicate"}, wantCode: 2, wantErr: `unknown command "frobnicate"`},
		{name: "check without N", args: []string{"check"}, wantCode: 2, wantErr: "usage: memlab exercises check N"},
		{name: "check of a missing exercise", args: []string{"check", "99"}, wantCode: 2, wantErr: "no exercise number 99"},
		{name: "hint of an unknown name", args: []string{"hint", "nope"}, wantCode: 2, wantErr: `no exercise named "nope"`},
		{name: "list with arguments", args: []string{"list", "extra"}, wantCode: 2, wantErr: "unexpected arguments"},
		{name: "grade without --student", args: []string{"grade"}, wantCode: 2, wantErr: "usage: memlab exercises grade"},
		{name: "grade of a folder with nothing to grade", args: []string{"grade", "--student", t.TempDir()}, wantCode: 2, wantErr: "neither an exercise folder"},
		{name: "grade of a missing folder", args: []string{"grade", "--student", filepath.Join(root, "missing")}, wantCode: 2, wantErr: "no such file"},
		{name: "help", args: []string{"help"}, wantOut: []string{"grade --student PATH"}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if s.before != nil {
				s.before(t)
			}
			var stdout, stderr bytes.Buffer
			args := append([]string{"exercises", "--dir", root}, s.args...)
			code := run(args, &stdout, &stderr)
			if code != s.wantCode {
				t.Fatalf("memlab %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(s.args, " "), code, s.wantCode, stdout.String(), stderr.String())
			}
			for _, w := range s.wantOut {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("memlab exercises %s: stdout lacks %q:\n%s", strings.Join(s.args, " "), w, stdout.String())
				}
			}
			for _, w := range s.notOut {
				if strings.Contains(stdout.String(), w) {
					t.Errorf("memlab exercises %s: stdout should not contain %q:\n%s", strings.Join(s.args, " "), w, stdout.String())
				}
			}
			if !strings.Contains(stderr.String(), s.wantErr) {
				t.Errorf("memlab exercises %s: stderr lacks %q:\n%s", strings.Join(s.args, " "), s.wantErr, stderr.String())
			}
		})
	}
	var progress struct {
		HintsRevealed map[string]int `json:"hints_revealed"`
	}
	data, err := os.ReadFile(filepath.Join(root, ".progress.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &progress); err != nil || progress.HintsRevealed["01-strides"] != 3 {
		t.Errorf(".progress.json = %s (%v); want 3 hints revealed for 01-strides", data, err)
	}
}

// TestExercisesWorkingCopy is a learner's one path: exercise 1 solved in the
// working copy (as notebook 06's %%writefile cell leaves it) passes in list and
// check and in progress.Of, hints are remembered there, a not-started check is
// calm with --not-started-ok, an unchanged copy is answered from the results
// kept (no go run at all), and the tracked exercises folder never changes.
func TestExercisesWorkingCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	root := workbooktest.Module(t, "01-strides", "05-segment-size")
	before := treeSum(t, root)
	wb := t.TempDir()
	t.Setenv("MEMLAB_WORKBOOK", wb)
	t.Setenv("MEMLAB_LANG", "en")
	work := filepath.Join(wb, "exercises")
	exercises := func(wantCode int, args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := run(append([]string{"exercises", "--dir", root}, args...), &stdout, &stderr); code != wantCode {
			t.Fatalf("memlab exercises %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, wantCode, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	exercises(0, "copy", "1", "5") // as make lab and notebook 06 do
	if out := exercises(0, "list"); !strings.Contains(out, "your working copy "+work) || !strings.Contains(out, "0 of 2 exercises pass") {
		t.Errorf("list on a fresh working copy:\n%s", out)
	}
	exercises(0, "hint", "1")
	if _, err := os.Stat(filepath.Join(work, ".progress.json")); err != nil {
		t.Errorf("hint not remembered in the working copy: %v", err)
	}
	if out := exercises(1, "check", "1"); !strings.Contains(out, "Your copy: "+filepath.Join(work, "01-strides")) || !strings.Contains(out, "exercise 1 is not started") {
		t.Errorf("check 1 of the copy as made:\n%s", out)
	}
	if out := exercises(0, "check", "1", "--not-started-ok"); !strings.Contains(out, "TODO  exercise 1 is not started") {
		t.Errorf("check 1 --not-started-ok:\n%s", out)
	}
	// Solved in the copy: its stub replaced by the reference solution.
	mine := filepath.Join(work, "01-strides")
	sol, err := os.ReadFile(filepath.Join(root, "01-strides", "strides_solution.go"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, "strides_solution.go"), sol, 0o644); err != nil {
		t.Fatal(err)
	}
	workbooktest.SwapInSolution(t, mine)
	if out := exercises(0, "check", "1"); !strings.Contains(out, "PASS  all 25 cases of exercise 1 pass") {
		t.Errorf("check 1 after solving it in the working copy:\n%s", out)
	}
	if out := exercises(1, "--tracked", "check", "1"); !strings.Contains(out, "not started") {
		t.Errorf("check 1 --tracked (the instructor's stub):\n%s", out)
	}
	if out := exercises(0, "list"); !strings.Contains(out, "1 of 2 exercises pass") || !strings.Contains(out, "passing") {
		t.Errorf("list after solving exercise 1 in the working copy:\n%s", out)
	}
	// The checker speaks the edition's language (MEMLAB_LANG, as notebook 06's
	// Chinese edition sets it).
	t.Setenv("MEMLAB_LANG", "zh-CN")
	if out := exercises(0, "check", "1"); !strings.Contains(out, "你的副本：") || !strings.Contains(out, "PASS  练习 1 的全部 25 个用例通过") || !strings.Contains(out, "下一道：练习 5") {
		t.Errorf("check 1 in Chinese:\n%s", out)
	}
	if out := exercises(0, "list"); !strings.Contains(out, "2 道练习中已通过 1 道") || !strings.Contains(out, "未开始") {
		t.Errorf("list in Chinese:\n%s", out)
	}
	t.Setenv("MEMLAB_LANG", "en")
	t.Chdir(root)
	exs, err := progress.Of("")
	if err != nil || len(exs) != 2 || exs[0].State != "passing" || exs[0].HintsSeen != 1 || exs[1].State != "not started" || exs[0].Work != mine {
		t.Errorf("progress.Of after solving exercise 1 in the working copy: %+v, %v", exs, err)
	}
	if text := progress.Text("02"); !strings.Contains(text, "passing") || !strings.Contains(text, "write it in notebook 06") {
		t.Errorf("progress.Text(\"02\"):\n%s", text)
	}
	// Nothing changed since: the results kept answer, and go is not run (a
	// go of the same version that only leaves a mark).
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	goBin, _ = filepath.EvalSymlinks(goBin)
	version, err := os.ReadFile(filepath.Join(filepath.Dir(goBin), "..", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	fake := t.TempDir()
	mark := filepath.Join(fake, "ran")
	if err := os.Mkdir(filepath.Join(fake, "bin"), 0o755); err == nil {
		err = os.WriteFile(filepath.Join(fake, "VERSION"), version, 0o644)
		if err == nil {
			err = os.WriteFile(filepath.Join(fake, "bin", "go"), []byte("#!/bin/sh\ntouch "+mark+"\nexit 1\n"), 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", filepath.Join(fake, "bin"))
	if out := exercises(0, "list"); !strings.Contains(out, "1 of 2 exercises pass") {
		t.Errorf("list of an unchanged working copy:\n%s", out)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("list of an unchanged working copy ran go")
	}
	if treeSum(t, root) != before {
		t.Error("the tracked exercises folder changed")
	}
}

// treeSum is a digest of the names and contents of every file under dir.
func treeSum(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(data))
		h.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestExercisesFindsFolderFromWorkingDirectory(t *testing.T) {
	t.Setenv("MEMLAB_WORKBOOK", t.TempDir())
	root := workbooktest.Module(t, "05-segment-size")
	t.Chdir(filepath.Join(root, "05-segment-size"))
	var stdout, stderr bytes.Buffer
	if code := run([]string{"exercises", "hint", "5"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "hint 1 of 2") {
		t.Fatalf("hint 5 from inside the exercise folder: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if _, err := os.Stat(filepath.Join(root, ".progress.json")); err != nil {
		t.Errorf("progress not saved in the exercises folder found from the working directory: %v", err)
	}
	t.Chdir(t.TempDir())
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"exercises", "list"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "exercises folder not found") {
		t.Errorf("list far from any exercises folder: exit %d, stderr %q; want 1 and a clear message", code, stderr.String())
	}
}

// TestExercisesHintInChinese: with MEMLAB_LANG=zh-CN the hint command shows
// HINTS.zh-CN.md, under the exercise's Chinese title, and counts hints as the
// English does.
func TestExercisesHintInChinese(t *testing.T) {
	root := workbooktest.Module(t, "07-split")
	t.Setenv("MEMLAB_LANG", "zh-CN")
	for _, want := range [][]string{
		{"练习 7 · 分割一个块 —— 第 1 条提示（共 2 条）", "remaining := blockSize - size", "再运行一次"},
		{"第 2 条提示（共 2 条）", "用 `append` 构造结果"},
		{"练习 7 的 2 条提示都已显示过", "HINTS.zh-CN.md"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run([]string{"exercises", "--dir", root, "hint", "7"}, &stdout, &stderr); code != 0 {
			t.Fatalf("memlab exercises hint 7: exit %d\n%s%s", code, stdout.String(), stderr.String())
		}
		for _, w := range want {
			if !strings.Contains(stdout.String(), w) {
				t.Errorf("hint 7 in Chinese lacks %q:\n%s", w, stdout.String())
			}
		}
	}
}
