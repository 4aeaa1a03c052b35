package main

import (
	"bytes"
	"memlab.dev/memlab/internal/workbook/workbooktest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// fixture is a checkout in a temporary folder: pristine notebooks and a workbook.
type fixture struct {
	t             *testing.T
	nb, wb        string
	clock         time.Time
	stdout, errst string
}

func newFixture(t *testing.T) *fixture {
	d := t.TempDir()
	f := &fixture{t: t, nb: filepath.Join(d, "notebooks"), wb: filepath.Join(d, "workbook"),
		clock: time.Date(2026, 12, 1, 15, 45, 0, 0, time.UTC)}
	f.write(filepath.Join(f.nb, "en", "00-setup-and-tour.ipynb"), "en 00 v1")
	f.write(filepath.Join(f.nb, "en", "02-memory-mechanics.ipynb"), "en 02 v1")
	f.write(filepath.Join(f.nb, "en", "04-reuse-and-sharing.ipynb"), "en 04 v1")
	f.write(filepath.Join(f.nb, "zh-CN", "00-setup-and-tour.ipynb"), "zh 00 v1")
	return f
}

func (f *fixture) write(path, s string) {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) read(path string) string {
	f.t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

func (f *fixture) copy(ed, name string) string { return filepath.Join(f.wb, ed, name+".ipynb") }

// run runs the command and returns its exit status; its outputs are in
// f.stdout and f.errst.
func (f *fixture) run(args ...string) int {
	var o, e bytes.Buffer
	rc := run(append([]string{"-notebooks", f.nb, "-workbook", f.wb}, args...), &o, &e, func() time.Time { return f.clock })
	f.stdout, f.errst = o.String(), e.String()
	return rc
}

func (f *fixture) mustRun(args ...string) string {
	f.t.Helper()
	if rc := f.run(args...); rc != 0 {
		f.t.Fatalf("workbook %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), rc, f.stdout, f.errst)
	}
	return f.stdout
}

func TestSyncCreatesEveryEditionsCopies(t *testing.T) {
	f := newFixture(t)
	out := f.mustRun("sync")
	for _, c := range []struct{ ed, name, want string }{
		{"en", "00-setup-and-tour", "en 00 v1"},
		{"en", "02-memory-mechanics", "en 02 v1"},
		{"en", "04-reuse-and-sharing", "en 04 v1"},
		{"zh-CN", "00-setup-and-tour", "zh 00 v1"},
	} {
		if got := f.read(f.copy(c.ed, c.name)); got != c.want {
			t.Errorf("%s/%s: copy holds %q, want %q", c.ed, c.name, got, c.want)
		}
	}
	for _, want := range []string{"en: 3 working copies", "(3 created)", "zh-CN: 1 working copy in", "(1 created)"} {
		if !strings.Contains(out, want) {
			t.Errorf("sync said %q, want it to contain %q", out, want)
		}
	}
	// A second sync changes nothing and says nothing was created.
	out = f.mustRun("sync")
	if strings.Contains(out, "created") {
		t.Errorf("second sync: %q", out)
	}
}

func TestSyncNeverOverwritesAnEditedCopy(t *testing.T) {
	f := newFixture(t)
	f.mustRun("sync")
	c := f.copy("en", "02-memory-mechanics")
	f.write(c, "my edits")

	// Pristine unchanged: kept, no warning.
	out := f.mustRun("sync")
	if f.read(c) != "my edits" {
		t.Fatalf("sync overwrote an edited copy")
	}
	if strings.Contains(out, "keeps your edits") {
		t.Errorf("warned with the pristine notebook unchanged: %q", out)
	}

	// Pristine changed: still kept, and one line names the copy and the restore command.
	f.write(filepath.Join(f.nb, "en", "02-memory-mechanics.ipynb"), "en 02 v2")
	out = f.mustRun("sync")
	if f.read(c) != "my edits" {
		t.Fatalf("sync overwrote an edited copy whose pristine notebook changed")
	}
	var warn []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "keeps your edits") {
			warn = append(warn, l)
		}
	}
	if len(warn) != 1 || !strings.Contains(warn[0], c) || !strings.Contains(warn[0], "scripts/lab.sh restore --edition en 02-memory-mechanics") {
		t.Errorf("want one line naming %s and its restore command, got %q", c, out)
	}
	if !strings.Contains(f.mustRun("status"), "edited, pristine-changed") {
		t.Errorf("status: %s", f.stdout)
	}
}

func TestSyncRefreshesAnUneditedCopy(t *testing.T) {
	f := newFixture(t)
	f.mustRun("sync")
	f.write(filepath.Join(f.nb, "en", "00-setup-and-tour.ipynb"), "en 00 v2")
	if st := f.mustRun("status"); !regexp.MustCompile(`en\s+00-setup-and-tour.ipynb\s+pristine-changed \(not edited`).MatchString(st) {
		t.Errorf("status before the refresh: %s", st)
	}
	out := f.mustRun("sync")
	if got := f.read(f.copy("en", "00-setup-and-tour")); got != "en 00 v2" {
		t.Errorf("unedited copy holds %q after sync, want the changed notebook", got)
	}
	if !strings.Contains(out, "1 refreshed") || strings.Contains(out, "keeps your edits") {
		t.Errorf("sync said %q", out)
	}
	// Refreshed again on the next change: the record follows the copy.
	f.write(filepath.Join(f.nb, "en", "00-setup-and-tour.ipynb"), "en 00 v3")
	f.mustRun("sync")
	if got := f.read(f.copy("en", "00-setup-and-tour")); got != "en 00 v3" {
		t.Errorf("after a second change the copy holds %q", got)
	}
}

func TestACopyWithoutARecordCountsAsEdited(t *testing.T) {
	f := newFixture(t)
	c := f.copy("en", "02-memory-mechanics")
	f.write(c, "made by hand")
	out := f.mustRun("sync")
	if f.read(c) != "made by hand" {
		t.Fatal("sync overwrote a copy it has no record of")
	}
	if !strings.Contains(out, "keeps your edits") {
		t.Errorf("sync said %q", out)
	}
}

func TestRestore(t *testing.T) {
	f := newFixture(t)
	f.mustRun("sync")
	c := f.copy("en", "02-memory-mechanics")
	f.write(c, "my edits")
	f.write(filepath.Join(f.nb, "en", "02-memory-mechanics.ipynb"), "en 02 v2")

	out := f.mustRun("restore", "-edition", "en", "02")
	bak := c + ".bak-20261201T154500Z"
	if got := f.read(c); got != "en 02 v2" {
		t.Errorf("restored copy holds %q", got)
	}
	if got := f.read(bak); got != "my edits" {
		t.Errorf("backup holds %q", got)
	}
	if !strings.Contains(out, "replaced "+c) || !strings.Contains(out, bak) {
		t.Errorf("restore said %q", out)
	}
	if !strings.Contains(f.mustRun("sync"), "en: 3 working copies") || strings.Contains(f.stdout, "edited") {
		t.Errorf("after restore, sync says %q", f.stdout)
	}

	// The same second: a second backup gets its own name.
	f.write(c, "more edits")
	f.mustRun("restore", "-edition", "en", "02-memory-mechanics.ipynb")
	if got := f.read(bak + "-2"); got != "more edits" {
		t.Errorf("second backup holds %q", got)
	}
	if got := f.read(bak); got != "my edits" {
		t.Errorf("first backup was overwritten: %q", got)
	}

	// Already pristine: nothing replaced, no backup.
	out = f.mustRun("restore", "-edition", "en", "02-memory-mechanics")
	if !strings.Contains(out, "nothing to restore") {
		t.Errorf("restore of a pristine copy said %q", out)
	}
	if _, err := os.Stat(bak + "-3"); err == nil {
		t.Error("restore of a pristine copy made a backup")
	}
}

func TestRestoreAllOfAnEdition(t *testing.T) {
	f := newFixture(t)
	f.mustRun("sync")
	f.write(f.copy("en", "00-setup-and-tour"), "edit 00")
	f.write(f.copy("en", "04-reuse-and-sharing"), "edit 04")
	f.write(f.copy("zh-CN", "00-setup-and-tour"), "edit zh")
	out := f.mustRun("restore", "-edition", "en")
	if n := strings.Count(out, "your copy is kept as"); n != 2 {
		t.Errorf("restore of all en copies replaced %d, want 2: %q", n, out)
	}
	if f.read(f.copy("en", "00-setup-and-tour")) != "en 00 v1" || f.read(f.copy("en", "04-reuse-and-sharing")) != "en 04 v1" {
		t.Error("en copies not restored")
	}
	if f.read(f.copy("zh-CN", "00-setup-and-tour")) != "edit zh" {
		t.Error("restore -edition en touched the zh-CN copy")
	}
	// What to click in JupyterLab, naming the notebooks replaced, in the
	// edition's language (its language pack's words for zh-CN).
	if !strings.Contains(out, "JupyterLab still shows the old 00-setup-and-tour, 04-reuse-and-sharing if it is open there") ||
		!strings.Contains(out, "File ▸ Reload Notebook from Disk") || !strings.Contains(out, "click Revert") {
		t.Errorf("restore -edition en does not say how to reload: %q", out)
	}
	out = f.mustRun("restore", "-edition", "zh-CN")
	for _, w := range []string{"你的那份保存为", "如果 00-setup-and-tour 正在 JupyterLab 里打开", "点“文件”菜单里的“从磁盘重新加载 笔记本”", "“文件已更改”，点“撤回”"} {
		if !strings.Contains(out, w) {
			t.Errorf("restore -edition zh-CN lacks %q: %q", w, out)
		}
	}
}

func TestRestoreRefusesBadInput(t *testing.T) {
	f := newFixture(t)
	f.mustRun("sync")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"restore", "-edition", "fr"}, `edition "fr": want one of en, zh-CN`},
		{[]string{"restore", "-edition", "en", "03"}, `"03": `},
		{[]string{"restore", "-edition", "en", "0"}, "more than one notebook of en starts with it"},
		{[]string{"restore", "-edition", "en", "workbook/en/02-memory-mechanics.ipynb"}, "not a path"},
		{[]string{"restore", "-edition", "zh-CN", "02"}, "has no such notebook"},
		{[]string{"sync", "extra"}, "sync takes no arguments"},
	} {
		if rc := f.run(c.args...); rc != 1 || !strings.Contains(f.errst, c.want) {
			t.Errorf("workbook %s: exit %d, stderr %q; want exit 1 and %q", strings.Join(c.args, " "), rc, f.errst, c.want)
		}
	}
	// A notebook's list comes with the error for an unknown name.
	f.run("restore", "-edition", "en", "03")
	if !strings.Contains(f.errst, "00-setup-and-tour, 02-memory-mechanics, 04-reuse-and-sharing") {
		t.Errorf("unknown name: %q", f.errst)
	}
	// An edition with no notebooks yet.
	os.RemoveAll(filepath.Join(f.nb, "zh-CN"))
	if rc := f.run("restore", "-edition", "zh-CN"); rc != 1 || !strings.Contains(f.errst, "has none yet") {
		t.Errorf("restore of an edition with no notebooks: exit %d, %q", rc, f.errst)
	}
}

func TestAWorkingCopyThatIsNotAFileIsAnError(t *testing.T) {
	f := newFixture(t)
	if err := os.MkdirAll(f.copy("en", "02-memory-mechanics"), 0o755); err != nil {
		t.Fatal(err)
	}
	if rc := f.run("sync"); rc != 1 || !strings.Contains(f.errst, "02-memory-mechanics.ipynb is not a regular file") {
		t.Errorf("sync over a folder: exit %d, %q", rc, f.errst)
	}
}

func TestStatusListsOrphansAndMissing(t *testing.T) {
	f := newFixture(t)
	f.mustRun("sync")
	f.write(f.copy("en", "99-mine"), "a learner's own notebook")
	os.Remove(f.copy("en", "04-reuse-and-sharing"))
	st := f.mustRun("status")
	for _, re := range []string{
		`en\s+00-setup-and-tour.ipynb\s+pristine\n`,
		`en\s+04-reuse-and-sharing.ipynb\s+missing`,
		`en\s+99-mine.ipynb\s+edited, no pristine notebook`,
		`zh-CN\s+00-setup-and-tour.ipynb\s+pristine\n`,
	} {
		if !regexp.MustCompile(re).MatchString(st) {
			t.Errorf("status does not match %s:\n%s", re, st)
		}
	}
	// sync leaves a learner's own notebook alone.
	f.mustRun("sync")
	if f.read(f.copy("en", "99-mine")) != "a learner's own notebook" {
		t.Error("sync touched a notebook with no pristine one")
	}
}

// A Go file a learner puts into the workbook is no package of the checkout's
// module once sync has run: go vet ./... and go test ./... never see it.
func TestTheWorkbookIsAModuleOfItsOwn(t *testing.T) {
	root := t.TempDir()
	f := &fixture{t: t, nb: filepath.Join(root, "notebooks"), wb: filepath.Join(root, "workbook"), clock: time.Now()}
	f.write(filepath.Join(f.nb, "en", "00-setup-and-tour.ipynb"), "en 00")
	f.write(filepath.Join(root, "go.mod"), "module example.com/checkout\n\ngo 1.21\n")
	f.write(filepath.Join(root, "main.go"), "package main\n\nfunc main() {}\n")
	f.write(filepath.Join(f.wb, "en", "mine.go"), "package mine\n\nfunc Broken( {\n")
	list := func() string {
		cmd := exec.Command("go", "list", "-e", "./...")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := list(); !strings.Contains(out, "workbook/en") {
		t.Fatalf("the test's premise: without workbook/go.mod, go list ./... lists workbook/en; it printed %q", out)
	}
	f.mustRun("sync")
	if out := list(); strings.Contains(out, "workbook") {
		t.Errorf("after sync, go list ./... still lists the workbook: %q", out)
	}
	if got := f.read(filepath.Join(f.wb, "go.mod")); got != goMod {
		t.Errorf("workbook/go.mod holds %q", got)
	}
}

// TestSyncMakesExerciseCopies: with -exercises, sync makes the working copy of
// every exercise that has none (the stub, no tests, no solution) and keeps one
// the learner wrote.
func TestSyncMakesExerciseCopies(t *testing.T) {
	f := newFixture(t)
	root := workbooktest.Module(t, "01-strides", "05-segment-size")
	out := f.mustRun("-exercises", root, "sync")
	if !strings.Contains(out, "workbook: exercises: 2 working copies in "+filepath.Join(f.wb, "exercises")+" (2 created)") {
		t.Errorf("sync -exercises: %q", out)
	}
	mine := filepath.Join(f.wb, "exercises", "01-strides", "strides.go")
	if _, err := os.Stat(filepath.Join(f.wb, "exercises", "01-strides", "strides_test.go")); err == nil {
		t.Error("the working copy holds the official tests")
	}
	f.write(mine, "package strides // mine\n")
	out = f.mustRun("-exercises", root, "sync")
	if !strings.Contains(out, "2 working copies") || strings.Contains(out, "created)") || f.read(mine) != "package strides // mine\n" {
		t.Errorf("second sync: %q; the learner's copy: %q", out, f.read(mine))
	}
}
