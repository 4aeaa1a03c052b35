package memlab

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/device"
	"memlab.dev/memlab/device/devicetest"
	"memlab.dev/memlab/device/sim"
	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/tensor"
)

func TestMustAndCheck(t *testing.T) {
	if got := Must(7, nil); got != 7 {
		t.Errorf("Must(7, nil) = %d", got)
	}
	if a, b := Must2(1, "x", nil); a != 1 || b != "x" {
		t.Errorf("Must2 = %v, %v", a, b)
	}
	boom := errors.New("boom")
	if msg := panicOf(func() { Must(0, boom) }); msg != "boom" {
		t.Errorf("Must with an error panicked %q, want boom", msg)
	}
	if msg := panicOf(func() { Check(nil) }); msg != "" {
		t.Errorf("Check(nil) panicked %q", msg)
	}
}

func TestTable(t *testing.T) {
	tab := NewTable("name", "size")
	tab.Row("a<b", FormatBytes(512)).Row("long name", FormatBytes(3<<20))
	tab.Row("short row")
	want := "name       size\na<b        512 bytes\nlong name  3.00 MiB\nshort row\n"
	if got := tab.String(); got != want {
		t.Errorf("String:\n%q\nwant\n%q", got, want)
	}
	h := tab.HTML()
	if !strings.Contains(h, "<th") || !strings.Contains(h, "a&lt;b") || strings.Count(h, "<tr>") != 4 {
		t.Errorf("HTML: %s", h)
	}
	var out strings.Builder
	prev := Output
	Output = &out
	defer func() { Output = prev }()
	tab.Show()
	if out.String() != want {
		t.Errorf("Show printed %q", out.String())
	}
	// Chinese characters take two columns: the next column starts where it
	// would after two Latin letters per character.
	zh := NewTable("练习", "状态").Row("ab", "未开始").Row("显存池", "x").String()
	if want := "练习    状态\nab      未开始\n显存池  x\n"; zh != want {
		t.Errorf("a table with Chinese:\n%q\nwant\n%q", zh, want)
	}
	bad := NewTable("one").Row("a", "b")
	if msg := panicOf(bad.Show); !strings.Contains(msg, "row 0 has 2 cells for 1 columns") {
		t.Errorf("a row wider than the header: panic %q", msg)
	}
}

func TestMeasured(t *testing.T) {
	var out strings.Builder
	prev := Output
	Output = &out
	defer func() { Output = prev }()
	Measured("%s after x\n", FormatBytes(4<<20))
	if out.String() != "Measured: 4.00 MiB after x\n" {
		t.Errorf("Measured printed %q", out.String())
	}
	// The Chinese edition: its prefix, and the catalog's sentence where it has one.
	t.Setenv("MEMLAB_LANG", "zh-CN")
	out.Reset()
	Measured("%s after x\n", FormatBytes(4<<20))
	if out.String() != "实测：4.00 MiB after x\n" {
		t.Errorf("Measured printed %q in the Chinese edition (an untranslated sentence stays English)", out.String())
	}
}

// A size of exactly one unit is written in that unit (issue 18: "1024.00 KiB"
// beside "1.00 MiB"); differences keep their sign.
func TestFormatBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 bytes"}, {512, "512 bytes"}, {1023, "1023 bytes"}, {1 << 10, "1.00 KiB"}, {1536, "1.50 KiB"},
		{1<<20 - 1<<9, "1023.50 KiB"}, {1 << 20, "1.00 MiB"}, {1 << 30, "1.00 GiB"}, {150109880320, "139.80 GiB"},
		{-(4 << 20), "-4.00 MiB"}, {-512, "-512 bytes"}, {math.MinInt64, "-8589934592.00 GiB"}} {
		if got := FormatBytes(c.n); got != c.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestOutcome(t *testing.T) {
	if got := Outcome(nil); got != "served" {
		t.Errorf("Outcome(nil) = %q", got)
	}
	l := MustOpen(Sim("1GiB"), NotCurrent())
	defer l.Close()
	_, err := l.Allocate(2 << 30)
	if got := Outcome(err); got != "out of memory" {
		t.Errorf("Outcome(%v) = %q", err, got)
	}
	defer func() {
		if recover() == nil {
			t.Error("Outcome of another error did not stop the cell")
		}
	}()
	Outcome(errors.New("odd"))
}

// In a notebook a Measured line is wrapped between words, never inside one
// (issue 18: JupyterLab broke lines mid-word).
func TestWrapWords(t *testing.T) {
	line := "Measured: expandable_segments:True: peak reserved 3.53 GiB (PyTorch measured 3.53 GiB), -20.4 % against the defaults; the smallest device it trains on: 3.50 GiB"
	got := wrapWords(line, 40)
	if strings.ReplaceAll(got, "\n  ", " ") != line {
		t.Errorf("wrapping changed the text:\n%s", got)
	}
	for _, l := range strings.Split(got, "\n") {
		if displayWidth(l) > 40 && !strings.Contains(strings.TrimSpace(l), " ") {
			continue // one word longer than a line stays whole
		}
		if displayWidth(l) > 40 {
			t.Errorf("line %q is %d columns", l, displayWidth(l))
		}
	}
	for _, l := range strings.Split(wrapWords("Measured: peak reserved 5.04 GiB (-7.4 % against the defaults' 5.44 GiB), peak 0 bytes", 38)+"\n"+
		wrapWords("实测：在 lab 打开之后才设置：已预留 1.00 GiB，分配器设置 \"\"；相对默认设置 +0.0 %；empty_cache() 让 memory_allocated 总共变化了 0 bytes：它", 60), "\n") {
		for _, u := range []string{"GiB", "%", "bytes"} {
			if strings.HasPrefix(strings.TrimSpace(l), u) {
				t.Errorf("line %q starts with the unit of the line before", l)
			}
		}
	}
	if got := wrapWords("short line", 40); got != "short line" {
		t.Errorf("a short line became %q", got)
	}
	if displayWidth("实测：显存") != 10 {
		t.Errorf("displayWidth of Chinese = %d, want 10", displayWidth("实测：显存"))
	}
}

func TestShowAndCellExec(t *testing.T) {
	var shown []Figure
	prev := SetFigureSink(func(f Figure) error { shown = append(shown, f); return nil })
	defer SetFigureSink(prev)
	fig, err := memplot.Bars("t", "MiB", []string{"a"}, memplot.BarSeries{Name: "s", Values: []float64{1}})
	if err != nil {
		t.Fatal(err)
	}
	if msg := panicOf(func() { Show(nil, errors.New("no plot")) }); msg != "no plot" {
		t.Errorf("Show with an error: panic %q", msg)
	}
	if msg := panicOf(func() { Show(nil, nil) }); !strings.Contains(msg, "nil figure") {
		t.Errorf("Show(nil, nil): panic %q", msg)
	}
	c := Cell{Notebook: "nb", Section: "1.1 x", Name: "ok", Plot: true, Func: func() { Show(fig, nil) }}
	if n, err := c.Exec(); n != 1 || err != nil || len(shown) != 1 {
		t.Errorf("Exec = %d, %v (%d shown); want 1 figure through the sink", n, err, len(shown))
	}
	c.Func = func() {}
	if _, err := c.Exec(); err == nil || !strings.Contains(err.Error(), "tagged plot but showed no figure") {
		t.Errorf("a plot cell without a figure: %v", err)
	}
	c.Func = func() { Must(0, errors.New("device on fire")) }
	if _, err := c.Exec(); err == nil || !strings.Contains(err.Error(), "cell ok (1.1 x): device on fire") {
		t.Errorf("a failing cell: %v", err)
	}
	c.Func = func() { panic("plain") }
	if _, err := c.Exec(); err == nil || !strings.Contains(err.Error(), "panic: plain") {
		t.Errorf("a panicking cell: %v", err)
	}
	if _, err := (Cell{Name: "none"}).Exec(); err == nil {
		t.Error("a cell without a function ran")
	}
}

func TestBudget(t *testing.T) {
	l, err := Open(Sim("8GiB"), Budget(512<<20), AllocConf(""), NotCurrent())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, total, _ := l.MemGetInfo(); total != 512<<20 {
		t.Errorf("a simulated device with Budget(512 MiB) has %d bytes", total)
	}
	if _, err := tensor.Empty(l, tensor.Uint8, 600<<20); !IsOutOfMemory(err) {
		t.Errorf("600 MiB in a 512 MiB budget: %v", err)
	}
	// On a device that is not the lab's own, the budget is a cap.
	big := openSim(t)
	capped, err := Open(SharedWith(big), Budget(64<<20), AllocConf(""), NotCurrent())
	if err != nil {
		t.Fatal(err)
	}
	defer capped.Close()
	if _, err := capped.Allocate(100 << 20); !IsOutOfMemory(err) || !strings.Contains(err.Error(), "allowed") {
		t.Errorf("100 MiB past a 64 MiB cap: %v", err)
	}
	if _, err := Open(Budget(1000)); err == nil || !strings.Contains(err.Error(), "at least 1 MiB") {
		t.Errorf("Budget(1000): %v", err)
	}
}

func TestSteps(t *testing.T) {
	l := openSim(t)
	s := l.Steps()
	if _, err := memplot.Curve("empty", s); err == nil {
		t.Error("plotting no steps succeeded")
	}
	s.Add("start")
	x, err := tensor.Empty(l, tensor.Uint8, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	s.Add("x")
	if err := x.Release(); err != nil {
		t.Fatal(err)
	}
	s.AddErr("del x", errors.New("odd"))
	if st, ok := s.Find("x"); !ok || st.Allocated != 1<<20 || st.Reserved != 2<<20 || st.DeviceAllocs != 1 {
		t.Errorf("step x = %+v, %v", st, ok)
	}
	if last := s.Last(); last.Allocated != 0 || last.Err != "odd" {
		t.Errorf("last = %+v", last)
	}
	if got, want := s.Last().Outcome(), "failed: odd"; got != want {
		t.Errorf("Outcome() = %q, want %q", got, want)
	}
	if st, _ := s.Find("x"); st.Outcome() != "served" {
		t.Errorf("step x: Outcome() = %q", st.Outcome())
	}
	if got := s.Table().String(); !strings.Contains(got, "x      1.00 MiB   2.00 MiB") {
		t.Errorf("table:\n%s", got)
	}
	if _, err := memplot.AllocatorCurve("p", s); err != nil {
		t.Error(err)
	}
	if tl := s.Timeline(); len(tl.Labels) != 3 || tl.Labels[1] != "x" {
		t.Errorf("timeline labels %q, want the steps' labels", tl.Labels)
	}
	if sr := s.Series("a", func(st Step) int64 { return st.Allocated }); len(sr.Y) != 3 || sr.Y[1] != 1<<20 {
		t.Errorf("series %+v", sr)
	}
}

type columns struct{}

func (columns) Columns() ([]string, [][]string) {
	return []string{"setting", "peak"}, [][]string{{"default", "5.44 GiB"}, {"expandable", "5.04 GiB"}}
}

// TestTableOf: a Columner's header and rows become the table unchanged.
func TestTableOf(t *testing.T) {
	tab := TableOf(columns{})
	want := "setting     peak\ndefault     5.44 GiB\nexpandable  5.04 GiB\n"
	if got := tab.String(); got != want {
		t.Errorf("String:\n%q\nwant\n%q", got, want)
	}
	if h := tab.HTML(); strings.Count(h, "<tr>") != 3 || !strings.Contains(h, "<td style=\"text-align:left;vertical-align:top;padding:2px 8px;border-bottom:1px solid #ddd\">expandable</td>") {
		t.Errorf("HTML: %s", h)
	}
}

func TestDisplaySink(t *testing.T) {
	var got []Display
	prev := SetDisplaySink(func(d Display) error { got = append(got, d); return nil })
	defer SetDisplaySink(prev)
	var out strings.Builder
	prevOut := Output
	Output = &out
	defer func() { Output = prevOut }()
	NewTable("stat", "value").Row("a<b", 1).Show()
	ShowText("line 1\nline 2\n")
	if out.Len() != 0 {
		t.Errorf("with a display sink, Show printed %q to Output", out.String())
	}
	if len(got) != 2 {
		t.Fatalf("the sink got %d displays, want 2", len(got))
	}
	if !strings.Contains(got[0].HTML, "<td style") || !strings.Contains(got[0].HTML, "a&lt;b") || got[0].Text != "stat  value\na<b   1\n" {
		t.Errorf("table display = %+v", got[0])
	}
	if !strings.HasPrefix(got[1].HTML, "<pre") || got[1].Text != "line 1\nline 2\n" {
		t.Errorf("text display = %+v", got[1])
	}
	SetDisplaySink(func(Display) error { return errors.New("sink full") })
	if msg := panicOf(func() { ShowText("x") }); msg != "sink full" {
		t.Errorf("a failing sink: panic %q, want the sink's error", msg)
	}
}

// A table wider than OutputWidth wraps between words, as the notebook's HTML
// table does, and then fits, a figure and its unit kept together; a narrow
// one keeps its headers on one line.
func TestTableWrapsHeadersToFit(t *testing.T) {
	narrow := NewTable("setting", "peak reserved").Row("default", "5.44 GiB")
	if got := narrow.String(); got != "setting  peak reserved\ndefault  5.44 GiB\n" {
		t.Errorf("narrow table:\n%s", got)
	}
	h := []string{"setting"}
	row := []any{"expandable"}
	for range 7 {
		h = append(h, "peak allocated memory at the end")
		row = append(row, "5.44 GiB")
	}
	wide := NewTable(h...).Row(row...)
	got := wide.String()
	d := Display{Text: got}
	if d.Width() > OutputWidth {
		t.Errorf("wide table is %d columns, more than %d:\n%s", d.Width(), OutputWidth, got)
	}
	lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "setting     peak        peak") ||
		!strings.HasPrefix(lines[3], "            the end     the end") || !strings.HasPrefix(lines[4], "expandable  5.44 GiB    5.44 GiB") {
		t.Errorf("wide table's headers not wrapped to its columns:\n%s", got)
	}
	if h := wide.HTML(); !strings.Contains(h, `>peak allocated memory at the end</th>`) || !strings.Contains(h, `>5.44&nbsp;GiB</td>`) {
		t.Errorf("HTML: words must break, a figure and its unit not: %s", h)
	}
	long := NewTable("#", "exercise").Row("17", strings.Repeat("in-place block, ", 8)).String()
	if w := (Display{Text: long}).Width(); w > OutputWidth || strings.Count(long, "\n") != 3 {
		t.Errorf("a long cell is not wrapped to fit (%d columns):\n%s", w, long)
	}
	if w := (Display{Text: "实测：ab\nabc"}).Width(); w != 8 {
		t.Errorf("Display.Width = %d, want 8", w)
	}
}

func TestTableWithout(t *testing.T) {
	tab := NewTable("setting", "retries", "peak").Row("default", 0, "5.44 GiB").Row("short")
	if got := tab.Without("retries").String(); got != "setting  peak\ndefault  5.44 GiB\nshort\n" {
		t.Errorf("Without:\n%q", got)
	}
	if err := tab.Without("OOMs").check(); err == nil || !strings.Contains(err.Error(), `Without("OOMs"): no such column`) {
		t.Errorf("Without of a missing column: %v", err)
	}
}

func TestUnbreakable(t *testing.T) {
	got := unbreakable("292.00 MiB [280.00 MiB, 316.00 MiB] x[:, ::2] and 7 % (a b)")
	want := []string{"292.00 MiB", "[280.00 MiB, 316.00 MiB]", "x[:, ::2]", "and", "7 %", "(a", "b)"}
	if !slices.Equal(got, want) {
		t.Errorf("unbreakable = %q, want %q", got, want)
	}
	if got := cellPieces("x[:, ::2].view(1024, 256, 2) (a b"); !slices.Equal(got, []string{"x[:, ::2].view(1024, 256, 2)", "(a b"}) {
		t.Errorf("cellPieces = %q", got)
	}
}

// A Chinese cell breaks between two ideographs, never inside a word in
// brackets or between an ideograph and punctuation, and its halves join
// without a space; a narrow column wraps it there.
func TestCellBreaksChinese(t *testing.T) {
	got := cellBreaks("已预留峰值 分页（PagedKVCache）")
	want := []piece{{"已", false}, {"预", true}, {"留", true}, {"峰", true}, {"值", true}, {"分", false}, {"页（PagedKVCache）", true}}
	if !slices.Equal(got, want) {
		t.Errorf("cellBreaks = %+v, want %+v", got, want)
	}
	lines := wrapRow([]string{"非活跃分割块峰值"}, []int{8})
	if len(lines) != 2 || lines[0][0] != "非活跃分" || lines[1][0] != "割块峰值" {
		t.Errorf("a Chinese header in a column 8 wide: %q", lines)
	}
}

// A caption's lines stay lines in the notebook's HTML, and wrap to fit in text.
func TestTableCaptionLines(t *testing.T) {
	tab := NewTable("a").Row("1")
	tab.Caption = "first line\n" + strings.Repeat("word ", 30)
	if h := tab.HTML(); !strings.Contains(h, "first line<br>word") {
		t.Errorf("HTML caption: %s", h)
	}
	if w := (Display{Text: tab.String()}).Width(); w > OutputWidth {
		t.Errorf("caption is %d columns:\n%s", w, tab.String())
	}
}

// TestWrapText: every line of a caption is wrapped to OutputWidth, line breaks kept.
func TestWrapText(t *testing.T) {
	long := strings.Repeat("word ", 40)
	got := WrapText(long + "\nshort")
	lines := strings.Split(got, "\n")
	if lines[len(lines)-1] != "short" {
		t.Errorf("the second line was not kept: %q", got)
	}
	for _, l := range lines {
		if displayWidth(l) > OutputWidth {
			t.Errorf("line %q is %d columns, want at most %d", l, displayWidth(l), OutputWidth)
		}
	}
	if len(lines) < 3 {
		t.Errorf("a %d-column line was not wrapped: %q", len(long), got)
	}
}

// TestBudgetDevice: on a real GPU Budget(n) opens a budget of n bytes on the
// card (here on a larger simulated card, which stands in for it): a device in
// its own right, which passes the device suite, counts a simulated device's
// context and every lab that shares it, and runs out of memory where a
// simulated device of n bytes does, with the same mem_get_info().
func TestBudgetDevice(t *testing.T) {
	card := func() device.Device {
		d, err := sim.New(sim.Config{Capacity: 8 << 30})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	}
	devicetest.RunExcept(t, newBudgetDevice(card(), 1<<30), func(name string) bool {
		return name != "Memory" && name != "VirtualMemory"
	})
	// Two tenants on the budget against two on a simulated device of its size.
	run := func(a *Lab) string {
		b, err := Open(SharedWith(a), AllocConf(""), NotCurrent())
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		var log []string
		for _, l := range []*Lab{a, b, a} {
			p, err := l.Allocate(300 << 20)
			free, total, _ := l.MemGetInfo()
			log = append(log, fmt.Sprintf("%v %v free %d of %d", p != 0, IsOutOfMemory(err), free, total))
		}
		return strings.Join(log, "; ")
	}
	onBudget, err := Open(OnDevice(newBudgetDevice(card(), 1<<30)), AllocConf(""), NotCurrent())
	if err != nil {
		t.Fatal(err)
	}
	defer onBudget.Close()
	onSim, err := Open(Sim("8GiB"), Budget(1<<30), AllocConf(""), NotCurrent())
	if err != nil {
		t.Fatal(err)
	}
	defer onSim.Close()
	got, want := run(onBudget), run(onSim)
	if got != want || !strings.Contains(want, "false true") {
		t.Errorf("on a budget: %s\non a simulated device of its size: %s\n(want the same, the third request out of memory)", got, want)
	}
	if name := onBudget.Device().Name(); !strings.Contains(name, "a 1.00 GiB budget") {
		t.Errorf("the budget device is named %q", name)
	}
}

// In the Chinese edition, labels the catalog translates (an outcome, a
// column header) print in Chinese in tables, Measured and verdict lines; the
// English edition and untranslated strings print as given.
func TestLabelsFollowTheEdition(t *testing.T) {
	args := []any{Outcome(nil), "max_split_size_mb:128", 3}
	if got := Labels(lang.English, args); got[0] != "served" {
		t.Errorf("English labels changed: %v", got)
	}
	got := Labels(lang.Chinese, args)
	if got[0] != "已满足" || got[1] != "max_split_size_mb:128" || got[2] != 3 {
		t.Errorf("Chinese labels %v, want the outcome translated and the rest as given", got)
	}
	t.Setenv("MEMLAB_LANG", "zh-CN")
	var buf strings.Builder
	prev := Output
	Output = &buf
	defer func() { Output = prev }()
	NewTable("step", "an untranslated header").Row("x", Outcome(memlabOOM{})).Show()
	Measured("%s", Outcome(nil))
	if out := buf.String(); !strings.Contains(out, "步骤") || !strings.Contains(out, "an untranslated header") ||
		!strings.Contains(out, "显存不足") || !strings.Contains(out, "实测：已满足") {
		t.Errorf("Chinese edition output:\n%s", out)
	}
}

// A []string argument prints as a list in the edition's way, its items
// translated where they are labels.
func TestLabelsWriteListsInTheEdition(t *testing.T) {
	cases := []struct {
		edition string
		items   []string
		want    string
	}{
		{lang.English, nil, ""},
		{lang.English, []string{"a"}, "a"},
		{lang.English, []string{"a", "b"}, "a and b"},
		{lang.English, []string{"a", "b", "c"}, "a, b and c"},
		{lang.Chinese, []string{"max_split_size_mb:512", "max_split_size_mb:1024"}, "max_split_size_mb:512 和 max_split_size_mb:1024"},
		{lang.Chinese, []string{"a", "b", "served"}, "a、b 和 已满足"},
	}
	for _, c := range cases {
		if got := fmt.Sprint(Labels(c.edition, []any{c.items})...); got != c.want {
			t.Errorf("%s %q printed %q, want %q", c.edition, c.items, got, c.want)
		}
	}
}

// memlabOOM is an out-of-memory error.
type memlabOOM struct{}

func (memlabOOM) Error() string     { return "out of memory" }
func (memlabOOM) OutOfMemory() bool { return true }

// TestTableLocalizesSizesAndCompounds checks that a shown table's cells in
// the Chinese edition say "字节" for a size under 1 KiB and translate each
// part of a compound label, and that English tables are left as they are.
func TestTableLocalizesSizesAndCompounds(t *testing.T) {
	show := func(ed string) string {
		t.Setenv("MEMLAB_LANG", ed)
		var buf strings.Builder
		prev := Output
		Output = &buf
		defer func() { Output = prev }()
		NewTable("setting", "peak reserved").Row("defaults + free", "0 bytes").Row("defaults+free", "-512 bytes").Row("y", "many bytes").Show()
		return buf.String()
	}
	zh := show(lang.Chinese)
	for _, want := range []string{"默认设置 + 空闲", "默认设置+空闲", "0 字节", "-512 字节", "many bytes"} {
		if !strings.Contains(zh, want) {
			t.Errorf("Chinese table lacks %q:\n%s", want, zh)
		}
	}
	en := show(lang.English)
	for _, want := range []string{"defaults + free", "0 bytes", "-512 bytes"} {
		if !strings.Contains(en, want) {
			t.Errorf("English table lacks %q:\n%s", want, en)
		}
	}
}

// TestChineseHeadersStayWhole: a table too wide for OutputWidth wraps its cells
// between words (a long label at its spaces) before it breaks a Chinese header
// between two characters — notebook 04's table of memlab's own modes, whose
// headers broke as 已分配峰/值 and 分配/器调/用 while a label kept 31 columns.
func TestChineseHeadersStayWhole(t *testing.T) {
	tab := NewTable("模式", "已分配峰值", "超出权重", "节省", "已预留峰值", "分配器调用", "cudaMalloc", "token 中位数")
	tab.Row("pooled-scores", "3.47 MiB", "0.91 MiB", "-45.0%", "4.00 MiB", 4020, 0, "623 µs")
	tab.Row("教材三招 + pooled-scores", "3.54 MiB", "0.98 MiB", "-55.9%", "4.00 MiB", 2385, 0, "582 µs")
	tab.Row("视图 + kv-cache + last-logits", "3.04 MiB", "0.47 MiB", "24.8%", "4.00 MiB", 4102, 0, "581 µs")
	out := tab.String()
	if w := (Display{Text: out}).Width(); w > OutputWidth {
		t.Fatalf("table is %d columns, want at most %d:\n%s", w, OutputWidth, out)
	}
	for _, h := range []string{"已分配峰值", "超出权重", "已预留峰值", "分配器调用"} {
		if !strings.Contains(out, h) {
			t.Errorf("header %s broke between characters:\n%s", h, out)
		}
	}
}
