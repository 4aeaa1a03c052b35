package main

import "strings"

// Slides: every cell of both editions carries RISE's metadata.slideshow.slide_type
// (jupyterlab-rise, pinned in scripts/requirements-lab.txt), set here by one rule
// so that an instructor presents a chapter straight from its notebook:
//
//   - a markdown cell with a "# " or "## " heading line starts a slide (a
//     notebook's title, a section; the heading may follow the previous
//     section's Try it in the same cell);
//   - one with a "### " heading line starts a subslide (a part of a section,
//     below its slide);
//   - any other markdown cell after a code cell starts a subslide too (what an
//     experiment showed, and its Try it, on a page of their own); after a
//     markdown cell it continues that cell's page ("-");
//   - an experiment (a code cell whose body follows GoNB's "%%") right after
//     markdown is a fragment: the text first, the code and its output on the
//     next click; one after another code cell starts a subslide;
//   - a declaration cell (helpers, types) starts a subslide, and the declaration
//     cells right after it continue its page ("-"): a section's helpers on one
//     page, before its experiment;
//   - the first code cell (%env MEMLAB_LANG and the imports) is skipped: it is
//     set-up, not content, and the rule reads the cells around it as if it
//     were not there. It still runs with Run All, which the instructor guide
//     (docs/instructor) asks for before a class.
//
// setSlideTypes is the rule's one home; the notebook metadata "rise" (notebookRise)
// lets long outputs scroll within a slide.
func setSlideTypes(cells []cell) {
	for i := range cells {
		cells[i].Metadata["slideshow"] = map[string]any{"slide_type": slideType(cells, i)}
	}
}

// slideType is the slide type of cells[i] under the rule above.
func slideType(cells []cell, i int) string {
	c := cells[i]
	// The cell before, passing over the skipped set-up cell.
	prev, prevDecl := "", false
	for j := i - 1; j >= 0; j-- {
		if !isSetup(cells[j]) {
			prev = cells[j].CellType
			prevDecl = prev == "code" && !isExperiment(cells[j])
			break
		}
	}
	if c.CellType == "markdown" {
		h := headingLevel(c)
		switch {
		case h == 1 || h == 2:
			return "slide"
		case h == 3, prev == "code":
			return "subslide"
		}
		return "-"
	}
	if isSetup(c) {
		return "skip"
	}
	if isExperiment(c) {
		if prev == "markdown" {
			return "fragment"
		}
		return "subslide"
	}
	if prevDecl {
		return "-"
	}
	return "subslide"
}

// isExperiment reports whether c is a code cell whose body is main's (GoNB's
// "%%"), as every //nb:cell is.
func isExperiment(c cell) bool {
	return c.CellType == "code" && len(c.Source) > 0 && strings.TrimSpace(c.Source[0]) == "%%"
}

// notebookRise is RISE's configuration in each notebook's metadata ("rise"):
// a scroll bar on slides taller than the screen (tables, segment maps), and the
// slide number.
func notebookRise() map[string]any {
	return map[string]any{"scroll": true, "slideNumber": true}
}

// isSetup reports whether c is the set-up cell each edition opens with (%env
// MEMLAB_LANG and the imports).
func isSetup(c cell) bool {
	return c.CellType == "code" && len(c.Source) > 0 && strings.HasPrefix(c.Source[0], "%env ")
}

// headingLevel is the level of the highest heading line of a markdown cell
// (1 for "# ", 2 for "## ", …), outside code fences; 0 when it has none.
func headingLevel(c cell) int {
	level, fence := 0, false
	for _, l := range strings.Split(strings.Join(c.Source, ""), "\n") {
		if strings.HasPrefix(l, "```") || strings.HasPrefix(l, "~~~") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, "#"))
		if n >= 1 && n <= 6 && strings.HasPrefix(l[n:], " ") && (level == 0 || n < level) {
			level = n
		}
	}
	return level
}
