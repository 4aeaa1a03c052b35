package memlab

import (
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/janpfeifer/gonb/gonbui"

	"memlab.dev/memlab/lang"
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
// same size two ways; negative counts (differences) get a minus sign. The
// Chinese edition writes "512 字节" for "512 bytes".
func FormatBytes(n int64) string {
	sign, u := "", uint64(n)
	if n < 0 {
		sign, u = "-", uint64(-(n+1))+1
	}
	switch {
	case u < 1<<10:
		return fmt.Sprintf("%s%d %s", sign, u, lang.Text("bytes"))
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
// [IsOutOfMemory]); any other error stops the cell. The words are English;
// a table shown and a Measured or verdict line print them in the workbook's
// edition (see [Labels]).
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
	line := prefix + fmt.Sprintf(lang.Text(strings.TrimRight(format, "\n")), Labels(lang.Current(), args)...)
	if gonbui.IsNotebook {
		// JupyterLab breaks printed text anywhere (word-break: break-all),
		// even mid-word; lines that fit the output area are never broken.
		line = wrapWords(line, OutputWidth)
	}
	fmt.Fprintln(output(), line)
}

// Labels are args with every string that lang's catalog translates — a
// label ([lang.LabelIn]): an outcome ("served"), a case's or a variant's name,
// a column header — in edition's words, and every error as [ErrorText]
// prints it, so that a Measured line, a verdict line or a table shown speaks
// the edition's language while the cell's code compares English constants.
// A []string is a list, printed as the edition writes one ("a, b and c";
// "a、b 和 c"), each item a label. Other values, and strings the catalog lacks
// (sizes, settings, code), are left as they are.
func Labels(edition string, args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			a = lang.LabelIn(edition, v)
		case error:
			if edition != lang.English {
				a = errorTextIn(edition, v)
			}
		case []string:
			a = listIn(edition, v)
		}
		out[i] = a
	}
	return out
}

// listIn writes items as edition writes a list ([lang.List]), each item looked
// up as a label.
func listIn(edition string, items []string) string {
	words := make([]string, len(items))
	for i, it := range items {
		words[i] = lang.LabelIn(edition, it)
	}
	return lang.List(edition, words)
}

// localized is t with its caption, headers and cells in the workbook's
// edition, each looked up as a label (see [Labels]).
func (t *Table) localized() *Table {
	ed := lang.Current()
	if ed == lang.English {
		return t
	}
	word := func(s string) string {
		if n, ok := strings.CutSuffix(s, " bytes"); ok && n != "" && strings.Trim(n, "-0123456789") == "" {
			return n + " " + lang.TextIn(ed, "bytes") // a size under 1 KiB, as FormatBytes prints it
		}
		return lang.LabelIn(ed, s)
	}
	out := &Table{Caption: word(t.Caption), err: t.err}
	for _, h := range t.Header {
		out.Header = append(out.Header, word(h))
	}
	for _, r := range t.Rows {
		row := make([]string, len(r))
		for i, c := range r {
			row[i] = word(c)
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}

// OutputWidth is how many columns a notebook's output holds: the width, in
// characters of a monospace font (a wide East Asian character counting two),
// that a Measured line is wrapped to in a notebook and that every table the
// notebooks show fits in (their tests check it, see [Display.Width]).
// Measured in JupyterLab 4.6 at 100 %, a 1280-px window with the file browser
// open (250 px) leaves an output area of 848 px: 107 columns of the 13-px
// monospace font. An HTML table of nine columns 94 wide took 828 px with
// 10-px cell padding, 8.8 px a column; with the 8-px padding of [Table.HTML],
// 8.4 px, so 96 columns (about 810 px) keep the widest inside. The browser
// test (e2e/lab.test.mjs) checks every table in that window.
const OutputWidth = 96

// WrapText breaks each line of s between words to [OutputWidth] columns, as
// Measured lines are: for a caption or description a cell prints beside a figure.
func WrapText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = wrapWords(l, OutputWidth)
	}
	return strings.Join(lines, "\n")
}

// wrapWords breaks s between words into lines of at most width columns (a
// wide East Asian character counts two), continuation lines indented by two
// spaces; a word longer than a line stays whole, and text without spaces
// (Chinese) is left to the browser, which breaks it between characters.
func wrapWords(s string, width int) string {
	var out strings.Builder
	col := 0
	for i, w := range unbreakable(s) {
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

// unbreakable splits s at its spaces into the pieces a line may break
// between: words, except that a figure and its unit stay together
// ("5.44 GiB", "-7.4 %"), and so does what stands in square brackets (a
// shape, "[1024, 1024]"; a range, "[57.97 MiB, 103.00 MiB]").
func unbreakable(s string) []string { return pieces(s, "[]") }

// cellPieces are a table cell's unbreakable pieces: as [unbreakable], and
// what stands in parentheses stays together too (a call, "x.view(512, 2048)").
func cellPieces(s string) []string { return pieces(s, "[]()") }

// piece is one unbreakable piece of a table cell as String lays it out;
// glued says it follows the piece before it without a space (the two halves
// of a Chinese word split between two characters).
type piece struct {
	text  string
	glued bool
}

// cellBreaks are the pieces a text table's cell may break between: its
// [cellPieces], each also split between two CJK ideographs, where a browser
// breaks Chinese text too — so that a Chinese header or label, which has no
// spaces, wraps in a narrow column instead of widening the table.
func cellBreaks(s string) []piece {
	var out []piece
	for _, w := range cellPieces(s) {
		start := 0
		prev := rune(-1)
		for i, r := range w {
			if i > 0 && isIdeograph(prev) && isIdeograph(r) {
				out = append(out, piece{text: w[start:i], glued: start > 0})
				start = i
			}
			prev = r
		}
		out = append(out, piece{text: w[start:], glued: start > 0})
	}
	return out
}

// isIdeograph reports whether r is a CJK ideograph (a Chinese character).
func isIdeograph(r rune) bool { return unicode.Is(unicode.Han, r) }

// pieces splits s at its spaces, keeping a figure with its unit and what
// stands between each pair of brackets (open, close) of pairs together.
func pieces(s, pairs string) []string {
	var words []string
	depth := 0
	for _, w := range strings.Split(s, " ") {
		n := len(words)
		if n > 0 && (depth > 0 || startsWithUnit(w) && words[n-1] != "" &&
			strings.ContainsAny(words[n-1][len(words[n-1])-1:], "0123456789")) {
			words[n-1] += " " + w
		} else {
			words = append(words, w)
		}
		for i := 0; i+1 < len(pairs); i += 2 {
			depth += strings.Count(w, pairs[i:i+1]) - strings.Count(w, pairs[i+1:i+2])
		}
		depth = max(depth, 0)
	}
	return words
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

// Figure is what [Show] displays: a drawing that shows itself inline in a GoNB
// notebook and, elsewhere, is written as a file whose path it returns.
// memplot's figures are Figures (memlab draws nothing itself, so that a cell
// that draws nothing does not link a plotting library).
type Figure interface {
	Show() (path string, err error)
}

var (
	sinkMu sync.Mutex
	sink   func(Figure) error
)

// SetFigureSink sets what [Show] does with a figure outside a notebook and
// returns the previous sink; nil restores the default, which has the figure
// write itself (memplot writes PNG under $MEMLAB_PLOT_DIR, default "plots")
// and prints its path. `memlab lab` and the notebooks' tests set their own.
func SetFigureSink(f func(Figure) error) (prev func(Figure) error) {
	sinkMu.Lock()
	defer sinkMu.Unlock()
	prev, sink = sink, f
	return prev
}

// Show displays a figure: inline in a GoNB notebook, through the figure sink
// elsewhere (see [SetFigureSink]). It takes a plot constructor's results
// directly, memlab.Show(memplot.Curve("…", steps)), and stops the cell if err
// is not nil or the figure cannot be drawn.
func Show(fig Figure, err error) {
	Check(err)
	if isNil(fig) {
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

// isNil says whether fig is nil or holds a nil pointer (a constructor's
// figure beside its error).
func isNil(fig Figure) bool {
	if fig == nil {
		return true
	}
	v := reflect.ValueOf(fig)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// saveFigure is the default figure sink: the figure written where it writes
// itself outside a notebook, its path printed.
func saveFigure(fig Figure) error {
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

	err error // what Without found wrong, reported at Show
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

// Without is the table without the named columns (those that say nothing in
// a table shown, such as counts that are zero in every row); a name that is
// not a column's header is an error at Show.
func (t *Table) Without(headers ...string) *Table {
	out := &Table{Caption: t.Caption, err: t.err}
	var keep []int
	for i, h := range t.Header {
		if !slices.Contains(headers, h) {
			keep = append(keep, i)
			out.Header = append(out.Header, h)
		}
	}
	for _, h := range headers {
		if !slices.Contains(t.Header, h) && out.err == nil {
			out.err = fmt.Errorf("memlab: table %q: Without(%q): no such column (the columns are %q)", t.Caption, h, t.Header)
		}
	}
	for _, r := range t.Rows {
		var row []string
		for _, i := range keep {
			if i < len(r) {
				row = append(row, r[i])
			}
		}
		out.Rows = append(out.Rows, row)
	}
	return out
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
	if t.err != nil {
		return t.err
	}
	for i, r := range t.Rows {
		if len(r) > len(t.Header) {
			return fmt.Errorf("memlab: table %q: row %d has %d cells for %d columns", t.Caption, i, len(r), len(t.Header))
		}
	}
	return nil
}

// String renders the table as aligned plain text, its caption wrapped between
// words to OutputWidth. A table wider than
// [OutputWidth] wraps, as the notebook's HTML table does: its widest columns
// narrow, down to their longest word (a figure and its unit stay together),
// and their headers and cells break between words onto several lines.
func (t *Table) String() string {
	var b strings.Builder
	if t.Caption != "" {
		b.WriteString(wrapWords(t.Caption, OutputWidth) + "\n")
	}
	widths := t.widths()
	for _, r := range append([][]string{t.Header}, t.Rows...) {
		for _, l := range wrapRow(r, widths) {
			var line strings.Builder
			for i, c := range l {
				line.WriteString(c)
				if i < len(widths)-1 {
					line.WriteString(strings.Repeat(" ", widths[i]-displayWidth(c)+2))
				}
			}
			b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
		}
	}
	return b.String()
}

// widths are the columns' widths in String: each its widest cell, header
// included. A table wider than OutputWidth narrows its columns as a browser
// lays out an HTML table too wide for its page, each in proportion to how
// far it can narrow: first only down to its widest cell below the header
// (headers wrap first, between words), then down to its longest word (cells
// wrap between words), and only then down to its longest unbreakable piece
// (a Chinese word breaks between two characters).
func (t *Table) widths() []int {
	n := len(t.Header)
	widths, cells, words, least := make([]int, n), make([]int, n), make([]int, n), make([]int, n)
	for k, r := range append([][]string{t.Header}, t.Rows...) {
		for i, c := range r[:min(len(r), n)] {
			widths[i] = max(widths[i], displayWidth(c))
			for _, w := range cellPieces(c) {
				words[i] = max(words[i], displayWidth(w))
			}
			for _, w := range cellBreaks(c) {
				least[i] = max(least[i], displayWidth(w.text))
			}
			if k > 0 {
				cells[i] = max(cells[i], displayWidth(c))
			}
		}
	}
	for i := range cells {
		cells[i] = max(cells[i], words[i])
	}
	for _, floor := range [][]int{cells, words, least} {
		over, slack := 2*(n-1)-OutputWidth, 0
		for i, w := range widths {
			over += w
			slack += w - floor[i]
		}
		if over <= 0 {
			break
		}
		if over >= slack {
			copy(widths, floor)
			continue
		}
		cut := 0
		for i, w := range widths {
			c := (over*(w-floor[i]) + slack - 1) / slack // rounded up: the cuts cover over
			c = min(c, w-floor[i], over-cut)
			widths[i] -= c
			cut += c
		}
	}
	return widths
}

// wrapRow lays a row out in lines, each cell's unbreakable pieces
// ([cellBreaks]) packed into its column's width.
func wrapRow(r []string, widths []int) [][]string {
	lines := [][]string{make([]string, len(widths))}
	for i, c := range r[:min(len(r), len(widths))] {
		row := 0
		for _, w := range cellBreaks(c) {
			sep := " "
			if w.glued {
				sep = ""
			}
			switch cur := lines[row][i]; {
			case cur == "":
				lines[row][i] = w.text
			case displayWidth(cur)+len(sep)+displayWidth(w.text) <= widths[i]:
				lines[row][i] = cur + sep + w.text
			default:
				if row++; row == len(lines) {
					lines = append(lines, make([]string, len(widths)))
				}
				lines[row][i] = w.text
			}
		}
	}
	return lines
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
		b.WriteString(`<caption style="text-align:left;font-weight:bold;padding:4px 0">` + strings.ReplaceAll(htmlEscape(t.Caption), "\n", "<br>") + `</caption>`)
	}
	// Where the output is too narrow for the table its headers and cells wrap
	// between words, a figure and its unit kept together (as String does).
	cell := func(tag, c string) {
		pieces := cellPieces(c)
		for i, p := range pieces {
			pieces[i] = strings.ReplaceAll(htmlEscape(p), " ", "&nbsp;")
		}
		align := map[string]string{"th": "bottom", "td": "top"}[tag]
		b.WriteString("<" + tag + ` style="text-align:left;vertical-align:` + align + `;padding:2px 8px;border-bottom:1px solid #ddd">` + strings.Join(pieces, " ") + "</" + tag + ">")
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
// elsewhere, its caption, headers and cells that lang's catalog translates in
// the workbook's edition (see [Labels]). A malformed table stops the cell.
func (t *Table) Show() {
	Check(t.check())
	t = t.localized()
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

// Width is the columns the display takes: its Text's widest line, a wide East
// Asian character counting two. A notebook's table fits when it is at most
// [OutputWidth].
func (d Display) Width() int {
	w := 0
	for _, l := range strings.Split(d.Text, "\n") {
		w = max(w, displayWidth(l))
	}
	return w
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
