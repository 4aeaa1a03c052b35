package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"memlab.dev/memlab/lang"
)

// A notebook written as Go: the directory notebooks/src/NAME is a Go package
// whose files named [0-9]*.go (read in name order) hold the notebook's cells:
//
//	/*md
//	## 2.1 Tensor storage
//	…markdown…
//	*/
//
//	//nb:cell plot
//	func storageVsViews() {
//		l := memlab.MustOpen()
//		…
//	}
//
//	//nb:decl
//	type TensorPool struct{ … }
//
// A block comment that opens with "/*md" is a markdown cell (it must not touch
// the declaration after it: leave a blank line, so that gofmt never reformats
// it as a doc comment). The workbook has two editions, English and Simplified
// Chinese (package lang): a "/*md:zh-CN" comment right after a "/*md" one is
// the same cell in the Chinese edition, written for Chinese readers. A file
// has a Chinese block for every markdown cell, or none; a notebook's Chinese
// edition is written when all its files have them, and then every
// memlab.Measured format must be a string constant that lang's zh-CN catalog
// translates. A function marked //nb:cell (no parameters, no
// results) is a code cell whose body, after GoNB's "%%", is the body of the
// cell's main; words after the marker are the cell's tags ("plot": nbcheck
// wants an image). A declaration marked //nb:decl opens a code cell of
// declarations, which GoNB keeps for later cells; unmarked declarations after
// it join that cell, and any other unmarked declaration is an error; a
// declaration may not use a drawing package (memplot, ch2plot, ch4plot), which
// every later cell would then link. The imports of all files make the notebook's first code cell. A line
// "//nb:meta {JSON}" merges JSON into the notebook's metadata.
//
// A block comment that opens with "/*nb:raw" (words after it on its first line
// are tags) is a code cell of GoNB commands, copied verbatim: a "%%writefile"
// cell that saves a learner's code, a "!" line that runs a shell command. Such a
// cell runs only in Jupyter, so it is not in cells_gen.go; like /*md it must be
// followed by a blank line.
//
// The generator also writes cells_gen.go into the package: the list of its
// code cells (memlab.Cell), which `memlab lab` runs and the tests look up.

// goNotebook is a notebook read from a Go package.
type goNotebook struct {
	name     string // the notebook's file name without .ipynb
	pkg      string // the package's name
	editions map[string][]cell
	pending  []rawCell // cells being read
	meta     map[string]any
	runs     []runCell  // the //nb:cell functions, in order
	imports  []string   // import specs as written: `"fmt"`, `nb "x/y"`
	measured []measured // the memlab.Measured formats, memlab.Judge's claims and formats
}

// rawCell is a cell as lines without newlines; a markdown cell's Chinese
// lines are in zh.
type rawCell struct {
	kind  string
	tags  []string
	lines []string
	zh    []string
	at    string // where it starts, for errors
	file  string // the source file it is in
}

// measured is one memlab.Measured call's format.
type measured struct {
	format string
	at     string
}

// runCell is one //nb:cell function.
type runCell struct {
	fn, section string
	tags        []string
}

// readGoNotebook reads the package in dir.
func readGoNotebook(dir string) (*goNotebook, error) {
	files, err := filepath.Glob(filepath.Join(dir, "[0-9]*.go"))
	if err != nil {
		return nil, err
	}
	var srcs []string
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			srcs = append(srcs, f)
		}
	}
	sort.Strings(srcs)
	if len(srcs) == 0 {
		return nil, fmt.Errorf("%s: no notebook sources (files named [0-9]*.go)", dir)
	}
	nb := &goNotebook{name: filepath.Base(dir), meta: map[string]any{}}
	section := ""
	seenImport := map[string]bool{}
	for _, path := range srcs {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if formatted, err := format.Source(src); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		} else if !bytes.Equal(formatted, src) {
			return nil, fmt.Errorf("%s: not gofmt-formatted; run gofmt -w %s", path, path)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		if nb.pkg == "" {
			nb.pkg = f.Name.Name
		} else if f.Name.Name != nb.pkg {
			return nil, fmt.Errorf("%s: package %s, want %s", path, f.Name.Name, nb.pkg)
		}
		for _, imp := range f.Imports {
			spec := imp.Path.Value
			if imp.Name != nil {
				spec = imp.Name.Name + " " + spec
			}
			if !seenImport[spec] {
				seenImport[spec] = true
				nb.imports = append(nb.imports, spec)
			}
		}
		pos := func(p token.Pos) string { return fset.Position(p).String() }
		off := func(p token.Pos) int { return fset.Position(p).Offset }
		drawing := drawingImports(f)
		docs := map[*ast.CommentGroup]bool{}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				docs[d.Doc] = true
			case *ast.GenDecl:
				docs[d.Doc] = true
			}
		}
		// The file's items in order: markdown comments and declarations.
		type item struct {
			at   token.Pos
			md   *ast.Comment
			decl ast.Decl
		}
		var items []item
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				switch {
				case strings.HasPrefix(c.Text, "/*md:zh-CN"), strings.HasPrefix(c.Text, "/*md"), strings.HasPrefix(c.Text, "/*nb:raw"):
					if docs[cg] {
						return nil, fmt.Errorf("%s: a /*md comment must be followed by a blank line, not a declaration", pos(c.Pos()))
					}
					items = append(items, item{at: c.Pos(), md: c})
				case strings.HasPrefix(c.Text, "//nb:meta "):
					if err := mergeMeta(nb.meta, strings.TrimPrefix(c.Text, "//nb:meta ")); err != nil {
						return nil, fmt.Errorf("%s: %w", pos(c.Pos()), err)
					}
				}
			}
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
				continue
			}
			items = append(items, item{at: d.Pos(), decl: d})
		}
		sort.Slice(items, func(i, j int) bool { return items[i].at < items[j].at })
		inDecl := false // an //nb:decl cell is open: unmarked declarations join it
		for _, it := range items {
			if it.md != nil && strings.HasPrefix(it.md.Text, "/*nb:raw") {
				body := strings.TrimSuffix(strings.TrimPrefix(it.md.Text, "/*nb:raw"), "*/")
				head, rest, _ := strings.Cut(body, "\n")
				lines := trimBlank(strings.Split(rest, "\n"))
				if len(lines) == 0 {
					return nil, fmt.Errorf("%s: empty /*nb:raw comment", pos(it.md.Pos()))
				}
				nb.pending = append(nb.pending, rawCell{kind: "code", tags: strings.Fields(head), lines: lines, at: pos(it.md.Pos()), file: path})
				inDecl = false
				continue
			}
			if it.md != nil {
				zh := strings.HasPrefix(it.md.Text, "/*md:zh-CN")
				marker := "/*md"
				if zh {
					marker = "/*md:zh-CN"
				}
				text := strings.TrimPrefix(strings.TrimSuffix(it.md.Text, "*/"), marker)
				lines := trimBlank(strings.Split(text, "\n"))
				if len(lines) == 0 {
					return nil, fmt.Errorf("%s: empty %s comment", pos(it.md.Pos()), marker)
				}
				if m := typedFigure.FindString(text); m != "" {
					return nil, fmt.Errorf("%s: markdown holds %q, a figure that looks measured: print it from the cell (memlab.Measured) instead of typing it", pos(it.md.Pos()), m)
				}
				if zh {
					last := len(nb.pending) - 1
					if last < 0 || nb.pending[last].kind != "markdown" || nb.pending[last].zh != nil {
						return nil, fmt.Errorf("%s: a /*md:zh-CN comment must follow the /*md comment it translates", pos(it.md.Pos()))
					}
					nb.pending[last].zh = lines
					continue
				}
				for _, l := range lines {
					if h, ok := strings.CutPrefix(l, "## "); ok {
						section = strings.TrimSpace(h)
					}
				}
				nb.pending = append(nb.pending, rawCell{kind: "markdown", lines: lines, at: pos(it.md.Pos()), file: path})
				inDecl = false
				continue
			}
			if err := nb.readMeasured(it.decl, fset); err != nil {
				return nil, err
			}
			doc := docOf(it.decl)
			kind, tags := marker(doc)
			start := it.decl.Pos()
			switch kind {
			case "cell":
				fn, ok := it.decl.(*ast.FuncDecl)
				if !ok || fn.Recv != nil || fn.Type.TypeParams != nil || len(fn.Type.Params.List) > 0 || fn.Type.Results != nil || fn.Body == nil {
					return nil, fmt.Errorf("%s: //nb:cell marks a function with no receiver, parameters or results", pos(start))
				}
				body := string(src[off(fn.Body.Lbrace)+1 : off(fn.Body.Rbrace)])
				lines := trimBlank(strings.Split(body, "\n"))
				for i, l := range lines {
					lines[i] = strings.TrimPrefix(l, "\t")
				}
				if len(lines) == 0 {
					return nil, fmt.Errorf("%s: //nb:cell %s has an empty body", pos(start), fn.Name.Name)
				}
				nb.pending = append(nb.pending, rawCell{kind: "code", tags: tags, lines: append([]string{"%%"}, lines...)})
				nb.runs = append(nb.runs, runCell{fn: fn.Name.Name, section: section, tags: tags})
				inDecl = false
			case "decl":
				if err := drawsNothing(it.decl, drawing, pos); err != nil {
					return nil, err
				}
				text := declText(src, doc, it.decl, off)
				nb.pending = append(nb.pending, rawCell{kind: "code", tags: tags, lines: text})
				inDecl = true
			case "":
				if !inDecl {
					return nil, fmt.Errorf("%s: declaration is in no notebook cell: mark it //nb:decl (or //nb:cell for a cell's body)", pos(start))
				}
				if err := drawsNothing(it.decl, drawing, pos); err != nil {
					return nil, err
				}
				last := &nb.pending[len(nb.pending)-1]
				last.lines = append(last.lines, "")
				last.lines = append(last.lines, declText(src, doc, it.decl, off)...)
			default:
				return nil, fmt.Errorf("%s: unknown marker //nb:%s (want cell or decl)", pos(start), kind)
			}
		}
	}
	if len(nb.runs) == 0 {
		return nil, fmt.Errorf("%s: no //nb:cell functions", dir)
	}
	// The imports cell goes before the first code cell.
	imp := []string{"import ("}
	var std, other []string
	for _, s := range nb.imports {
		p := s[strings.IndexByte(s, '"'):]
		if strings.Contains(strings.SplitN(p, "/", 2)[0], ".") {
			other = append(other, s)
		} else {
			std = append(std, s)
		}
	}
	sort.Strings(std)
	sort.Strings(other)
	for _, s := range std {
		imp = append(imp, "\t"+s)
	}
	if len(std) > 0 && len(other) > 0 {
		imp = append(imp, "")
	}
	for _, s := range other {
		imp = append(imp, "\t"+s)
	}
	imp = append(imp, ")")
	editions := []string{lang.English}
	// A file translates all its markdown cells or none (while its notebook's
	// translation is under way); the Chinese edition is written once every
	// file does.
	type count struct{ md, missing int }
	perFile := map[string]*count{}
	var order []string
	missing := 0
	for _, c := range nb.pending {
		if c.kind != "markdown" {
			continue
		}
		f := c.file
		if perFile[f] == nil {
			perFile[f] = &count{}
			order = append(order, f)
		}
		perFile[f].md++
		if c.zh == nil {
			perFile[f].missing++
			missing++
		}
	}
	for _, f := range order {
		if n := perFile[f]; n.missing > 0 && n.missing < n.md {
			var at []string
			for _, c := range nb.pending {
				if c.kind == "markdown" && c.file == f && c.zh == nil {
					at = append(at, c.at)
				}
			}
			return nil, fmt.Errorf("%s: %d of %d markdown cells have no /*md:zh-CN block after them: %s", f, n.missing, n.md, strings.Join(at, ", "))
		}
	}
	if missing == 0 {
		for _, m := range nb.measured {
			if !lang.Has(lang.Chinese, m.format) {
				return nil, fmt.Errorf("%s: memlab.Measured or memlab.Judge text %q has no zh-CN translation in lang/zh-CN/*.txt", m.at, m.format)
			}
		}
		editions = append(editions, lang.Chinese)
	}
	nb.editions = map[string][]cell{}
	for _, ed := range editions {
		// Each edition's first code cell sets the language its cells print in,
		// and turns off GoNB's `go get` before every cell: every package the
		// notebooks import is in the checkout's go.work already, and the `go get`
		// asks the module proxy about every dependency, each cell (BENCHMARKS.md,
		// "Notebook cell latency").
		first := append([]string{"%env MEMLAB_LANG=" + ed, "%noautoget"}, imp...)
		var cells []cell
		imported := false
		for _, c := range nb.pending {
			if c.kind == "code" && !imported {
				cells = append(cells, newCell("code", nil, first))
				imported = true
			}
			lines := c.lines
			if ed == lang.Chinese && c.kind == "markdown" {
				lines = c.zh
			}
			cells = append(cells, newCell(c.kind, c.tags, lines))
		}
		setSlideTypes(cells)
		nb.editions[ed] = cells
	}
	return nb, nil
}

// readMeasured records the formats of the memlab.Measured calls in d, each of
// which must be a string constant (a literal, or literals joined by +) so that
// its translation can be looked up.
func (nb *goNotebook) readMeasured(d ast.Decl, fset *token.FileSet) error {
	var err error
	ast.Inspect(d, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || err != nil {
			return err == nil
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || (sel.Sel.Name != "Measured" && sel.Sel.Name != "Judge") {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "memlab" {
			return true
		}
		at := fset.Position(call.Pos()).String()
		if sel.Sel.Name == "Judge" {
			// memlab.Judge(claim, verdict, format, args...): the claim and the
			// format are both printed in the edition's language.
			if len(call.Args) < 3 {
				err = fmt.Errorf("%s: memlab.Judge needs a claim, a verdict and a format", at)
				return false
			}
			for _, a := range []ast.Expr{call.Args[0], call.Args[2]} {
				s, ok := constString(a)
				if !ok || strings.Contains(strings.TrimRight(s, "\n"), "\n") {
					err = fmt.Errorf("%s: memlab.Judge's claim and format must be one-line string constants (literals joined by +), so that they can be translated", at)
					return false
				}
				nb.measured = append(nb.measured, measured{strings.TrimRight(s, "\n"), at})
			}
			return true
		}
		if len(call.Args) == 0 {
			err = fmt.Errorf("%s: memlab.Measured without a format", at)
			return false
		}
		format, ok := constString(call.Args[0])
		if !ok {
			err = fmt.Errorf("%s: memlab.Measured's format must be a string constant (literals joined by +), so that it can be translated", at)
			return false
		}
		format = strings.TrimRight(format, "\n")
		if strings.Contains(format, "\n") {
			err = fmt.Errorf("%s: memlab.Measured prints one line: its format holds a newline", at)
			return false
		}
		nb.measured = append(nb.measured, measured{format, at})
		return true
	})
	return err
}

// constString evaluates a string literal or a + of string literals.
func constString(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		a, ok1 := constString(e.X)
		b, ok2 := constString(e.Y)
		return a + b, ok1 && ok2
	case *ast.ParenExpr:
		return constString(e.X)
	}
	return "", false
}

// typedFigure matches what looks like a measured figure typed into markdown:
// a time, a bandwidth, or a decimal percentage or size ("13.5 %", "4.0 MiB").
// Whole sizes ("a 64 MiB tensor") describe an experiment's input and pass.
var typedFigure = regexp.MustCompile(`\d+(\.\d+)?\s?(µs|us|ms|TB/s|GB/s)\b|\d+\.\d+\s?%|\d+\.\d+\s?(MiB|GiB|KiB|MB|GB)\b`)

// drawingPackages are the packages that link gonum/plot: a cell imports them
// only to draw.
var drawingPackages = map[string]bool{
	"memlab.dev/memlab/memplot":                 true,
	"memlab.dev/memlab/experiments/ch2/ch2plot": true,
	"memlab.dev/memlab/experiments/ch4/ch4plot": true,
	"gonum.org/v1/plot":                         true,
}

// drawingImports maps the names f imports drawing packages under to their paths.
func drawingImports(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, imp := range f.Imports {
		path := strings.Trim(imp.Path.Value, `"`)
		if !drawingPackages[path] {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		out[name] = path
	}
	return out
}

// drawsNothing checks that declaration d names no drawing package: GoNB keeps
// a declaration for every later cell and links what it uses, so one that drew
// would put gonum/plot into every later cell's program (issue 30).
func drawsNothing(d ast.Decl, drawing map[string]string, pos func(token.Pos) string) error {
	var err error
	ast.Inspect(d, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || err != nil {
			return err == nil
		}
		if id, ok := sel.X.(*ast.Ident); ok && drawing[id.Name] != "" {
			err = fmt.Errorf("%s: a declaration uses %s.%s (%s, which links gonum/plot): GoNB keeps declarations for every later cell, so each would link it; draw in a //nb:cell instead",
				pos(sel.Pos()), id.Name, sel.Sel.Name, drawing[id.Name])
		}
		return err == nil
	})
	return err
}

// docOf returns a declaration's doc comment.
func docOf(d ast.Decl) *ast.CommentGroup {
	switch d := d.(type) {
	case *ast.FuncDecl:
		return d.Doc
	case *ast.GenDecl:
		return d.Doc
	}
	return nil
}

// marker returns the //nb: marker in a doc comment ("cell", "decl" or "") and
// the words after it.
func marker(doc *ast.CommentGroup) (string, []string) {
	if doc == nil {
		return "", nil
	}
	for _, c := range doc.List {
		if rest, ok := strings.CutPrefix(c.Text, "//nb:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return "?", nil
			}
			return f[0], f[1:]
		}
	}
	return "", nil
}

// declText is a declaration's source with its doc comment, less the marker.
func declText(src []byte, doc *ast.CommentGroup, d ast.Decl, off func(token.Pos) int) []string {
	var out []string
	if doc != nil {
		for _, c := range doc.List {
			if !strings.HasPrefix(c.Text, "//nb:") {
				out = append(out, c.Text)
			}
		}
		// gofmt puts the marker, a directive, last, after a "//" line.
		for len(out) > 0 && out[len(out)-1] == "//" {
			out = out[:len(out)-1]
		}
	}
	return append(out, strings.Split(string(src[off(d.Pos()):off(d.End())]), "\n")...)
}

func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// newCell makes a cell from its lines (without newlines).
func newCell(kind string, tags []string, lines []string) cell {
	c := cell{CellType: kind, Metadata: map[string]any{}}
	if len(tags) > 0 {
		c.Metadata["tags"] = tags
	}
	for i, l := range lines {
		if i < len(lines)-1 {
			l += "\n"
		}
		c.Source = append(c.Source, l)
	}
	return c
}

// cellsGo is the package's cells_gen.go.
func (nb *goNotebook) cellsGo() ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by scripts/mknotebooks from this package's [0-9]*.go; DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "package %s\n\nimport \"memlab.dev/memlab/memlab\"\n\n", nb.pkg)
	fmt.Fprintf(&b, "// Cells are the code cells of notebook %s, in order: `memlab lab` runs them and\n// the tests look them up by name.\nvar Cells = []memlab.Cell{\n", nb.name)
	for _, r := range nb.runs {
		fmt.Fprintf(&b, "\t{Notebook: %q, Section: %q, Name: %q, Plot: %v, Func: %s},\n",
			nb.name, r.section, r.fn, hasString(r.tags, "plot"), r.fn)
	}
	fmt.Fprintf(&b, "}\n\nfunc init() { memlab.RegisterCells(Cells...) }\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("cells_gen.go: %w", err)
	}
	return out, nil
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// mergeMeta merges a JSON object into meta.
func mergeMeta(meta map[string]any, text string) error {
	m, err := parseMeta(text)
	if err != nil {
		return err
	}
	for k, v := range m {
		meta[k] = v
	}
	return nil
}
