// Command mkbook writes the source of the workbook's rendered book: a Jupyter
// Book 1 project (build/book-src/) that `make book` (scripts/book.sh) builds
// into the static site build/book/.
//
// Usage:
//
//	go run ./scripts/mkbook -memlab build/bin/memlab [-root .] [-out build/book-src]
//	go run ./scripts/mkbook -check build/book
//
// The book has an index page in both languages, a part "English" and a part
// "中文" with the notebooks of notebooks/en and notebooks/zh-CN, the glossary
// (notebooks/GLOSSARY.md) and the exercises' instructions (exercises/README.md,
// exercises/*/README.md). Every notebook page shows its outputs: the kept
// executed copy (notebooks/executed/EDITION/NAME.ipynb, from the H200) when it
// belongs to the current source, otherwise the notebook executed here on the
// simulated device by `memlab lab -ipynb` (-memlab names that binary). Either
// way the page opens with a stamp: the device, the date and the commit its
// outputs come from. Jupyter Book executes nothing (execute_notebooks: off).
// The tree mirrors the repository's paths, so the links between notebooks,
// glossary and exercises work in the book as they do in the repository; a link
// to another repository file (pool/doc.go, BENCHMARKS.md) serves that file,
// copied into the book (links.go), and a link to nothing stops the build.
// With -check DIR, mkbook checks every link of the built book in DIR instead
// (linkcheck.go): `make book` runs it on build/book.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"memlab.dev/memlab/internal/nbexec"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mkbook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", ".", "the repository root")
	out := fs.String("out", "build/book-src", "the book's source folder to write (emptied first)")
	bin := fs.String("memlab", "", "the memlab binary that executes a notebook whose kept copy is stale (memlab lab -ipynb)")
	device := fs.String("device", "sim", "the device for notebooks executed here")
	commit := fs.String("commit", "", "the commit to stamp on notebooks executed here (default: git describe --always --dirty in -root)")
	check := fs.String("check", "", "check every link of the built book in this folder (build/book) instead of writing the source")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mkbook: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *check != "" {
		n, err := checkLinks(*check)
		if err != nil {
			fmt.Fprintf(stderr, "mkbook: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "mkbook: %d links in %s, none dead\n", n, *check)
		return 0
	}
	b := &book{root: *root, out: *out, memlab: *bin, device: *device, commit: *commit, log: stdout}
	if err := b.write(); err != nil {
		fmt.Fprintf(stderr, "mkbook: %v\n", err)
		return 1
	}
	return 0
}

type book struct {
	root, out, memlab, device, commit string
	log                               io.Writer
	links                             *links // the links of the book's Markdown (links.go)
}

// page is one notebook page of the book.
type page struct {
	edition, name, title string
	stamp                nbexec.Stamp
	kept                 bool   // outputs from the kept copy
	why                  string // why not, when not
}

// editionTitle is each edition's part caption.
var editionTitle = map[string]string{"en": "English", "zh-CN": "中文"}

func (b *book) write() error {
	if b.out == "" || filepath.Clean(b.out) == "." || filepath.Clean(b.out) == filepath.Clean(b.root) {
		return fmt.Errorf("-out %q would empty the checkout", b.out)
	}
	glossary := filepath.Join(b.root, "notebooks", "GLOSSARY.md")
	if _, err := os.Stat(glossary); err != nil {
		return fmt.Errorf("the glossary: %w", err)
	}
	exercises, err := filepath.Glob(filepath.Join(b.root, "exercises", "*", "README.md"))
	if err != nil {
		return err
	}
	sort.Strings(exercises)
	if err := os.RemoveAll(b.out); err != nil {
		return err
	}
	copies := []string{filepath.Join("notebooks", "GLOSSARY.md"), filepath.Join("exercises", "README.md")}
	for _, e := range exercises {
		rel, err := filepath.Rel(b.root, e)
		if err != nil {
			return err
		}
		copies = append(copies, rel)
	}
	b.links = &links{root: b.root, pages: map[string]bool{"index.md": true}, files: map[string]bool{}}
	for _, rel := range copies {
		b.links.pages[filepath.ToSlash(rel)] = true
	}
	notebooks := map[string][]string{}
	for _, ed := range nbexec.Editions {
		nbs, err := filepath.Glob(filepath.Join(b.root, "notebooks", ed, "*.ipynb"))
		if err != nil {
			return err
		}
		notebooks[ed] = nbs
		for _, p := range nbs {
			b.links.pages["notebooks/"+ed+"/"+filepath.Base(p)] = true
		}
	}
	// The copied documents first: a dead link stops the build before any
	// notebook is executed.
	for _, rel := range copies {
		data, err := os.ReadFile(filepath.Join(b.root, rel))
		if err != nil {
			return err
		}
		md, err := b.links.rewrite(filepath.ToSlash(rel), string(data))
		if err != nil {
			return err
		}
		if err := writeFile(filepath.Join(b.out, rel), []byte(md)); err != nil {
			return err
		}
	}
	var pages []page
	for _, ed := range nbexec.Editions {
		for _, p := range notebooks[ed] {
			pg, err := b.notebook(ed, p)
			if err != nil {
				return err
			}
			pages = append(pages, pg)
		}
	}
	if len(pages) == 0 {
		return fmt.Errorf("no notebooks in %s/notebooks/{en,zh-CN}", b.root)
	}
	// The repository files the book links to, at their paths, for path: links.
	for rel := range b.links.files {
		data, err := os.ReadFile(filepath.Join(b.root, filepath.FromSlash(rel)))
		if err != nil {
			return err
		}
		if err := writeFile(filepath.Join(b.out, filepath.FromSlash(rel)), data); err != nil {
			return err
		}
	}
	if err := writeFile(filepath.Join(b.out, "_config.yml"), []byte(config)); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(b.out, "_static", "memlab-lang.js"), []byte(langJS)); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(b.out, "_toc.yml"), []byte(toc(pages, copies[2:]))); err != nil {
		return err
	}
	return writeFile(filepath.Join(b.out, "index.md"), []byte(index(pages)))
}

// notebook writes one notebook page: the kept copy if fresh, else the
// notebook executed here; the stamp cell first.
func (b *book) notebook(ed, pristine string) (page, error) {
	name := strings.TrimSuffix(filepath.Base(pristine), ".ipynb")
	pg := page{edition: ed, name: name}
	rel := filepath.Join("notebooks", ed, name+".ipynb")
	dst := filepath.Join(b.out, rel)
	keptRel := filepath.Join("notebooks", nbexec.ExecutedDir, ed, name+".ipynb")
	err := nbexec.CheckFile(pristine, filepath.Join(b.root, keptRel), keptRel)
	var nb *nbexec.Notebook
	if err == nil {
		pg.kept = true
		if nb, err = nbexec.Read(filepath.Join(b.root, keptRel)); err != nil {
			return pg, err
		}
		fmt.Fprintf(b.log, "mkbook: %s: the kept copy (%s)\n", rel, keptRel)
	} else {
		pg.why = err.Error()
		if b.memlab == "" {
			return pg, fmt.Errorf("%s must be executed here (%v) and no -memlab binary was given", rel, err)
		}
		fmt.Fprintf(b.log, "mkbook: %s: executing it on the %s device here (%s)\n", rel, b.device, firstLine(err.Error()))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return pg, err
		}
		absDst, err := filepath.Abs(dst)
		if err != nil {
			return pg, err
		}
		if b.commit == "" {
			git := exec.Command("git", "describe", "--always", "--dirty")
			git.Dir = b.root
			id, err := git.Output()
			if err != nil {
				return pg, fmt.Errorf("%s must be executed here and git describe failed (%v): pass -commit", rel, err)
			}
			b.commit = strings.TrimSpace(string(id))
		}
		// -o relative to the checkout when it is inside it, so that the
		// stamped command reads as one run from the repository root.
		o := absDst
		if absRoot, err := filepath.Abs(b.root); err == nil {
			if r, err := filepath.Rel(absRoot, absDst); err == nil && !strings.HasPrefix(r, "..") {
				o = r
			}
		}
		cmd := exec.Command(b.memlab, "lab", "-ipynb", rel, "-o", o, "-device", b.device, "-commit", b.commit)
		cmd.Dir = b.root
		if outp, err := cmd.CombinedOutput(); err != nil {
			return pg, fmt.Errorf("executing %s: %v\n%s", rel, err, outp)
		}
		if nb, err = nbexec.Read(dst); err != nil {
			return pg, err
		}
	}
	stamp, ok := nb.Executed()
	if !ok {
		return pg, fmt.Errorf("%s: no stamp (metadata memlab.executed)", rel)
	}
	pg.stamp = stamp
	pg.title = title(nb, name)
	for _, c := range nb.Cells {
		if c.CellType != "markdown" {
			continue
		}
		md, err := b.links.rewrite(filepath.ToSlash(rel), c.Source.Text())
		if err != nil {
			return pg, err
		}
		c.Source = lines(md)
	}
	nb.Cells = append([]*nbexec.Cell{{CellType: "markdown", Metadata: map[string]any{}, Source: lines(stampText(pg))}}, nb.Cells...)
	data, err := nb.Encode()
	if err != nil {
		return pg, err
	}
	return pg, writeFile(dst, data)
}

// stampText is the admonition that opens a page: where, when and from which
// commit its outputs come.
func stampText(pg page) string {
	date := pg.stamp.Date
	if t, err := time.Parse(time.RFC3339, date); err == nil {
		date = t.UTC().Format("2006-01-02 15:04 UTC")
	}
	if pg.edition == "zh-CN" {
		src := "仓库中保存的执行副本（`notebooks/executed/`）"
		if !pg.kept {
			src = "构建本书时在本机执行（仓库中保存的执行副本与当前源码不符）"
		}
		return fmt.Sprintf("```{admonition} 输出来自：%s\n:class: note\n\n"+
			"- 设备：%s\n- 日期：%s\n- 提交：`%s`\n- 命令：`%s`\n- 来源：%s\n```\n",
			pg.stamp.Device, pg.stamp.Device, date, pg.stamp.Commit, pg.stamp.Command, src)
	}
	src := "the executed copy kept in the repository (`notebooks/executed/`)"
	if !pg.kept {
		src = "executed here when the book was built (the kept executed copy does not match the current source)"
	}
	return fmt.Sprintf("```{admonition} Outputs from: %s\n:class: note\n\n"+
		"- device: %s\n- date: %s\n- commit: `%s`\n- command: `%s`\n- source: %s\n```\n",
		pg.stamp.Device, pg.stamp.Device, date, pg.stamp.Commit, pg.stamp.Command, src)
}

// title is the notebook's first "# " heading, or its name.
func title(nb *nbexec.Notebook, name string) string {
	for _, c := range nb.Cells {
		if c.CellType != "markdown" {
			continue
		}
		for _, l := range strings.Split(c.Source.Text(), "\n") {
			if strings.HasPrefix(l, "# ") {
				return strings.TrimSpace(l[2:])
			}
		}
	}
	return name
}

func toc(pages []page, exercises []string) string {
	var b strings.Builder
	b.WriteString("# Generated by scripts/mkbook.\nformat: jb-book\nroot: index\nparts:\n")
	for _, ed := range nbexec.Editions {
		first := true
		for _, pg := range pages {
			if pg.edition != ed {
				continue
			}
			if first {
				fmt.Fprintf(&b, "  - caption: %s\n    chapters:\n", editionTitle[ed])
				first = false
			}
			fmt.Fprintf(&b, "      - file: notebooks/%s/%s\n", ed, pg.name)
		}
	}
	b.WriteString("  - caption: 术语表 · Glossary\n    chapters:\n      - file: notebooks/GLOSSARY\n")
	b.WriteString("  - caption: 练习 · Exercises\n    chapters:\n      - file: exercises/README\n")
	if len(exercises) > 0 {
		b.WriteString("        sections:\n")
		for _, e := range exercises {
			fmt.Fprintf(&b, "          - file: %s\n", strings.TrimSuffix(filepath.ToSlash(e), ".md"))
		}
	}
	return b.String()
}

func index(pages []page) string {
	var b strings.Builder
	b.WriteString("# memlab workbook · memlab 练习册\n\n")
	b.WriteString("The notebooks of the course's Chapter 2 (memory mechanics) and Chapter 4 (reuse and sharing), " +
		"in English and in Simplified Chinese, with every cell's output. " +
		"Each page opens with a note saying on which device (the H200 or the simulated device), " +
		"on which date and at which commit its outputs were produced.\n\n")
	b.WriteString("课程第 2 章（显存机制）与第 4 章（复用与共享）的笔记本，英文版与简体中文版，附每个单元格的输出。" +
		"每页开头注明其输出来自哪台设备（H200 或模拟设备）、哪一天、哪个提交。\n\n")
	for _, ed := range nbexec.Editions {
		var items []string
		for _, pg := range pages {
			if pg.edition == ed {
				items = append(items, fmt.Sprintf("- [%s](notebooks/%s/%s.ipynb)", pg.title, ed, pg.name))
			}
		}
		if len(items) > 0 {
			fmt.Fprintf(&b, "## %s\n\n%s\n\n", editionTitle[ed], strings.Join(items, "\n"))
		}
	}
	b.WriteString("## 术语表 · Glossary\n\n- [术语表 · Glossary](notebooks/GLOSSARY.md)\n\n")
	b.WriteString("## 练习 · Exercises\n\n- [The exercises · 练习](exercises/README.md)\n\n")
	b.WriteString("To run the notebooks yourself, see the repository's README (`make lab`). " +
		"要自己运行这些笔记本，请看仓库的 README（`make lab`）。\n")
	return b.String()
}

// config is the book's _config.yml: nothing executed, nothing fetched.
const config = `# Generated by scripts/mkbook.
title: "memlab workbook · memlab 练习册"
author: memlab
copyright: ""
logo: ""
only_build_toc_files: true
execute:
  execute_notebooks: "off"
parse:
  myst_enable_extensions:
    - colon_fence
    - dollarmath
  myst_heading_anchors: 3
html:
  use_issues_button: false
  use_repository_button: false
  use_edit_page_button: false
  use_multitoc_numbering: false
launch_buttons:
  notebook_interface: classic
  binderhub_url: ""
  jupyterhub_url: ""
  thebe: false
  colab_url: ""
sphinx:
  config:
    language: en
    html_show_copyright: false
    html_last_updated_fmt: ""
    nb_merge_streams: true
    suppress_warnings: ["myst.header", "misc.highlighting_failure"]
    html_static_path: ["_static"]
    html_js_files: ["memlab-lang.js"]
`

// langJS marks the Chinese edition's pages as zh-CN (Sphinx has one language
// per build; the book's is English), so that browsers pick Simplified Chinese
// glyphs and line breaking there.
const langJS = `// Generated by scripts/mkbook: the Chinese edition's pages are in zh-CN.
if (/\/notebooks\/zh-CN\//.test(window.location.pathname)) {
  document.documentElement.lang = "zh-CN";
}
`

func lines(s string) nbexec.Source {
	parts := strings.SplitAfter(s, "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
