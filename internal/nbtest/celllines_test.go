package nbtest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCellLines counts a cell's code lines without blank lines and comments,
// and leaves out functions that are not cells.
func TestCellLines(t *testing.T) {
	dir := t.TempDir()
	src := `package x

//nb:cell
func a() {
	x := 1 // a trailing comment still counts

	// a comment line
	/* a block
	   comment */
	_ = x
}

//nb:cell plot
func b() {
	println()
}

func helper() {
	println()
	println()
}
`
	if err := os.WriteFile(filepath.Join(dir, "10-a.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	lines, err := CellLines(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || lines["a"] != 2 || lines["b"] != 1 {
		t.Errorf("CellLines = %v, want map[a:2 b:1]", lines)
	}
	if _, err := CellLines(t.TempDir()); err == nil {
		t.Error("CellLines of a directory without sources: no error")
	}
}

// TestMedian: the middle value, or the mean of the middle two.
func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   map[string]int
		want float64
	}{{nil, 0}, {map[string]int{"a": 3}, 3}, {map[string]int{"a": 1, "b": 9, "c": 4}, 4}, {map[string]int{"a": 1, "b": 2, "c": 5, "d": 30}, 3.5}} {
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %g, want %g", c.in, got, c.want)
		}
	}
}
