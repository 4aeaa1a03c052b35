package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// glossaryName is a memlab name as the glossary writes it: package.Name, or
// package.Type.Method / package.Type.Field.
var glossaryName = regexp.MustCompile("^([a-z]+)\\.([A-Z]\\w*)(?:\\.([A-Z]\\w*))?$")

// TestGlossary checks notebooks/GLOSSARY.md: a heading in both languages, one
// table of 中文术语 | English term | PyTorch API | memlab API, the course's
// terms all in it, and every memlab name in its last column exported by the
// package it names (read from the package's source).
func TestGlossary(t *testing.T) {
	data, err := os.ReadFile("../../notebooks/GLOSSARY.md")
	if err != nil {
		t.Fatal(err)
	}
	text, _, _ := strings.Cut(string(data), renderingsHeading)
	if !strings.HasPrefix(text, "# 术语表 · Glossary\n") {
		t.Errorf("GLOSSARY.md does not open with the heading \"# 术语表 · Glossary\"")
	}
	var rows [][]string
	header := false
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := splitRow(line)
		switch {
		case !header:
			if strings.Join(cells, "|") != "中文术语|English term|PyTorch API|memlab API" {
				t.Fatalf("table header %q", cells)
			}
			header = true
		case strings.Trim(line, "|-") == "":
		default:
			if len(cells) != 4 || cells[0] == "" || cells[1] == "" || cells[2] == "" || cells[3] == "" {
				t.Errorf("row %q: want four non-empty cells", line)
				continue
			}
			rows = append(rows, cells)
		}
	}
	if len(rows) == 0 {
		t.Fatal("GLOSSARY.md has no table rows")
	}
	var zh, en strings.Builder
	for _, r := range rows {
		zh.WriteString(r[0] + "\n")
		en.WriteString(r[1] + "\n")
	}
	for _, term := range []string{"显存", "缓存分配器", "已分配", "已预留", "段", "块", "分割", "非活跃分割块", "驱动占用", "段分布图", "实验环境", "合并", "碎片化", "显存碎片", "视图", "步长", "连续", "原地操作", "版本计数器", "显存池", "KV 缓存", "峰值", "张量存储"} {
		if !strings.Contains(zh.String(), term) {
			t.Errorf("the glossary has no row for %s", term)
		}
	}
	for _, term := range []string{"max_split_size_mb", "expandable_segments", "empty_cache", "fragmentation", "view", "stride", "contiguous", "in-place", "version counter", "KV cache", "inactive split", "driver-used", "segment map", "arena", "tape"} {
		if !strings.Contains(en.String(), term) {
			t.Errorf("the glossary has no row for %s", term)
		}
	}
	exported := map[string]map[string]bool{} // package → its exported names
	code := regexp.MustCompile("`([^`]+)`")
	for _, r := range rows {
		names := code.FindAllStringSubmatch(r[3], -1)
		if len(names) == 0 {
			t.Errorf("%s: no memlab name in %q", r[0], r[3])
		}
		for _, m := range names {
			g := glossaryName.FindStringSubmatch(m[1])
			if g == nil {
				t.Errorf("%s: %q is not package.Name or package.Type.Name", r[0], m[1])
				continue
			}
			pkg := g[1]
			if exported[pkg] == nil {
				exported[pkg] = exportedNames(t, filepath.Join("../..", pkg))
			}
			name := g[2]
			if g[3] != "" {
				name += "." + g[3]
			}
			if !exported[pkg][name] {
				t.Errorf("%s: memlab.dev/memlab/%s exports no %s", r[0], pkg, name)
			}
		}
	}
}

// splitRow splits a markdown table row into its trimmed cells.
func splitRow(line string) []string {
	parts := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// exportedNames lists what the package in dir exports: its functions, types,
// constants and variables ("Name"), and its types' methods and struct fields
// ("Type.Name").
func exportedNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go package in %s (%v)", dir, err)
	}
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names[d.Name.Name] = true
					continue
				}
				recv := d.Recv.List[0].Type
				if s, ok := recv.(*ast.StarExpr); ok {
					recv = s.X
				}
				if ix, ok := recv.(*ast.IndexExpr); ok {
					recv = ix.X
				}
				if id, ok := recv.(*ast.Ident); ok {
					names[id.Name+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, fld := range st.Fields.List {
								for _, n := range fld.Names {
									names[s.Name.Name+"."+n.Name] = true
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					}
				}
			}
		}
	}
	for n := range names {
		if last := n[strings.LastIndexByte(n, '.')+1:]; !ast.IsExported(last) || !ast.IsExported(strings.SplitN(n, ".", 2)[0]) {
			delete(names, n)
		}
	}
	return names
}
