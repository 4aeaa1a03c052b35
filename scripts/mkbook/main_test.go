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
		filepath.Join("exercises", "README.md"),
		filepath.Join("exercises", "01-strides", "README.md"),
		filepath.Join("exercises", "02-contiguous", "README.md"),
		"go.mod",
	} {
		copyFile(t, filepath.Join(repo, rel), filepath.Join(root, rel))
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
