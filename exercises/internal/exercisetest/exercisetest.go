// Package exercisetest turns the panics of the exercise stubs into readable test
// failures. Every exercise's tests call through it, so a stub that still panics
// "not implemented" fails with one clear line instead of a stack trace, and any
// other panic names the call that caused it.
package exercisetest

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// NotImplementedYet is the text every failure of an untouched stub contains. The
// memlab exercises command looks for it to tell "not started" from "failing".
const NotImplementedYet = "not implemented yet"

// Chinese reports whether the learner reads the Chinese edition: MEMLAB_LANG
// is "zh", "zh-CN", "zh_CN" or "zh-Hans" (any case), as memlab's lang package
// reads it (the exercises module stands alone, so it reads the variable itself).
// The Chinese edition of every notebook sets it; so can a shell:
// MEMLAB_LANG=zh-CN go run ./cmd/memlab exercises check 1.
func Chinese() bool {
	switch strings.ToLower(strings.ReplaceAll(strings.TrimSpace(os.Getenv("MEMLAB_LANG")), "_", "-")) {
	case "zh", "zh-cn", "zh-hans":
		return true
	}
	return false
}

// Msg returns the learner's language's version of a message: zh in the
// Chinese edition, en otherwise. Both are fmt formats with the same verbs
// (zh may reorder them with explicit indexes, %[2]v).
func Msg(en, zh string) string {
	if Chinese() {
		return zh
	}
	return en
}

// missing records the top-level tests that already reported a missing function, so
// the remaining cases of that test are skipped instead of repeating the message.
// It lives as long as the test binary: with go test -count above 1, the repeated
// runs of such a test skip all its cases (the first run has already failed).
var missing sync.Map

// Call runs f, which performs the call described by call (for example
// "RoundSize(1200, 4)"), and reports whether it returned normally.
//
// If f panics with a value whose text contains "not implemented", the test fails
// with "<function>: not implemented yet — see README.md" and stops; later cases of
// the same top-level test are skipped, so the message appears once. Any other panic
// fails the test with the call and the panic value: functions in these exercises
// return errors for bad input and never panic.
func Call(t testing.TB, call string, f func()) bool {
	t.Helper()
	top, _, _ := strings.Cut(t.Name(), "/")
	if fn, ok := missing.Load(top); ok {
		t.Skipf(Msg("skipped: %s is not implemented yet", "跳过：%s 还没有实现（not implemented yet）"), fn)
	}
	p, panicked := catch(f)
	if !panicked {
		return true
	}
	if s := fmt.Sprint(p); strings.Contains(s, "not implemented") {
		fn, _, _ := strings.Cut(call, "(")
		missing.Store(top, fn)
		t.Fatalf(Msg("%s: %s — write it: README.md explains the task, HINTS.md (or `go run ./cmd/memlab exercises hint N` from the repository root) helps",
			"%s：%s（还没有实现）——请写出它：题目见 README.zh-CN.md，提示见 HINTS.zh-CN.md（或在仓库根目录运行 `go run ./cmd/memlab exercises hint N`）"), fn, NotImplementedYet)
	}
	t.Errorf(Msg("%s panicked: %v — return an error for bad input instead of panicking", "%s 发生了 panic：%v——遇到错误输入应返回 error，而不是 panic"), call, p)
	return false
}

// catch runs f and returns the value it panicked with, if any.
func catch(f func()) (p any, panicked bool) {
	panicked = true
	defer func() {
		if panicked {
			p = recover()
		}
	}()
	f()
	panicked = false
	return nil, false
}
