package main

import (
	"fmt"
	"os"
	"path"
	"regexp"
	"strings"
)

// mdLink matches a Markdown inline link's target: [text](TARGET) or
// [text](TARGET "title").
var mdLink = regexp.MustCompile(`\]\(([^()\s]+)((?:\s+"[^"]*")?)\)`)

// scheme matches a URL scheme (https:, mailto:, path:…).
var scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

// links resolves the relative links of the book's Markdown. A link to a page of
// the book (a notebook, the glossary, an exercise's instructions) stays as it
// is: Jupyter Book links the page. A link to any other file of the repository
// (pool/doc.go, BENCHMARKS.md) would render as a dead "#../../pool/doc.go":
// the file is copied into the book at the same path and the link becomes
// MyST's path: link, which Sphinx serves as the file itself (under
// _downloads/), offline. A link to nothing is an error.
type links struct {
	root  string          // the repository
	pages map[string]bool // the book's pages, slash paths relative to root
	files map[string]bool // the repository files to copy into the book
}

// rewrite returns md, a document at slash path doc (relative to the
// repository root), with its links to repository files outside the book as
// path: links, and records those files.
func (l *links) rewrite(doc, md string) (string, error) {
	var bad []string
	out := mdLink.ReplaceAllStringFunc(md, func(m string) string {
		sub := mdLink.FindStringSubmatch(m)
		target, title := sub[1], sub[2]
		if strings.HasPrefix(target, "#") || scheme.MatchString(target) {
			return m
		}
		file, frag, _ := strings.Cut(target, "#")
		rel := path.Clean(path.Join(path.Dir(doc), file))
		if strings.HasPrefix(rel, "../") || rel == ".." {
			bad = append(bad, fmt.Sprintf("%s: the link %q leaves the repository", doc, target))
			return m
		}
		if l.pages[rel] {
			return m
		}
		st, err := os.Stat(path.Join(l.root, rel))
		switch {
		case err != nil:
			bad = append(bad, fmt.Sprintf("%s: the link %q goes to no file (%s)", doc, target, rel))
			return m
		case st.IsDir():
			bad = append(bad, fmt.Sprintf("%s: the link %q goes to a folder (%s): link a file in it", doc, target, rel))
			return m
		}
		if frag != "" {
			bad = append(bad, fmt.Sprintf("%s: the link %q has a #fragment, which a repository file in the book cannot keep", doc, target))
			return m
		}
		l.files[rel] = true
		return "](path:" + file + title + ")"
	})
	if len(bad) > 0 {
		return "", fmt.Errorf("dead links:\n\t%s", strings.Join(bad, "\n\t"))
	}
	return out, nil
}
