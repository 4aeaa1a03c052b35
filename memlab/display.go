package memlab

import (
	"fmt"
	"html"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/janpfeifer/gonb/gonbui"
)

// Output is where the Show functions, Measured and Table.Show print outside a
// notebook; nil (the default) means os.Stdout at the time of printing, so
// that output redirected later (as Go's examples do) is followed.
var Output io.Writer

// output is Output, or os.Stdout.
func output() io.Writer {
	if Output == nil {
		return os.Stdout
	}
	return Output
}

// MemorySummary is torch.cuda.memory_summary(): PyTorch's table of allocated,
// active, requested, reserved and non-releasable memory, allocation and
// segment counts, as current, peak, total allocated and total freed.
func (l *Lab) MemorySummary() string { return l.alloc.MemorySummary(false) }

// ShowText shows preformatted text: as an HTML <pre> block in a GoNB notebook
// (so wide tables are not re-wrapped), printed to [Output] elsewhere (or given to
// the display sink, see [SetDisplaySink]).
func ShowText(text string) {
	page := `<pre style="font-size:12px;line-height:1.25">` + html.EscapeString(text) + `</pre>`
	if gonbui.IsNotebook {
		gonbui.DisplayHTML(page)
		gonbui.Sync() // shown before the cell's program exits
		return
	}
	if f := displaySink(); f != nil {
		Check(f(Display{HTML: page, Text: strings.TrimRight(text, "\n") + "\n"}))
		return
	}
	fmt.Fprintln(output(), strings.TrimRight(text, "\n"))
}

// ShowSummary shows [Lab.MemorySummary] readably (see [ShowText]).
func (l *Lab) ShowSummary() { ShowText(l.MemorySummary()) }

// ShowSummary shows the current lab's memory summary; with no lab open it
// panics with [ErrNoLab].
func ShowSummary() {
	with("ShowSummary()", func(l *Lab) struct{} { l.ShowSummary(); return struct{}{} })
}

// StatsTable is the given MemoryStats keys (all keys, sorted, when none are
// given) as a table; byte counts are also shown in PyTorch's units.
func StatsTable(stats map[string]int64, keys ...string) *Table {
	if len(keys) == 0 {
		for k := range stats {
			keys = append(keys, k)
		}
		sort.Strings(keys)
	}
	t := NewTable("stat", "value", "")
	for _, k := range keys {
		v, ok := stats[k]
		switch {
		case !ok:
			t.Row(k, "(no such stat)")
		case strings.Contains(k, "bytes") && v >= 0:
			t.Row(k, v, FormatBytes(v))
		default:
			t.Row(k, v)
		}
	}
	return t
}

// ShowStats shows selected MemoryStats of the lab as a table (see [StatsTable]).
func (l *Lab) ShowStats(keys ...string) { StatsTable(l.MemoryStats(), keys...).Show() }
