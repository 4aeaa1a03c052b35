package workbook

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// AllowedImports are the packages a graded submission may import: pure
// computation from the standard library and memlab's own API packages. None of
// them gives the student's code a handle on a file descriptor, the process, the
// network or memory outside Go's rules; fmt is allowed without its three
// functions that write to standard output (see CheckSubmission).
var AllowedImports = map[string]bool{
	"bytes": true, "cmp": true, "container/heap": true, "container/list": true,
	"container/ring": true, "encoding/binary": true, "errors": true, "fmt": true,
	"iter": true, "maps": true, "math": true, "math/bits": true, "slices": true,
	"sort": true, "strconv": true, "strings": true, "sync": true, "sync/atomic": true,
	"time": true, "unicode": true, "unicode/utf8": true,
	"memlab.dev/memlab/allocator": true,
	"memlab.dev/memlab/tensor":    true,
	"memlab.dev/memlab/units":     true,
}

// stdoutWriters are the members of fmt that write to the process's standard
// output; a submission may not name them, even without calling them.
var stdoutWriters = map[string]bool{"Print": true, "Printf": true, "Println": true}

// CheckSubmission reads the student's non-test .go files in dir and returns an
// error naming the first file and line that breaks the grading policy: an import
// outside AllowedImports (os, syscall, unsafe, runtime, "C", net, …), a dot
// import, a compiler directive other than //go:build (//go:linkname, //go:embed,
// cgo's //export), or a use of fmt.Print, fmt.Printf or fmt.Println. Together
// these leave the submission no way to write to the test binary's standard output,
// the channel Grade reads the results from, nor to reach files, processes or the
// network; the sandbox Grade runs it in is the second line of defence.
func CheckSubmission(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	fset := token.NewFileSet()
	for _, name := range names {
		path := filepath.Join(dir, name)
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			// The compiler reports syntax errors to the student with more context.
			continue
		}
		if err := checkFile(fset, name, f); err != nil {
			return err
		}
	}
	return nil
}

// checkFile applies CheckSubmission's rules to one parsed file.
func checkFile(fset *token.FileSet, name string, f *ast.File) error {
	at := func(p token.Pos) string {
		return fmt.Sprintf("%s:%d", name, fset.Position(p).Line)
	}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:") && !strings.HasPrefix(c.Text, "//go:build") ||
				strings.HasPrefix(c.Text, "//export ") || strings.HasPrefix(c.Text, "//line ") {
				return fmt.Errorf("%s: the directive %q is not allowed in a graded submission", at(c.Pos()), strings.Fields(c.Text)[0])
			}
		}
	}
	fmtNames := map[string]bool{}
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			return fmt.Errorf("%s: bad import %s", at(imp.Pos()), imp.Path.Value)
		}
		if !AllowedImports[path] {
			return fmt.Errorf("%s: import %q is not allowed in a graded submission (allowed: %s)", at(imp.Pos()), path, strings.Join(allowedList(), ", "))
		}
		local := filepath.Base(path)
		if imp.Name != nil {
			local = imp.Name.Name
		}
		if local == "." {
			return fmt.Errorf("%s: dot import of %q is not allowed in a graded submission", at(imp.Pos()), path)
		}
		if path == "fmt" && local != "_" {
			fmtNames[local] = true
		}
	}
	var bad error
	ast.Inspect(f, func(n ast.Node) bool {
		if bad != nil {
			return false
		}
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && fmtNames[x.Name] && stdoutWriters[sel.Sel.Name] {
				bad = fmt.Errorf("%s: %s.%s writes to standard output, which a graded submission may not do (return values; the tests print)", at(sel.Pos()), x.Name, sel.Sel.Name)
			}
		}
		return true
	})
	return bad
}

// allowedList returns AllowedImports sorted.
func allowedList() []string {
	var l []string
	for p := range AllowedImports {
		l = append(l, p)
	}
	sort.Strings(l)
	return l
}
