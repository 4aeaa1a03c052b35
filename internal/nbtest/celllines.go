package nbtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// CellLines returns the code lines of each //nb:cell function of the package's
// sources (the [0-9]*.go files of dir), by function name: the lines of its body
// that are neither blank nor comments, what the learner reads in the cell.
func CellLines(dir string) (map[string]int, error) {
	files, err := filepath.Glob(filepath.Join(dir, "[0-9]*.go"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("nbtest: CellLines: no sources in %s (%v)", dir, err)
	}
	lines := map[string]int{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("nbtest: CellLines: %w", err)
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, f, src, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("nbtest: CellLines: %w", err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Doc == nil || fn.Body == nil || !isCell(fn.Doc) {
				continue
			}
			body := src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset]
			lines[fn.Name.Name] = codeLines(string(body))
		}
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("nbtest: CellLines: no //nb:cell functions in %s", dir)
	}
	return lines, nil
}

// isCell reports whether a doc comment marks a //nb:cell function.
func isCell(doc *ast.CommentGroup) bool {
	for _, c := range doc.List {
		if c.Text == "//nb:cell" || strings.HasPrefix(c.Text, "//nb:cell ") {
			return true
		}
	}
	return false
}

// codeLines counts the lines of src that are neither blank nor comments
// (// lines and the lines of /* */ blocks that hold no code).
func codeLines(src string) int {
	n, inBlock := 0, false
	for _, line := range strings.Split(src, "\n") {
		s := strings.TrimSpace(line)
		if inBlock {
			i := strings.Index(s, "*/")
			if i < 0 {
				continue
			}
			inBlock, s = false, strings.TrimSpace(s[i+2:])
		}
		if strings.HasPrefix(s, "/*") && !strings.Contains(s, "*/") {
			inBlock = true
			continue
		}
		if s != "" && !strings.HasPrefix(s, "//") {
			n++
		}
	}
	return n
}

// Median returns the median of the values of lines (the mean of the middle
// two for an even count); 0 for none.
func Median(lines map[string]int) float64 {
	var v []int
	for _, n := range lines {
		v = append(v, n)
	}
	slices.Sort(v)
	switch {
	case len(v) == 0:
		return 0
	case len(v)%2 == 1:
		return float64(v[len(v)/2])
	}
	return float64(v[len(v)/2-1]+v[len(v)/2]) / 2
}

// ShortCells fails unless the median experiment cell of the package in the
// working directory has at most limit code lines (CellLines), naming the
// longest cells when it fails.
func ShortCells(t testing.TB, limit float64) {
	t.Helper()
	lines, err := CellLines(".")
	if err != nil {
		t.Fatal(err)
	}
	if m := Median(lines); m > limit {
		names := make([]string, 0, len(lines))
		for name := range lines {
			names = append(names, name)
		}
		slices.SortFunc(names, func(a, b string) int { return lines[b] - lines[a] })
		var long []string
		for _, name := range names[:min(len(names), 8)] {
			long = append(long, fmt.Sprintf("%s %d", name, lines[name]))
		}
		t.Errorf("the median cell has %g code lines, more than %g; the longest: %s", m, limit, strings.Join(long, ", "))
	}
}
