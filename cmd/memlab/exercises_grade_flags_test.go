package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"memlab.dev/memlab/internal/workbook/workbooktest"
)

// TestExercisesGradeFlags: grade --student and grade --class check the flags
// they share (the limits, --race, --sandbox) alike: a bad limit is exit 2 with
// what is wrong and the mode's usage, -h is exit 0, --sandbox none warns whose
// code runs with your rights; and each checks its own flags and positionals.
func TestExercisesGradeFlags(t *testing.T) {
	root := workbooktest.Module(t, "01-strides")
	missing := filepath.Join(t.TempDir(), "missing")
	const (
		studentUsage = "usage: memlab exercises grade --student PATH"
		classUsage   = "usage: memlab exercises grade --class DIR"
	)
	for _, mode := range []struct{ flag, usage, whose string }{
		{"--student", studentUsage, "the student's code"},
		{"--class", classUsage, "the students' code"},
	} {
		for _, c := range []struct {
			name     string
			args     []string
			wantCode int
			wantErr  []string
		}{
			{"memory under 64MiB", []string{"--memory", "1MiB"}, 2, []string{"memlab exercises grade: --memory 1MiB: want at least 64MiB", mode.usage}},
			{"memory unreadable", []string{"--memory", "lots"}, 2, []string{"memlab exercises grade: --memory: ", mode.usage}},
			{"no time", []string{"--timeout", "0s"}, 2, []string{"--timeout 0s: want a positive duration", mode.usage}},
			{"no output", []string{"--max-output", "0"}, 2, []string{"--max-output 0: want a positive number of bytes", mode.usage}},
			{"a positional", []string{"extra"}, 2, []string{mode.usage}},
			{"a bad flag", []string{"--frobnicate"}, 2, []string{"flag provided but not defined: -frobnicate"}},
			{"help", []string{"-h"}, 0, []string{"-max-output", "-race", "-sandbox"}},
		} {
			t.Run(mode.flag+" "+c.name, func(t *testing.T) {
				args := append([]string{"exercises", "--dir", root, "grade", mode.flag, missing}, c.args...)
				var stdout, stderr bytes.Buffer
				if code := run(args, &stdout, &stderr); code != c.wantCode {
					t.Fatalf("memlab %s: exit %d, want %d\n%s", strings.Join(args[3:], " "), code, c.wantCode, stderr.String())
				}
				for _, w := range c.wantErr {
					if !strings.Contains(stderr.String(), w) {
						t.Errorf("memlab %s: stderr lacks %q:\n%s", strings.Join(args[3:], " "), w, stderr.String())
					}
				}
			})
		}
		t.Run(mode.flag+" sandbox none", func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run([]string{"exercises", "--dir", root, "grade", mode.flag, missing, "--sandbox", "none"}, &stdout, &stderr)
			want := "memlab exercises grade: warning: --sandbox none runs " + mode.whose + " with your rights"
			if code == 0 || !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "missing") {
				t.Errorf("grade %s MISSING --sandbox none: exit %d, stderr %q; want the warning %q, then an error naming the missing folder", mode.flag, code, stderr.String(), want)
			}
		})
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"grade without --student", []string{"grade"}, studentUsage},
		{"grade --class of nothing", []string{"grade", "--class="}, classUsage},
		{"no workers", []string{"grade", "--class", missing, "-j", "0"}, classUsage},
		{"two files on standard output", []string{"grade", "--class", missing, "--csv", "-", "--json", "-"}, classUsage},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(append([]string{"exercises", "--dir", root}, c.args...), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), c.want) {
				t.Errorf("memlab exercises %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(c.args, " "), code, stderr.String(), c.want)
			}
		})
	}
}
