package memlab

import (
	"fmt"
	"html"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/janpfeifer/gonb/gonbui"

	"memlab.dev/memlab/allocator"
)

// Output is where the Show functions print outside a notebook.
var Output io.Writer = os.Stdout

// MemorySummary is torch.cuda.memory_summary(): PyTorch's table of allocated,
// active, requested, reserved and non-releasable memory, allocation and
// segment counts, as current, peak, total allocated and total freed.
func (l *Lab) MemorySummary() string { return l.alloc.MemorySummary(false) }

// ShowText shows preformatted text: as an HTML <pre> block in a GoNB notebook
// (so wide tables are not re-wrapped), printed to [Output] elsewhere.
func ShowText(text string) {
	if gonbui.IsNotebook {
		gonbui.DisplayHTML(`<pre style="font-size:12px;line-height:1.25">` + html.EscapeString(text) + `</pre>`)
		gonbui.Sync() // shown before the cell's program exits
		return
	}
	fmt.Fprintln(Output, strings.TrimRight(text, "\n"))
}

// ShowSummary shows [Lab.MemorySummary] readably (see [ShowText]).
func (l *Lab) ShowSummary() { ShowText(l.MemorySummary()) }

// ShowSummary shows the current lab's memory summary; with no lab open it
// panics with [ErrNoLab].
func ShowSummary() {
	with("ShowSummary()", func(l *Lab) struct{} { l.ShowSummary(); return struct{}{} })
}

// StatsTable formats the given MemoryStats keys (all keys when none are given)
// as a two-column table; byte counts are also shown in PyTorch's units.
func StatsTable(stats map[string]int64, keys ...string) string {
	if len(keys) == 0 {
		for k := range stats {
			keys = append(keys, k)
		}
		sort.Strings(keys)
	}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "stat\tvalue\t\t")
	for _, k := range keys {
		v, ok := stats[k]
		if !ok {
			fmt.Fprintf(w, "%s\t(no such stat)\t\t\n", k)
			continue
		}
		human := ""
		if strings.Contains(k, "bytes") && v >= 0 {
			human = allocator.FormatSize(v)
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t\n", k, v, human)
	}
	w.Flush()
	return b.String()
}

// ShowStats shows selected MemoryStats of the lab as a table (see [StatsTable]).
func (l *Lab) ShowStats(keys ...string) { ShowText(StatsTable(l.MemoryStats(), keys...)) }
