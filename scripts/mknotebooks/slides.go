package main

import "strings"

// Slides: every cell of both editions carries RISE's metadata.slideshow.slide_type
// (jupyterlab-rise, pinned in scripts/requirements-lab.txt), set here by one rule
// so that an instructor presents a chapter straight from its notebook:
//
//   - a markdown cell that opens with a "# " or "## " heading starts a slide (a
//     notebook's title, a numbered section);
//   - a markdown cell that opens with "### " starts a subslide (a part of a
//     section, below its slide);
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
	first := ""
	if len(c.Source) > 0 {
		first = c.Source[0]
	}
	if c.CellType == "markdown" {
		switch {
		case strings.HasPrefix(first, "# "), strings.HasPrefix(first, "## "):
			return "slide"
		case strings.HasPrefix(first, "### "), prev == "code":
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
