// Package labtest holds what tests of several packages need to set up a lab.
package labtest

import (
	"testing"

	"memlab.dev/memlab/memlab"
)

// Open opens a simulated device of size bytes ("1GiB") with the default
// caching allocator, not made current, and closes it at the end of the test,
// failing the test if closing fails.
func Open(t testing.TB, size string) *memlab.Lab {
	t.Helper()
	l, err := memlab.Open(memlab.Sim(size), memlab.AllocConf(""), memlab.NotCurrent())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	})
	return l
}
