// Command instructor-timings writes the timing tables of the instructor guide
// (docs/instructor/en.md and zh-CN.md): for every notebook, how long each cell
// takes
//
//   - in JupyterLab on the simulated device, GoNB's compile included: the
//     execution timestamps nbconvert records in build/notebooks/EDITION/NAME.ipynb
//     (written by scripts/run-notebooks.sh, make notebooks);
//   - as code only on the simulated device: `memlab lab -device sim`, which this
//     command runs on this machine;
//   - as code only on a GPU: the "(Nms)" lines of notebooks/recorded/h200-lab.txt
//     (`memlab lab -device cuda` on an H200; its first lines say when and how);
//   - and, where the repository keeps executed copies (notebooks/executed,
//     written by memlab lab -ipynb), the elapsed_s each of their cells records,
//     with the device, date and command of their stamp.
//
// Each table goes between the markers
//
//	<!-- timings NN: begin (go run ./scripts/instructor-timings) -->
//	<!-- timings NN: end -->
//
// and says the machine and the date. It also writes the figures the guides
// quote about the exercises, from the exercises folder, between
// <!-- exercises KEY --> and <!-- /exercises --> (KEY: count, count NN,
// numbers NN). Run it from the repository's root after
// make notebooks:
//
//	go run ./scripts/instructor-timings
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"memlab.dev/memlab/memlab"

	_ "memlab.dev/memlab/notebooks/src/00-setup-and-tour"    // registers notebook 00's cells
	_ "memlab.dev/memlab/notebooks/src/02-memory-mechanics"  // registers notebook 02's cells
	_ "memlab.dev/memlab/notebooks/src/04-reuse-and-sharing" // registers notebook 04's cells
	_ "memlab.dev/memlab/notebooks/src/05-what-if"           // registers notebook 05's cells
)

func main() {
	executed := flag.String("executed", "build/notebooks", "the executed notebooks of scripts/run-notebooks.sh (EDITION/NAME.ipynb)")
	gpu := flag.String("gpu", "notebooks/recorded/h200-lab.txt", "a memlab lab -device cuda log")
	simLog := flag.String("sim-log", "", "a memlab lab -device sim log to read instead of running it")
	kept := flag.String("kept", "notebooks/executed", "the kept executed copies (EDITION/NAME.ipynb, memlab lab -ipynb): a column of their cells' times when present")
	docs := flag.String("docs", "docs/instructor/en.md,docs/instructor/zh-CN.md", "the guides to write, comma-separated")
	flag.Parse()
	if err := run(*executed, *gpu, *simLog, *kept, strings.Split(*docs, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "instructor-timings:", err)
		os.Exit(1)
	}
}

func run(executed, gpuPath, simLog, keptDir string, docs []string) error {
	gpuText, err := os.ReadFile(gpuPath)
	if err != nil {
		return err
	}
	gpu, err := parseLabLog(bytes.NewReader(gpuText))
	if err != nil {
		return fmt.Errorf("%s: %w", gpuPath, err)
	}
	var simText []byte
	if simLog != "" {
		simText, err = os.ReadFile(simLog)
	} else {
		simText, err = runLabSim()
	}
	if err != nil {
		return err
	}
	sim, err := parseLabLog(bytes.NewReader(simText))
	if err != nil {
		return fmt.Errorf("memlab lab -device sim: %w", err)
	}
	byNotebook := map[string][]memlab.Cell{}
	var order []string
	for _, c := range memlab.Cells() {
		if byNotebook[c.Notebook] == nil {
			order = append(order, c.Notebook)
		}
		byNotebook[c.Notebook] = append(byNotebook[c.Notebook], c)
	}
	facts, err := exerciseFacts("exercises")
	if err != nil {
		return err
	}
	hosts := map[string]string{"en": hostLine("en"), "zh-CN": hostLine("zh-CN")}
	gpuHead := firstLine(string(gpuText))
	tables := map[string]map[string]string{} // doc language → notebook number → table
	for _, ed := range []string{"en", "zh-CN"} {
		tables[ed] = map[string]string{}
	}
	for _, nb := range order {
		lab, stamp, src, err := notebookTimes(executed, nb, byNotebook[nb])
		if err != nil {
			return err
		}
		k, err := keptTimes(keptDir, nb)
		if err != nil {
			return err
		}
		zhSections, err := sectionsZH("notebooks", nb)
		if err != nil {
			return err
		}
		for ed := range tables {
			m := meta{host: hosts[ed], labStamp: stamp, labFile: src, gpuHead: gpuHead, gpuFile: gpuPath}
			if ed == "zh-CN" {
				m.sections = zhSections
			}
			tables[ed][nb[:2]] = table(ed, byNotebook[nb], lab, sim, gpu, k, m)
		}
	}
	for _, doc := range docs {
		ed := "en"
		if strings.Contains(filepath.Base(doc), "zh") {
			ed = "zh-CN"
		}
		text, err := os.ReadFile(doc)
		if err != nil {
			return err
		}
		out, err := replaceBlocks(string(text), tables[ed])
		if err != nil {
			return fmt.Errorf("%s: %w", doc, err)
		}
		if out, err = replaceFacts(out, facts); err != nil {
			return fmt.Errorf("%s: %w", doc, err)
		}
		if err := os.WriteFile(doc, []byte(out), 0o644); err != nil {
			return err
		}
		fmt.Printf("instructor-timings: wrote the timing tables of %s\n", doc)
	}
	return nil
}

// runLabSim runs every cell on the simulated device, as `memlab lab` does.
func runLabSim() ([]byte, error) {
	plots, err := os.MkdirTemp("", "instructor-timings-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(plots)
	cmd := exec.Command("go", "run", "./cmd/memlab", "lab", "-device", "sim", "-plots", plots)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go run ./cmd/memlab lab -device sim: %w", err)
	}
	return out.Bytes(), nil
}

// labHeader is a cell's heading line in a memlab lab log, and labTime the line
// with its time.
var (
	labHeader = regexp.MustCompile(`^=== (\S+) · .* · (\w+)$`)
	labTime   = regexp.MustCompile(`^\((\d+(?:\.\d+)?)(ms|s|µs)\)$`)
)

// parseLabLog reads a memlab lab log: "=== NOTEBOOK · SECTION · NAME" lines,
// each cell's output, then its time "(307ms)". It returns the times by
// "NOTEBOOK/NAME".
func parseLabLog(r io.Reader) (map[string]time.Duration, error) {
	times := map[string]time.Duration{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	cur := ""
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \r")
		if m := labHeader.FindStringSubmatch(line); m != nil {
			cur = m[1] + "/" + m[2]
			continue
		}
		if m := labTime.FindStringSubmatch(line); m != nil && cur != "" {
			v, _ := strconv.ParseFloat(m[1], 64)
			unit := map[string]time.Duration{"ms": time.Millisecond, "s": time.Second, "µs": time.Microsecond}[m[2]]
			times[cur] = time.Duration(v * float64(unit))
			cur = ""
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(times) == 0 {
		return nil, errors.New("no cell times (\"=== NOTEBOOK · SECTION · NAME\" then \"(Nms)\")")
	}
	return times, nil
}

// executedCopy returns the path of notebook nb's executed copy under dir
// (EDITION/NB.ipynb): the English edition's, else the Chinese one's; "" when
// there is neither.
func executedCopy(dir, nb string) string {
	for _, ed := range []string{"en", "zh-CN"} {
		p := filepath.Join(dir, ed, nb+".ipynb")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// notebookTimes reads the nbconvert timestamps of notebook nb's executed copy
// (English edition, else Chinese): each //nb:cell's time by name, and the rest
// (the set-up cell, declarations) under "". It returns when it was run and the
// file read.
func notebookTimes(dir, nb string, cells []memlab.Cell) (map[string]time.Duration, string, string, error) {
	path := executedCopy(dir, nb)
	if path == "" {
		return nil, "", "", fmt.Errorf("no executed %s.ipynb under %s/{en,zh-CN}: run make notebooks first", nb, dir)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", "", err
	}
	var doc struct {
		Cells []struct {
			CellType string          `json:"cell_type"`
			Source   json.RawMessage `json:"source"`
			Metadata struct {
				Execution map[string]string `json:"execution"`
			} `json:"metadata"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, "", "", fmt.Errorf("%s: %w", path, err)
	}
	times := map[string]time.Duration{}
	k := 0
	var first time.Time
	for i, c := range doc.Cells {
		if c.CellType != "code" {
			continue
		}
		src, err := sourceText(c.Source)
		if err != nil {
			return nil, "", "", fmt.Errorf("%s cell %d: %w", path, i, err)
		}
		start, end, err := span(c.Metadata.Execution)
		if err != nil {
			return nil, "", "", fmt.Errorf("%s cell %d: %w (was it executed by scripts/run-notebooks.sh?)", path, i, err)
		}
		if first.IsZero() {
			first = start
		}
		if strings.TrimSpace(strings.SplitN(src, "\n", 2)[0]) != "%%" {
			times[""] += end.Sub(start)
			continue
		}
		if k >= len(cells) {
			return nil, "", "", fmt.Errorf("%s has more experiment cells than its source: run make notebooks again", path)
		}
		times[cells[k].Name] = end.Sub(start)
		k++
	}
	if k != len(cells) {
		return nil, "", "", fmt.Errorf("%s has %d experiment cells, its source %d: run make notebooks again", path, k, len(cells))
	}
	return times, first.UTC().Format("2006-01-02 15:04 UTC"), path, nil
}

func sourceText(raw json.RawMessage) (string, error) {
	var lines []string
	if err := json.Unmarshal(raw, &lines); err == nil {
		return strings.Join(lines, ""), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// span is a cell's execution from nbconvert's timestamps: from the kernel
// going busy (or the input) to it going idle (or the reply).
func span(ex map[string]string) (time.Time, time.Time, error) {
	pick := func(keys ...string) (time.Time, error) {
		for _, k := range keys {
			if v, ok := ex[k]; ok {
				return time.Parse(time.RFC3339Nano, v)
			}
		}
		return time.Time{}, fmt.Errorf("no %s timestamp", strings.Join(keys, " or "))
	}
	start, err := pick("iopub.status.busy", "iopub.execute_input")
	if err != nil {
		return start, start, err
	}
	end, err := pick("iopub.status.idle", "shell.execute_reply")
	if err != nil || end.Before(start) {
		return start, end, fmt.Errorf("bad execution timestamps %v", ex)
	}
	return start, end, nil
}

// kept is a kept executed copy's cell times (memlab lab -ipynb writes them as
// code-cell metadata memlab.elapsed_s, by cell name memlab.cell) and its stamp.
type kept struct {
	path, device, date, command string
	times                       map[string]time.Duration
}

// keptTimes reads the kept executed copy of notebook nb under dir (English
// edition, else Chinese); nil when there is none.
func keptTimes(dir, nb string) (*kept, error) {
	path := executedCopy(dir, nb)
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Metadata struct {
			Memlab struct {
				Executed struct{ Device, Date, Command string } `json:"executed"`
			} `json:"memlab"`
		} `json:"metadata"`
		Cells []struct {
			Metadata struct {
				Memlab struct {
					Cell    string   `json:"cell"`
					Elapsed *float64 `json:"elapsed_s"`
				} `json:"memlab"`
			} `json:"metadata"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	e := doc.Metadata.Memlab.Executed
	if e.Device == "" || e.Date == "" {
		return nil, fmt.Errorf("%s: no metadata memlab.executed {device, date}: not a copy memlab lab -ipynb wrote", path)
	}
	k := &kept{path: path, device: e.Device, date: e.Date, command: e.Command, times: map[string]time.Duration{}}
	for _, c := range doc.Cells {
		if m := c.Metadata.Memlab; m.Cell != "" && m.Elapsed != nil {
			k.times[m.Cell] = time.Duration(*m.Elapsed * float64(time.Second))
		}
	}
	return k, nil
}

// meta is where a table's figures come from, and the edition's section
// headings (English heading → the edition's; nil keeps the English).
type meta struct {
	host, labStamp, labFile, gpuHead, gpuFile string
	sections                                  map[string]string
}

// sectionsZH maps notebook nb's English "## " headings to its Chinese ones:
// both editions under dir (EDITION/NB.ipynb) come from one source, so their
// headings pair up in order.
func sectionsZH(dir, nb string) (map[string]string, error) {
	heads := map[string][]string{}
	for _, ed := range []string{"en", "zh-CN"} {
		path := filepath.Join(dir, ed, nb+".ipynb")
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("the %s headings: %w", ed, err)
		}
		var doc struct {
			Cells []struct {
				Type   string          `json:"cell_type"`
				Source json.RawMessage `json:"source"`
			} `json:"cells"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for _, c := range doc.Cells {
			if c.Type != "markdown" {
				continue
			}
			src, err := sourceText(c.Source)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			for _, l := range strings.Split(src, "\n") {
				if h, ok := strings.CutPrefix(l, "## "); ok {
					heads[ed] = append(heads[ed], strings.TrimSpace(h))
				}
			}
		}
	}
	if len(heads["en"]) != len(heads["zh-CN"]) {
		return nil, fmt.Errorf("%s: %d English \"## \" headings, %d Chinese: they do not pair up", nb, len(heads["en"]), len(heads["zh-CN"]))
	}
	m := map[string]string{}
	for i, h := range heads["en"] {
		m[h] = heads["zh-CN"][i]
	}
	return m, nil
}

// table is the markdown of one notebook's timing table in the guide's language.
func table(ed string, cells []memlab.Cell, lab, sim, gpu map[string]time.Duration, k *kept, m meta) string {
	zh := ed == "zh-CN"
	var b strings.Builder
	if zh {
		fmt.Fprintf(&b, "由 `go run ./scripts/instructor-timings` 于 %s 生成（%s）。JupyterLab 一列：`%s` 中 nbconvert 记录的执行时间戳，精确到秒（scripts/run-notebooks.sh 于 %s 运行；含 GoNB 编译单元格的时间）；“仅代码”两列：本命令在这台机器上运行的 `memlab lab -device sim`，以及 `%s`（%s）。\n\n",
			time.Now().UTC().Format("2006-01-02 15:04 UTC"), m.host, m.labFile, m.labStamp, m.gpuFile, m.gpuHead)
		if k != nil {
			fmt.Fprintf(&b, "最后一列：保存的执行副本 `%s`（%s 于 %s 在 %s 上运行）中各单元格的 `elapsed_s`。\n\n", k.path, k.command, k.date, k.device)
		}
		b.WriteString("| 单元格 | 小节 | JupyterLab，模拟设备 | 仅代码，模拟设备 | 仅代码，H200 |")
	} else {
		fmt.Fprintf(&b, "Generated by `go run ./scripts/instructor-timings` on %s (%s). JupyterLab column: nbconvert's execution timestamps in `%s`, to the second (scripts/run-notebooks.sh, run %s; GoNB's compile of each cell included); code-only columns: `memlab lab -device sim` run by this command on this machine, and `%s` (%s).\n\n",
			time.Now().UTC().Format("2006-01-02 15:04 UTC"), m.host, m.labFile, m.labStamp, m.gpuFile, m.gpuHead)
		if k != nil {
			fmt.Fprintf(&b, "Last column: the cells' `elapsed_s` in the kept executed copy `%s` (%s, run %s on %s).\n\n", k.path, k.command, k.date, k.device)
		}
		b.WriteString("| cell | section | JupyterLab, simulated device | code only, simulated device | code only, H200 |")
	}
	if k != nil {
		if zh {
			b.WriteString(" 保存的执行副本 |\n|---|---|---|---|---|---|\n")
		} else {
			b.WriteString(" kept executed copy |\n|---|---|---|---|---|---|\n")
		}
	} else {
		b.WriteString("\n|---|---|---|---|---|\n")
	}
	var tl, ts, tg, tk time.Duration
	last := func(key string) string {
		if k == nil {
			return ""
		}
		if key == "" {
			return " |"
		}
		return " " + dur(k.times, key, &tk) + " |"
	}
	for _, c := range cells {
		key := c.Notebook + "/" + c.Name
		section := c.Section
		if zh, ok := m.sections[section]; ok {
			section = zh
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |%s\n", c.Name, section, secs(lab, c.Name, &tl), dur(sim, key, &ts), dur(gpu, key, &tg), last(c.Name))
	}
	other, total := "set-up and declaration cells", "**all cells**"
	if zh {
		other, total = "准备与声明单元格", "**全部单元格**"
	}
	fmt.Fprintf(&b, "| %s | | %s | | |%s\n", other, secs(lab, "", &tl), last(""))
	fmt.Fprintf(&b, "| %s | | %s | %s | %s |", total, fmtSecs(tl), fmtDur(ts), fmtDur(tg))
	if k != nil {
		fmt.Fprintf(&b, " %s |", fmtDur(tk))
	}
	b.WriteString("\n")
	return b.String()
}

// dur formats times[key] and adds it to sum; "—" when there is none.
func dur(times map[string]time.Duration, key string, sum *time.Duration) string {
	d, ok := times[key]
	if !ok {
		return "—"
	}
	*sum += d
	return fmtDur(d)
}

// secs is dur for nbconvert's timestamps, which GoNB's replies give to the
// second: whole seconds.
func secs(times map[string]time.Duration, key string, sum *time.Duration) string {
	d, ok := times[key]
	if !ok {
		return "—"
	}
	*sum += d
	return fmtSecs(d)
}

func fmtSecs(d time.Duration) string {
	if d < time.Second {
		return "< 1 s"
	}
	return fmt.Sprintf("%.0f s", d.Seconds())
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return fmt.Sprintf("%.0f s", d.Seconds())
	case d >= time.Second:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d < time.Millisecond:
		return "< 1 ms"
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}

// block matches one timing block: its number, and the text between its markers.
var block = regexp.MustCompile(`(?s)(<!-- timings (\d\d): begin \(go run ./scripts/instructor-timings\) -->\n).*?(<!-- timings (\d\d): end -->)`)

// replaceBlocks puts each notebook's table between its markers in text. Every
// table must have its markers, and every marker a table.
func replaceBlocks(text string, tables map[string]string) (string, error) {
	seen := map[string]bool{}
	var bad []string
	out := block.ReplaceAllStringFunc(text, func(s string) string {
		m := block.FindStringSubmatch(s)
		if m[2] != m[4] {
			bad = append(bad, fmt.Sprintf("the block opened for %s ends with %s's marker", m[2], m[4]))
			return s
		}
		t, ok := tables[m[2]]
		if !ok {
			bad = append(bad, "no notebook "+m[2])
			return s
		}
		seen[m[2]] = true
		return m[1] + t + m[3]
	})
	var missing []string
	for nb := range tables {
		if !seen[nb] {
			missing = append(missing, nb)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		bad = append(bad, "no timing markers for notebooks "+strings.Join(missing, ", "))
	}
	if len(bad) > 0 {
		return "", errors.New(strings.Join(bad, "; "))
	}
	return out, nil
}

// hostLine describes this machine in the edition's language: its OS, CPU
// cores and model, and its load.
func hostLine(ed string) string {
	osName := runtime.GOOS
	if data, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
				osName = strings.Trim(v, `"`)
			}
		}
	}
	cpu := ""
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				cpu = ", " + strings.TrimSpace(strings.TrimLeft(v, " \t:"))
				break
			}
		}
	}
	load := ""
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(data)); len(f) > 0 {
			load = ", load average " + f[0] + " when the tables were written"
			if ed == "zh-CN" {
				load = "，生成表格时的负载均值 " + f[0]
			}
		}
	}
	if ed == "zh-CN" {
		return fmt.Sprintf("%s，%d 核%s%s", osName, runtime.NumCPU(), strings.Replace(cpu, ", ", "，", 1), load)
	}
	return fmt.Sprintf("%s, %d cores%s%s", osName, runtime.NumCPU(), cpu, load)
}

func firstLine(s string) string {
	return strings.TrimSpace(strings.TrimPrefix(strings.SplitN(s, "\n", 2)[0], "#"))
}
