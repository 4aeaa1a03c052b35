package memlab

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/janpfeifer/gonb/gonbui"

	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memplot"
)

// What a notebook cell needs to read well: a cell is the body of a Go main
// function, so a failed step stops it with a panic (Must, Check), and results
// are shown inline in GoNB and printed or saved elsewhere (Show, Table.Show).

// Must returns v, or stops the cell with err: x := memlab.Must(tensor.Empty(l, …)).
func Must[T any](v T, err error) T {
	Check(err)
	return v
}

// Must2 is [Must] for calls that return two values and an error, such as
// [Lab.MemGetInfo].
func Must2[A, B any](a A, b B, err error) (A, B) {
	Check(err)
	return a, b
}

// Check stops the cell with err, if any (a panic, which GoNB shows under the
// cell and `memlab lab` reports as the cell's failure).
func Check(err error) {
	if err != nil {
		panic(err)
	}
}

// FormatBytes prints a byte count in the units of PyTorch's out-of-memory
// messages: "512 bytes", "1.50 KiB", "20.00 MiB", "1.00 GiB". Unlike
// PyTorch's format_size (allocator.FormatSize, which the out-of-memory
// messages keep), a count of exactly one unit is written in that unit —
// 1 MiB is "1.00 MiB", not "1024.00 KiB" — so that a table never shows the
// same size two ways; negative counts (differences) get a minus sign.
func FormatBytes(n int64) string {
	sign, u := "", uint64(n)
	if n < 0 {
		sign, u = "-", uint64(-(n+1))+1
	}
	switch {
	case u < 1<<10:
		return fmt.Sprintf("%s%d bytes", sign, u)
	case u < 1<<20:
		return fmt.Sprintf("%s%.2f KiB", sign, float64(u)/(1<<10))
	case u < 1<<30:
		return fmt.Sprintf("%s%.2f MiB", sign, float64(u)/(1<<20))
	default:
		return fmt.Sprintf("%s%.2f GiB", sign, float64(u)/(1<<30))
	}
}

// Outcome is what a request came to, for a table or a Measured line:
// "served" when err is nil, "out of memory" when it is one (see
// [IsOutOfMemory]); any other error stops the cell.
func Outcome(err error) string {
	if err == nil {
		return "served"
	}
	if IsOutOfMemory(err) {
		return "out of memory"
	}
	Check(err)
	return ""
}

// Measured prints one "Measured:" line: the sentence a notebook states about
// an experiment, printed by the cell from the numbers it measured, so that the
// prose can never drift from the result. It prints in the workbook's edition
// (package [lang]): in the Chinese edition "实测：" and the catalog's
// translation of format, which scripts/mknotebooks checks every notebook's
// Measured formats have.
func Measured(format string, args ...any) {
	prefix := "Measured: "
	if lang.Current() == lang.Chinese {
		prefix = "实测："
	}
	line := prefix + fmt.Sprintf(lang.Text(strings.TrimRight(format, "\n")), args...)
	if gonbui.IsNotebook {
		// JupyterLab breaks printed text anywhere (word-break: break-all),
		// even mid-word; lines that fit the output area are never broken.
		line = wrapWords(line, measuredWidth)
	}
	fmt.Fprintln(output(), line)
}

// measuredWidth is the width, in columns, a Measured line is wrapped to in a
// notebook: what a JupyterLab output area holds at 100 % beside the file
// browser.
const measuredWidth = 96

// wrapWords breaks s between words into lines of at most width columns (a
// wide East Asian character counts two), continuation lines indented by two
// spaces; a word longer than a line stays whole, and text without spaces
// (Chinese) is left to the browser, which breaks it between characters.
func wrapWords(s string, width int) string {
	var words []string
	for _, w := range strings.Split(s, " ") {
		// a figure and its unit stay on one line: "5.44 GiB", "-7.4 %"
		if n := len(words); n > 0 && startsWithUnit(w) && words[n-1] != "" &&
			strings.ContainsAny(words[n-1][len(words[n-1])-1:], "0123456789") {
			words[n-1] += " " + w
			continue
		}
		words = append(words, w)
	}
	var out strings.Builder
	col := 0
	for i, w := range words {
		n := displayWidth(w)
		switch {
		case i == 0:
		case col+1+n > width:
			out.WriteString("\n  ")
			col = 2
		default:
			out.WriteByte(' ')
			col++
		}
		out.WriteString(w)
		col += n
	}
	return out.String()
}

// unitWords are the words [wrapWords] keeps beside the figure before them.
var unitWords = map[string]bool{"bytes": true, "KiB": true, "MiB": true, "GiB": true, "TiB": true, "%": true,
	"ms": true, "µs": true, "s": true, "ns": true}

// startsWithUnit says whether w is one of [unitWords], alone or followed by
// punctuation or a Chinese character ("GiB,", "GiB；", "%）").
func startsWithUnit(w string) bool {
	for u := range unitWords {
		if rest, ok := strings.CutPrefix(w, u); ok {
			r, _ := utf8.DecodeRuneInString(rest)
			if rest == "" || !(unicode.IsLetter(r) && r < unicode.MaxLatin1) && !unicode.IsDigit(r) {
				return true
			}
		}
	}
	return false
}

var (
	sinkMu sync.Mutex
	sink   func(*memplot.Figure) error
)

// SetFigureSink sets what [Show] does with a figure outside a notebook and
// returns the previous sink; nil restores the default, which writes the figure
// as PNG under $MEMLAB_PLOT_DIR (default "plots") and prints its path. `memlab
// lab` and the notebooks' tests set their own.
func SetFigureSink(f func(*memplot.Figure) error) (prev func(*memplot.Figure) error) {
	sinkMu.Lock()
	defer sinkMu.Unlock()
	prev, sink = sink, f
	return prev
}

// Show displays a figure: inline in a GoNB notebook, through the figure sink
// elsewhere (see [SetFigureSink]). It takes a plot constructor's results
// directly, memlab.Show(steps.Plot("…")), and stops the cell if err is not nil
// or the figure cannot be drawn.
func Show(fig *memplot.Figure, err error) {
	Check(err)
	if fig == nil {
		panic("memlab: Show(nil figure)")
	}
	if gonbui.IsNotebook {
		_, err := fig.Show()
		Check(err)
		return
	}
	sinkMu.Lock()
	f := sink
	sinkMu.Unlock()
	if f == nil {
		f = saveFigure
	}
	Check(f(fig))
}

// saveFigure is the default figure sink: the figure as PNG under
// $MEMLAB_PLOT_DIR (default "plots"), its path printed.
func saveFigure(fig *memplot.Figure) error {
	path, err := fig.Show()
	if err == nil {
		fmt.Fprintf(output(), "figure: %s\n", path)
	}
	return err
}

// Table is a table of text cells for a notebook: an HTML table in GoNB (which
// neither wraps nor re-flows wide rows), aligned plain text elsewhere.
type Table struct {
	Header []string
	Rows   [][]string
	// Caption, if set, is shown above the table.
	Caption string
}

// NewTable starts a table with the given column headers.
func NewTable(header ...string) *Table { return &Table{Header: header} }

// Columner is a result that lays itself out as a table: a header and rows of
// text cells, such as (*whatif.Result).Columns.
type Columner interface {
	Columns() (header []string, rows [][]string)
}

// TableOf is the table of c's columns, to show as HTML in a notebook:
// memlab.TableOf(res).Show().
func TableOf(c Columner) *Table {
	header, rows := c.Columns()
	return &Table{Header: header, Rows: rows}
}

// Row appends a row; each value is printed with fmt.Sprint (format byte
// counts with [FormatBytes] first). A row shorter than the header is padded,
// a longer one is an error at Show.
func (t *Table) Row(values ...any) *Table {
	row := make([]string, len(values))
	for i, v := range values {
		row[i] = fmt.Sprint(v)
	}
	t.Rows = append(t.Rows, row)
	return t
}

func (t *Table) check() error {
	for i, r := range t.Rows {
		if len(r) > len(t.Header) {
			return fmt.Errorf("memlab: table %q: row %d has %d cells for %d columns", t.Caption, i, len(r), len(t.Header))
		}
	}
	return nil
}

// String renders the table as aligned plain text.
func (t *Table) String() string {
	var b strings.Builder
	if t.Caption != "" {
		b.WriteString(t.Caption + "\n")
	}
	widths := make([]int, len(t.Header))
	rows := append([][]string{t.Header}, t.Rows...)
	for _, r := range rows {
		for i, c := range r {
			if i < len(widths) {
				widths[i] = max(widths[i], displayWidth(c))
			}
		}
	}
	for _, r := range rows {
		var line strings.Builder
		for i := range widths {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			line.WriteString(c)
			if i < len(widths)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-displayWidth(c)+2))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	return b.String()
}

// displayWidth is how many columns s takes in a terminal: two for each wide
// (CJK) character, so that the Chinese edition's tables line up.
func displayWidth(s string) int {
	w := 0
	for _, r := range s {
		w++
		if r >= 0x1100 && (r <= 0x115f || r == 0x2329 || r == 0x232a ||
			(r >= 0x2e80 && r <= 0xa4cf && r != 0x303f) || (r >= 0xac00 && r <= 0xd7a3) ||
			(r >= 0xf900 && r <= 0xfaff) || (r >= 0xfe30 && r <= 0xfe4f) ||
			(r >= 0xff00 && r <= 0xff60) || (r >= 0xffe0 && r <= 0xffe6)) {
			w++
		}
	}
	return w
}

// HTML renders the table as an HTML table.
func (t *Table) HTML() string {
	var b strings.Builder
	b.WriteString(`<table style="border-collapse:collapse;font-size:13px">`)
	if t.Caption != "" {
		b.WriteString(`<caption style="text-align:left;font-weight:bold;padding:4px 0">` + htmlEscape(t.Caption) + `</caption>`)
	}
	cell := func(tag, c string) {
		b.WriteString("<" + tag + ` style="text-align:left;padding:2px 10px;border-bottom:1px solid #ddd;white-space:nowrap">` + htmlEscape(c) + "</" + tag + ">")
	}
	b.WriteString("<thead><tr>")
	for _, h := range t.Header {
		cell("th", h)
	}
	b.WriteString("</tr></thead><tbody>")
	for _, r := range t.Rows {
		b.WriteString("<tr>")
		for i := range t.Header {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			cell("td", c)
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</tbody></table>")
	return b.String()
}

// Show displays the table: as HTML in a GoNB notebook, as text on [Output]
// elsewhere. A malformed table stops the cell.
func (t *Table) Show() {
	Check(t.check())
	if gonbui.IsNotebook {
		gonbui.DisplayHTML(t.HTML())
		gonbui.Sync()
		return
	}
	if f := displaySink(); f != nil {
		Check(f(Display{HTML: t.HTML(), Text: t.String()}))
		return
	}
	io.WriteString(output(), t.String())
}

// Display is what a notebook shows for a table or preformatted text: the HTML
// GoNB displays, and the same as plain text.
type Display struct {
	HTML string
	Text string
}

var (
	displayMu sync.Mutex
	dispSink  func(Display) error
)

// SetDisplaySink sets what [Table.Show], [ShowText] and [Lab.ShowSummary] do
// outside a notebook and returns the previous sink; nil restores the default,
// which prints the text to [Output]. An executor that writes a notebook's
// outputs (memlab lab -ipynb) sets one to record the HTML GoNB would show.
func SetDisplaySink(f func(Display) error) (prev func(Display) error) {
	displayMu.Lock()
	defer displayMu.Unlock()
	prev, dispSink = dispSink, f
	return prev
}

func displaySink() func(Display) error {
	displayMu.Lock()
	defer displayMu.Unlock()
	return dispSink
}

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func htmlEscape(s string) string { return htmlEscaper.Replace(s) }
