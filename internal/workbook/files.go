package workbook

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Files sorts the .go files of an official exercise folder by whose they are.
//
// The one declaration of which files a learner writes is each stub's first
// line: a file that starts with "//go:build !solution" is the learner's (its
// twin with "//go:build solution" is the reference solution). Every other
// non-test file is shared between stub and solution (types, the naive version
// a test compares against, sentinel errors) and, like the tests, always comes
// from the official folder when a submission is built: a submission cannot
// rewrite the answer key.
type Files struct {
	Learner   []string // the stubs: the files the learner writes
	Solutions []string // the reference solutions
	Shared    []string // non-test files shared by stub and solution
	Tests     []string // the official *_test.go files
}

// ExerciseFiles reads the file roles of the official exercise folder dir.
func ExerciseFiles(dir string) (Files, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return Files{}, fmt.Errorf("workbook: %w", err)
	}
	var f Files
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(name, ".go") {
			continue
		}
		if strings.HasSuffix(name, "_test.go") {
			f.Tests = append(f.Tests, name)
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return Files{}, fmt.Errorf("workbook: %w", err)
		}
		first, _, _ := strings.Cut(string(data), "\n")
		switch first = strings.TrimSpace(first); {
		case first == "//go:build !solution":
			f.Learner = append(f.Learner, name)
		case first == "//go:build solution" || strings.HasSuffix(name, "_solution.go"):
			// (a solution swapped in, its build line gone, is still one)
			f.Solutions = append(f.Solutions, name)
		default:
			f.Shared = append(f.Shared, name)
		}
	}
	return f, nil
}

// assemble fills the package folder dst with what is built for the learner's
// copy src of exercise ex: from src, every non-test .go file but the shared
// ones (the learner's files, and any of their own beside them; a reference
// solution handed in keeps its build tag and is not built); from the official
// folder, the shared files and the tests. It returns notes for the report (a shared file whose copy in
// src differs, which the official one replaced) and how many files came from
// src.
func assemble(ex Exercise, src, dst string) (notes []string, n int, err error) {
	files, err := ExerciseFiles(ex.Dir)
	if err != nil {
		return nil, 0, err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return nil, 0, fmt.Errorf("workbook: %w", err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return nil, 0, fmt.Errorf("workbook: %w", err)
	}
	shared := map[string]bool{}
	for _, l := range files.Shared {
		shared[l] = true
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if shared[name] {
			continue // the official copy is built
		}
		if info, err := e.Info(); err == nil && info.Size() > MaxSourceBytes {
			return nil, 0, &tooBigError{name: name, size: info.Size()}
		}
		if err := copyFile(filepath.Join(src, name), filepath.Join(dst, name)); err != nil {
			return nil, 0, err
		}
		n++
	}
	for _, name := range files.Shared {
		official := filepath.Join(ex.Dir, name)
		if err := copyFile(official, filepath.Join(dst, name)); err != nil {
			return nil, 0, err
		}
		theirs, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			continue // not handed in: the official one is used
		}
		if ours, err := os.ReadFile(official); err == nil && !bytes.Equal(ours, theirs) {
			notes = append(notes, fmt.Sprintf("%s differs from the official copy, which was graded instead (only %s %s yours to write)", name, strings.Join(files.Learner, ", "), pluralVerb(len(files.Learner))))
		}
	}
	for _, name := range files.Tests {
		if err := copyFile(filepath.Join(ex.Dir, name), filepath.Join(dst, name)); err != nil {
			return nil, 0, err
		}
	}
	return notes, n, nil
}

// MaxSourceBytes is the largest .go file a submission may hand in; the
// exercises' reference solutions are a few KiB.
const MaxSourceBytes = 1 << 20

// tooBigError is assemble's refusal of a source file over MaxSourceBytes.
type tooBigError struct {
	name string
	size int64
}

func (e *tooBigError) Error() string {
	return fmt.Sprintf("%s takes %s, over the %s a source file of a graded submission may take", e.name, byteSize(e.size), byteSize(MaxSourceBytes))
}

func pluralVerb(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// checkShared refuses, in the learner's files of the package folder dir, any
// assignment to, increment of, or address taken of a package-level variable
// declared in a shared file (such as a sentinel error the tests compare with):
// a learner's init() could otherwise change the answer key without touching
// its file.
func checkShared(ex Exercise, dir string) error {
	files, err := ExerciseFiles(ex.Dir)
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	shared := map[string]bool{}
	isShared := map[string]bool{}
	for _, name := range files.Shared {
		isShared[name] = true
		f, err := parser.ParseFile(fset, filepath.Join(ex.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("workbook: %w", err)
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, s := range g.Specs {
					for _, id := range s.(*ast.ValueSpec).Names {
						shared[id.Name] = true
					}
				}
			}
		}
	}
	if len(shared) == 0 {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") && !isShared[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			continue // the compiler reports it
		}
		var bad error
		target := func(e ast.Expr) {
			for {
				switch x := e.(type) {
				case *ast.ParenExpr:
					e = x.X
					continue
				case *ast.SelectorExpr:
					e = x.X
					continue
				case *ast.IndexExpr:
					e = x.X
					continue
				case *ast.StarExpr:
					e = x.X
					continue
				case *ast.Ident:
					if shared[x.Name] && bad == nil {
						bad = fmt.Errorf("%s:%d: %s is declared in a file of the exercise's (not yours to write) and may not be changed or have its address taken in a graded submission", name, fset.Position(x.Pos()).Line, x.Name)
					}
				}
				return
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch s := n.(type) {
			case *ast.AssignStmt:
				if s.Tok != token.DEFINE {
					for _, l := range s.Lhs {
						target(l)
					}
				}
			case *ast.IncDecStmt:
				target(s.X)
			case *ast.UnaryExpr:
				if s.Op == token.AND {
					target(s.X)
				}
			}
			return bad == nil
		})
		if bad != nil {
			return bad
		}
	}
	return nil
}
