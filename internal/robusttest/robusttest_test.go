package robusttest

import (
	"errors"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failed []string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Errorf(format string, args ...any) { r.failed = append(r.failed, format) }

func TestNoPanic(t *testing.T) {
	r := &recorder{TB: t}
	NoPanic(r, "calm", func() {})
	NoPanic(r, "boom", func() { panic("boom") })
	if len(r.failed) != 1 {
		t.Fatalf("failures %v, want one (the panic)", r.failed)
	}
}

func TestWantErr(t *testing.T) {
	cases := []struct {
		name  string
		err   error
		words []string
		fails int
	}{
		{"nil error", nil, nil, 1},
		{"mentions the words", errors.New("tensor: shape [-1] is invalid"), []string{"shape", "invalid"}, 0},
		{"misses a word", errors.New("tensor: shape [-1] is invalid"), []string{"dtype"}, 1},
	}
	for _, c := range cases {
		r := &recorder{TB: t}
		WantErr(r, c.name, c.err, c.words...)
		if len(r.failed) != c.fails {
			t.Errorf("%s: %d failures, want %d", c.name, len(r.failed), c.fails)
		}
	}
}
