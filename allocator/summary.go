package allocator

import (
	"fmt"
	"strings"
)

// MemorySummary renders the statistics as torch.cuda.memory_summary() does, byte for
// byte: a 77-column table of current, peak, allocated and freed values per metric and
// pool. abbreviated leaves out the per-pool rows.
func (a *Allocator) MemorySummary(abbreviated bool) string {
	a.mu.Lock()
	stats := a.stats.flatten()
	dev := a.device
	a.mu.Unlock()
	return formatSummary(stats, dev, abbreviated)
}

func formatSummarySize(sz int64, pref float64) string {
	units := [...]string{"B  ", "KiB", "MiB", "GiB", "TiB", "PiB"}
	unit := units[0]
	for _, u := range units[1:] {
		if pref < 768*1024 {
			break
		}
		unit = u
		sz = floorDiv(sz, 1024)
		pref /= 1024
	}
	return fmt.Sprintf("%6d %s", sz, unit)
}

func formatSummaryCount(n int64, pref float64) string {
	units := [...]string{" ", "K", "M"}
	unit := units[0]
	for _, u := range units[1:] {
		if pref < 750*1000 {
			break
		}
		unit = u
		n = floorDiv(n, 1000)
		pref /= 1000
	}
	return fmt.Sprintf("%7d %s ", n, unit)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func formatSummary(stats map[string]int64, device int, abbreviated bool) string {
	line := strings.Repeat("=", 75)
	dash := strings.Repeat("-", 75)
	lines := []string{
		line,
		fmt.Sprintf(" %16s PyTorch CUDA memory summary, device ID %-17d ", "", device),
		dash,
		fmt.Sprintf("  %9s CUDA OOMs: %-12d | %6s cudaMalloc retries: %-8d  ", "", stats["num_ooms"], "", stats["num_alloc_retries"]),
		line,
		"        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ",
	}
	type metric struct {
		key, label string
		size       bool
	}
	metrics := []metric{
		{"allocated_bytes", "Allocated memory", true},
		{"active_bytes", "Active memory", true},
		{"requested_bytes", "Requested memory", true},
		{"reserved_bytes", "GPU reserved memory", true},
		{"inactive_split_bytes", "Non-releasable memory", true},
		{"allocation", "Allocations", false},
		{"active", "Active allocs", false},
		{"segment", "GPU reserved segments", false},
		{"inactive_split", "Non-releasable allocs", false},
	}
	format := func(size bool, v int64, pref int64) string {
		if size {
			return formatSummarySize(v, float64(pref))
		}
		return formatSummaryCount(v, float64(pref))
	}
	cols := [4]string{"current", "peak", "allocated", "freed"}
	for _, m := range metrics {
		lines = append(lines, dash)
		subs := [][2]string{{"all", m.label}}
		if !abbreviated {
			subs = append(subs, [2]string{"large_pool", "      from large pool"}, [2]string{"small_pool", "      from small pool"})
		}
		var pref [4]int64
		for i, s := range subs {
			var cells [4]string
			for c, col := range cols {
				v := stats[m.key+"."+s[0]+"."+col]
				if i == 0 {
					pref[c] = v
				}
				cells[c] = format(m.size, v, pref[c])
			}
			lines = append(lines, fmt.Sprintf(" %-21s | %s | %s | %s | %s ", s[1], cells[0], cells[1], cells[2], cells[3]))
		}
	}
	for _, m := range []metric{{"oversize_allocations", "Oversize allocations", false}, {"oversize_segments", "Oversize GPU segments", false}} {
		lines = append(lines, dash)
		var cells [4]string
		for c, col := range cols {
			v := stats[m.key+"."+col]
			cells[c] = formatSummaryCount(v, float64(v))
		}
		lines = append(lines, fmt.Sprintf(" %-21s | %s | %s | %s | %s ", m.label, cells[0], cells[1], cells[2], cells[3]))
	}
	lines = append(lines, line)
	return "|" + strings.Join(lines, "|\n|") + "|\n"
}
