package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"memlab.dev/memlab/internal/nbexec"
)

const nb00 = "00-setup-and-tour.ipynb"

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeFile(to, b); err != nil {
		t.Fatal(err)
	}
}

// checkout is a small repository: notebook 00 in English with its kept H200
// copy, the same notebook as a Chinese edition without one, a glossary (a
// stand-in written here) and two exercises' instructions.
func checkout(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	repo := filepath.Join("..", "..")
	for _, rel := range []string{
		filepath.Join("notebooks", "en", nb00),
		filepath.Join("notebooks", "executed", "en", nb00),
		"go.mod",
	} {
		copyFile(t, filepath.Join(repo, rel), filepath.Join(root, rel))
	}
	// Stand-ins for the exercises' instructions, with the kinds of link the
	// real ones have: to pages of the book and to a repository file.
	for rel, text := range map[string]string{
		filepath.Join("exercises", "README.md"):                  "# Exercises\n\n- [01](01-strides/README.md)\n- [02](02-contiguous/README.md \"two\")\n",
		filepath.Join("exercises", "01-strides", "README.md"):    "# 01\n\nSee [the tour](../../notebooks/en/00-setup-and-tour.ipynb), [go.mod](../../go.mod) and [GoNB](https://github.com/janpfeifer/gonb).\n",
		filepath.Join("exercises", "02-contiguous", "README.md"): "# 02\n\n[Back](../README.md), [the glossary](../../notebooks/GLOSSARY.md#tensor).\n",
	} {
		if err := writeFile(filepath.Join(root, rel), []byte(text)); err != nil {
			t.Fatal(err)
		}
	}
	// The English page must come from the kept H200 copy: it has to be fresh.
	if err := nbexec.CheckFile(filepath.Join(root, "notebooks", "en", nb00), filepath.Join(root, "notebooks", "executed", "en", nb00), "notebooks/executed/en/"+nb00); err != nil {
		t.Fatalf("this test renders the repository's kept copy of notebook 00, which is stale: %v\n%s", err, nbexec.Regenerate)
	}
	if err := writeFile(filepath.Join(root, "notebooks", "GLOSSARY.md"), []byte("# 术语表 · Glossary\n\n| 中文 | English |\n|---|---|\n| 显存 | GPU memory |\n")); err != nil {
		t.Fatal(err)
	}
	zh, err := nbexec.Read(filepath.Join(root, "notebooks", "en", nb00))
	if err != nil {
		t.Fatal(err)
	}
	zh.Metadata["memlab"].(map[string]any)["edition"] = "zh-CN"
	b, err := zh.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := writeFile(filepath.Join(root, "notebooks", "zh-CN", nb00), b); err != nil {
		t.Fatal(err)
	}
	return root
}

// memlabBinary builds cmd/memlab, which executes the notebooks without a
// fresh kept copy.
func memlabBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "memlab")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/memlab")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/memlab: %v\n%s", err, out)
	}
	return bin
}

func firstCell(t *testing.T, path string) string {
	t.Helper()
	nb, err := nbexec.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if nb.Cells[0].CellType != "markdown" {
		t.Fatalf("%s: the first cell is a %s cell, want the stamp", path, nb.Cells[0].CellType)
	}
	return nb.Cells[0].Source.Text()
}

func TestBook(t *testing.T) {
	root := checkout(t)
	out := filepath.Join(t.TempDir(), "book-src")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-root", root, "-out", out}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "notebooks/zh-CN/00-setup-and-tour.ipynb must be executed here (notebooks/executed/zh-CN/00-setup-and-tour.ipynb: missing") {
		t.Fatalf("a notebook without a kept copy and no -memlab: exit %d, stderr %s", code, stderr.String())
	}
	bin := memlabBinary(t)
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"-root", root, "-out", out, "-memlab", bin, "-commit", "test"}, &stdout, &stderr); code != 0 {
		t.Fatalf("mkbook: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	en := firstCell(t, filepath.Join(out, "notebooks", "en", nb00))
	for _, w := range []string{"```{admonition} Outputs from: cuda:0, NVIDIA H200", "- commit: `", "- command: `memlab lab -ipynb notebooks/en/00-setup-and-tour.ipynb", "the executed copy kept in the repository"} {
		if !strings.Contains(en, w) {
			t.Errorf("the English page's stamp lacks %q:\n%s", w, en)
		}
	}
	zh := firstCell(t, filepath.Join(out, "notebooks", "zh-CN", nb00))
	for _, w := range []string{"```{admonition} 输出来自：sim:0, memlab simulated GPU", "- 日期：", "构建本书时在本机执行"} {
		if !strings.Contains(zh, w) {
			t.Errorf("the Chinese page's stamp lacks %q:\n%s", w, zh)
		}
	}
	toc, err := os.ReadFile(filepath.Join(out, "_toc.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"root: index", "caption: English\n    chapters:\n      - file: notebooks/en/00-setup-and-tour\n",
		"caption: 中文\n    chapters:\n      - file: notebooks/zh-CN/00-setup-and-tour\n", "- file: notebooks/GLOSSARY\n",
		"- file: exercises/README\n        sections:\n          - file: exercises/01-strides/README\n          - file: exercises/02-contiguous/README\n"} {
		if !strings.Contains(string(toc), w) {
			t.Errorf("_toc.yml lacks %q:\n%s", w, toc)
		}
	}
	for _, f := range []string{"index.md", "notebooks/GLOSSARY.md", "exercises/01-strides/README.md"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("the book lacks %s: %v", f, err)
		}
	}
	// A link to a repository file outside the book serves the file, copied in.
	ex, err := os.ReadFile(filepath.Join(out, "exercises", "01-strides", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "See [the tour](../../notebooks/en/00-setup-and-tour.ipynb), [go.mod](path:../../go.mod) and [GoNB](https://github.com/janpfeifer/gonb)."; !strings.Contains(string(ex), want) {
		t.Errorf("exercise 01's links in the book:\n%s\nwant %s", ex, want)
	}
	if _, err := os.Stat(filepath.Join(out, "go.mod")); err != nil {
		t.Errorf("the repository file a page links to is not in the book: %v", err)
	}
	if ex, _ := os.ReadFile(filepath.Join(out, "exercises", "02-contiguous", "README.md")); !strings.Contains(string(ex), "[Back](../README.md), [the glossary](../../notebooks/GLOSSARY.md#tensor)") {
		t.Errorf("links between the book's pages changed:\n%s", ex)
	}
	cfg, _ := os.ReadFile(filepath.Join(out, "_config.yml"))
	if !strings.Contains(string(cfg), "execute_notebooks: \"off\"") {
		t.Errorf("_config.yml lets Jupyter Book execute notebooks:\n%s", cfg)
	}

	// A cell edited: the English page no longer comes from the kept copy.
	p := filepath.Join(root, "notebooks", "en", nb00)
	nb, err := nbexec.Read(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range nb.Cells {
		if c.CellType == "code" && nbexec.IsMain(c.Source) {
			c.Source = append(c.Source, "\nfmt.Println(\"edited\")")
			break
		}
	}
	b, _ := nb.Encode()
	if err := writeFile(p, b); err != nil {
		t.Fatal(err)
	}
	if code := run([]string{"-root", root, "-out", out, "-memlab", bin, "-commit", "test"}, &stdout, &stderr); code != 0 {
		t.Fatalf("mkbook after the edit: exit %d\n%s", code, stderr.String())
	}
	if en := firstCell(t, filepath.Join(out, "notebooks", "en", nb00)); !strings.Contains(en, "Outputs from: sim:0") || !strings.Contains(en, "does not match the current source") {
		t.Errorf("after the edit the English page's stamp is:\n%s", en)
	}
}

func TestBookRefuses(t *testing.T) {
	root := checkout(t)
	os.Remove(filepath.Join(root, "notebooks", "GLOSSARY.md"))
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-root", root, "-out", filepath.Join(root, "out")}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "the glossary: ") {
		t.Errorf("no glossary: exit %d, %s", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"-root", root, "-out", root}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "would empty the checkout") {
		t.Errorf("-out the checkout: exit %d, %s", code, stderr.String())
	}
}

func TestBookRefusesDeadLinks(t *testing.T) {
	root := checkout(t)
	if err := writeFile(filepath.Join(root, "exercises", "01-strides", "README.md"), []byte("# 01\n\n[gone](../../pool/doc.go), [a folder](../../notebooks), [outside](../../../x.md)\n")); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"-root", root, "-out", filepath.Join(t.TempDir(), "out"), "-memlab", "/nonexistent", "-commit", "test"}, &stdout, &stderr)
	for _, w := range []string{
		`exercises/01-strides/README.md: the link "../../pool/doc.go" goes to no file (pool/doc.go)`,
		`exercises/01-strides/README.md: the link "../../notebooks" goes to a folder (notebooks)`,
		`exercises/01-strides/README.md: the link "../../../x.md" leaves the repository`,
	} {
		if code != 1 || !strings.Contains(stderr.String(), w) {
			t.Errorf("dead links: exit %d, stderr lacks %q:\n%s", code, w, stderr.String())
		}
	}
}

// TestRepositoryLinks checks the links of the repository's own book sources,
// without executing or building anything: every relative link of every
// notebook's Markdown, the glossary and the exercises' instructions goes to a
// page of the book or to a repository file the book serves (TestBook and
// TestCheckLinks cover the rest; make book checks the built site).
func TestRepositoryLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	l := &links{root: root, pages: map[string]bool{"index.md": true}, files: map[string]bool{}}
	docs := []string{"notebooks/GLOSSARY.md", "exercises/README.md"}
	ex, _ := filepath.Glob(filepath.Join(root, "exercises", "*", "README.md"))
	nbs, _ := filepath.Glob(filepath.Join(root, "notebooks", "*", "*.ipynb"))
	if len(ex) == 0 || len(nbs) == 0 {
		t.Fatalf("no exercises (%d) or notebooks (%d) under %s", len(ex), len(nbs), root)
	}
	for _, p := range append(ex, nbs...) {
		rel, _ := filepath.Rel(root, p)
		docs = append(docs, filepath.ToSlash(rel))
	}
	for _, d := range docs {
		l.pages[d] = true
	}
	checked := 0
	for _, d := range docs {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(d)))
		if err != nil {
			t.Fatal(err)
		}
		texts := []string{string(data)}
		if strings.HasSuffix(d, ".ipynb") {
			nb, err := nbexec.Read(filepath.Join(root, filepath.FromSlash(d)))
			if err != nil {
				t.Fatal(err)
			}
			texts = nil
			for _, c := range nb.Cells {
				if c.CellType == "markdown" {
					texts = append(texts, c.Source.Text())
				}
			}
		}
		for _, text := range texts {
			checked += len(mdLink.FindAllString(text, -1))
			if _, err := l.rewrite(d, text); err != nil {
				t.Error(err)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no links found in the book's sources")
	}
	for _, f := range []string{"pool/doc.go", "BENCHMARKS.md"} {
		if !l.files[f] {
			t.Errorf("the notebooks link %s (issue 30's dead links): the book should serve it; served: %v", f, l.files)
		}
	}
	t.Logf("%d links in %d documents; repository files served: %d", checked, len(docs), len(l.files))
}

func TestCheckLinks(t *testing.T) {
	dir := t.TempDir()
	for rel, text := range map[string]string{
		"index.html":                    `<a href="notebooks/en/04.html">04</a> <a href="#top">top</a> <a href="https://example.com/x">x</a> <img src="_static/logo.png"> <div id="top"></div>`,
		"notebooks/en/04.html":          `<h1 id="pools">Pools</h1><a class="reference download internal" href="../../_downloads/abc/doc.go">doc.go</a> <a href="../../index.html#top">home</a> <a href="#pools">here</a> <a href="../">up</a>`,
		"_downloads/abc/doc.go":         "package pool\n",
		"_static/logo.png":              "png",
		"_static/webpack-macros.html":   `<link href="{{ pathto('_static/styles/theme.css', 1) }}">`,
		"notebooks/zh-CN/04.html":       `<a href="#../../pool/doc.go">池</a> <a href="../../BENCHMARKS.md">基准</a> <a href="../../index.html#gone">x</a> <a href="/abs.html">abs</a> <img src="../../_static/missing.png"> <a href="../../../out.html">out</a>`,
		"notebooks/en/sub/nothing.html": `<a href="mailto:a@b.c">mail</a> <script src="data:text/javascript,1"></script>`,
	} {
		if err := writeFile(filepath.Join(dir, filepath.FromSlash(rel)), []byte(text)); err != nil {
			t.Fatal(err)
		}
	}
	n, err := checkLinks(dir)
	if err == nil {
		t.Fatalf("checkLinks found no dead link in %d", n)
	}
	for _, w := range []string{
		`notebooks/zh-CN/04.html: href="#../../pool/doc.go" names #../../pool/doc.go, which notebooks/zh-CN/04.html does not have`,
		`notebooks/zh-CN/04.html: href="../../BENCHMARKS.md" goes to no file of the book`,
		`notebooks/zh-CN/04.html: href="../../index.html#gone" names #gone, which index.html does not have`,
		`notebooks/zh-CN/04.html: href="/abs.html" is absolute`,
		`notebooks/zh-CN/04.html: src="../../_static/missing.png" goes to no file of the book`,
		`notebooks/zh-CN/04.html: href="../../../out.html" leaves the book`,
		`notebooks/en/04.html: href="../" goes to a folder without index.html`,
		"7 dead links",
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("checkLinks's error lacks %q:\n%v", w, err)
		}
	}
	for _, ok := range []string{"index.html: href=\"notebooks/en/04.html\"", "_downloads/abc/doc.go", "#pools", "index.html#top", "example.com", "mailto:", "logo.png"} {
		if strings.Contains(err.Error(), ok) {
			t.Errorf("checkLinks reports a good link (%s) as dead:\n%v", ok, err)
		}
	}
	if _, err := checkLinks(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no HTML pages") {
		t.Errorf("an empty folder: %v", err)
	}
}
