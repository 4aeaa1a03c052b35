// Command nbcheck checks executed Jupyter notebooks for the failures nbconvert
// lets through: error outputs, panics and errors printed to stderr, code cells
// that never ran, and plots missing where the notebook promises them.
//
// Usage:
//
//	go run ./scripts/nbcheck build/notebooks/*.ipynb
//
// A code cell tagged "plot" (cell metadata "tags") must produce an image. A
// cell tagged "exercise-check" runs an exercise's tests, which fail while the
// exercise is a stub: it must print the check's verdict line (PASS, TODO or
// FAIL) and may exit with a failure status. A
// notebook whose metadata has "memlab": {"plot_per_section": true} must show at
// least one image in every numbered section (a markdown line "## 2.1 …"
// opens one; other "## " headings, such as "## Exercises", end it). nbcheck prints one line per problem and exits 1 if any.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout))
}

func run(files []string, w io.Writer) int {
	if len(files) == 0 {
		fmt.Fprintln(w, "usage: nbcheck NOTEBOOK.ipynb...")
		return 2
	}
	bad := 0
	for _, f := range files {
		problems, err := checkFile(f)
		if err != nil {
			fmt.Fprintf(w, "%s: %v\n", f, err)
			bad++
			continue
		}
		for _, p := range problems {
			fmt.Fprintf(w, "%s: %s\n", f, p)
		}
		if len(problems) > 0 {
			bad++
		} else {
			fmt.Fprintf(w, "%s: ok\n", f)
		}
	}
	if bad > 0 {
		return 1
	}
	return 0
}

// notebook is the part of the nbformat 4 schema nbcheck reads.
type notebook struct {
	Metadata struct {
		Memlab struct {
			PlotPerSection bool `json:"plot_per_section"`
		} `json:"memlab"`
	} `json:"metadata"`
	Cells []cell `json:"cells"`
}

type cell struct {
	CellType       string                  `json:"cell_type"`
	Source         multiline               `json:"source"`
	ExecutionCount *int                    `json:"execution_count"`
	Metadata       struct{ Tags []string } `json:"metadata"`
	Outputs        []output                `json:"outputs"`
}

type output struct {
	OutputType string               `json:"output_type"`
	Name       string               `json:"name"`
	Text       multiline            `json:"text"`
	Data       map[string]multiline `json:"data"`
	EName      string               `json:"ename"`
	EValue     string               `json:"evalue"`
}

// multiline is nbformat's string-or-list-of-strings.
type multiline string

func (m *multiline) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*m = multiline(s)
		return nil
	}
	var l []string
	if err := json.Unmarshal(b, &l); err != nil {
		return fmt.Errorf("want a string or a list of strings: %w", err)
	}
	*m = multiline(strings.Join(l, ""))
	return nil
}

func checkFile(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var nb notebook
	if err := json.Unmarshal(data, &nb); err != nil {
		return nil, fmt.Errorf("not a notebook: %w", err)
	}
	return check(&nb), nil
}

var (
	numbered = regexp.MustCompile(`^\d+(\.\d+)*\s`)
	// stderr carries notes too (such as the device fallback note); only
	// panics and lines that report an error count as failures.
	stderrBad = regexp.MustCompile(`(?im)panic|^\s*(error|fatal)\b|\berror:|\bfailed\b|exit status [1-9]`)
	// verdict is the closing line of `memlab exercises check`.
	verdict   = regexp.MustCompile(`(?m)^(PASS|TODO|FAIL|REJECTED)  `)
	stdoutBad = regexp.MustCompile(`panic:|goroutine \d+ \[|cannot use|undefined: |\[ERROR\]`)
)

// check returns the problems of an executed notebook.
func check(nb *notebook) []string {
	var problems []string
	section, sectionImages := "(before the first section)", 0
	endSection := func() {
		if nb.Metadata.Memlab.PlotPerSection && numbered.MatchString(section) && sectionImages == 0 {
			problems = append(problems, fmt.Sprintf("section %q shows no plot", section))
		}
	}
	for i, c := range nb.Cells {
		where := fmt.Sprintf("cell %d", i)
		switch c.CellType {
		case "markdown":
			for _, line := range strings.Split(string(c.Source), "\n") {
				if strings.HasPrefix(line, "## ") {
					endSection()
					section, sectionImages = strings.TrimPrefix(line, "## "), 0
					break
				}
			}
			continue
		case "code":
		default:
			continue
		}
		if strings.TrimSpace(string(c.Source)) == "" {
			continue
		}
		if c.ExecutionCount == nil {
			problems = append(problems, where+": never executed")
		}
		if hasTag(c, "exercise-check") {
			var all strings.Builder
			for _, o := range c.Outputs {
				all.WriteString(string(o.Text))
			}
			if !verdict.MatchString(all.String()) {
				problems = append(problems, fmt.Sprintf("%s: tagged \"exercise-check\" but shows no verdict (PASS, TODO or FAIL): %s", where, firstLine(all.String())))
			}
			continue
		}
		images := 0
		for _, o := range c.Outputs {
			switch o.OutputType {
			case "error":
				problems = append(problems, fmt.Sprintf("%s: error output %s: %s", where, o.EName, firstLine(o.EValue)))
			case "stream":
				if o.Name == "stderr" && stderrBad.MatchString(string(o.Text)) {
					problems = append(problems, fmt.Sprintf("%s: stderr: %s", where, firstLine(string(o.Text))))
				} else if stdoutBad.MatchString(string(o.Text)) {
					problems = append(problems, fmt.Sprintf("%s: output looks like a failure: %s", where, firstMatchLine(string(o.Text))))
				}
			case "display_data", "execute_result", "update_display_data":
				for mime, v := range o.Data {
					switch {
					case strings.HasPrefix(mime, "image/"):
						images++
					case mime == "text/html" && (strings.Contains(string(v), "<img") || strings.Contains(string(v), "<svg")):
						images++
					}
					if (mime == "text/plain" || mime == "text/html") && stdoutBad.MatchString(string(v)) {
						problems = append(problems, fmt.Sprintf("%s: output looks like a failure: %s", where, firstMatchLine(string(v))))
					}
				}
			}
		}
		if images == 0 && hasTag(c, "plot") {
			problems = append(problems, where+`: tagged "plot" but shows no image`)
		}
		sectionImages += images
	}
	endSection()
	return problems
}

func hasTag(c cell, tag string) bool {
	for _, t := range c.Metadata.Tags {
		if t == tag {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func firstMatchLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if stdoutBad.MatchString(l) {
			return strings.TrimSpace(l)
		}
	}
	return firstLine(s)
}
