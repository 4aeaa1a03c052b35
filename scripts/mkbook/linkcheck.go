package main

import (
	"fmt"
	"html"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// htmlRef matches the href and src attributes of the built book's HTML.
var htmlRef = regexp.MustCompile(`\s(href|src)\s*=\s*"([^"]*)"`)

// htmlID matches the id and name attributes, the targets of #fragments.
var htmlID = regexp.MustCompile(`\s(?:id|name)\s*=\s*"([^"]*)"`)

// checkLinks checks every link of the built book's pages in dir (every HTML file
// but the theme's under _static/): every relative href or src names a file of the book (a folder: its index.html), and every #fragment
// an id or name in the page it points to. Links with a scheme (https:,
// mailto:…) are the reader's browser's business and not followed. It returns
// the number of links checked and an error listing the dead ones.
func checkLinks(dir string) (int, error) {
	ids := map[string]map[string]bool{} // slash path of a page → its ids
	var pages []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "_static" && p != dir {
			return filepath.SkipDir // the theme's assets and templates ({{ pathto(…) }}), not pages
		}
		if d.IsDir() || !strings.HasSuffix(p, ".html") {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		pages = append(pages, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("reading the book %s: %w", dir, err)
	}
	if len(pages) == 0 {
		return 0, fmt.Errorf("no HTML pages in %s: build the book first (make book)", dir)
	}
	sort.Strings(pages)
	idsOf := func(page string) (map[string]bool, error) {
		if m, ok := ids[page]; ok {
			return m, nil
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(page)))
		if err != nil {
			return nil, err
		}
		m := map[string]bool{}
		for _, sub := range htmlID.FindAllStringSubmatch(string(data), -1) {
			m[html.UnescapeString(sub[1])] = true
		}
		ids[page] = m
		return m, nil
	}
	var dead []string
	n := 0
	for _, page := range pages {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(page)))
		if err != nil {
			return n, err
		}
		seen := map[string]bool{}
		for _, sub := range htmlRef.FindAllStringSubmatch(string(data), -1) {
			ref := html.UnescapeString(sub[2])
			if seen[ref] {
				continue
			}
			seen[ref] = true
			n++
			if why := checkRef(dir, page, ref, idsOf); why != "" {
				dead = append(dead, fmt.Sprintf("%s: %s=%q %s", page, sub[1], ref, why))
			}
		}
	}
	if len(dead) > 0 {
		return n, fmt.Errorf("%d dead links in %s:\n\t%s", len(dead), dir, strings.Join(dead, "\n\t"))
	}
	return n, nil
}

// checkRef says what is wrong with ref, a link on page, or "" when nothing is.
func checkRef(dir, page, ref string, idsOf func(string) (map[string]bool, error)) string {
	if ref == "" {
		return "is empty"
	}
	if scheme.MatchString(ref) || strings.HasPrefix(ref, "//") {
		return "" // https:, mailto:, data:, javascript: — not the book's
	}
	u, err := url.Parse(ref)
	if err != nil {
		return fmt.Sprintf("does not parse: %v", err)
	}
	target := page
	if u.Path != "" {
		if strings.HasPrefix(u.Path, "/") {
			return "is absolute: the book is opened from files, where / is the disk's root"
		}
		target = path.Clean(path.Join(path.Dir(page), u.Path))
		if strings.HasPrefix(target, "../") || target == ".." {
			return "leaves the book"
		}
		st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(target)))
		if err != nil {
			return "goes to no file of the book"
		}
		if st.IsDir() {
			target = path.Join(target, "index.html")
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(target))); err != nil {
				return "goes to a folder without index.html"
			}
		}
	}
	if u.Fragment == "" || !strings.HasSuffix(target, ".html") {
		return ""
	}
	m, err := idsOf(target)
	if err != nil {
		return fmt.Sprintf("reading %s: %v", target, err)
	}
	if !m[u.Fragment] {
		return fmt.Sprintf("names #%s, which %s does not have", u.Fragment, target)
	}
	return ""
}
