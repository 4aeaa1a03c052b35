// Package robusttest holds the two checks the robustness tests of memlab's
// public APIs share: a call must not panic, and an error must name what was wrong.
package robusttest

import (
	"strings"
	"testing"
)

// NoPanic runs f and fails the test, naming what, if f panics.
func NoPanic(t testing.TB, what string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked: %v", what, r)
		}
	}()
	f()
}

// WantErr fails the test unless err is non-nil and mentions every one of words.
func WantErr(t testing.TB, what string, err error, words ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not mention %q", what, err, w)
		}
	}
}
