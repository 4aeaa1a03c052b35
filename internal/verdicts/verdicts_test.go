package verdicts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memlab"
)

func TestParseJoinsWrappedLinesInBothEditions(t *testing.T) {
	en := memlab.VerdictLine(lang.English, "views take no new memory", memlab.Holds, "0 bytes for five views")
	out := "Measured: something\n" +
		"Chapter: a long claim about memory that a notebook wraps | measured: 1.00 GiB\n" +
		"  of 2.00 GiB → partly holds\n" +
		en + "\n" +
		"教材：视图不占新的数据区 ｜ 实测：0 bytes → 不成立\n" +
		"Chapter: not a verdict line\n"
	got := Parse("c", out)
	want := []struct {
		claim string
		v     memlab.Verdict
	}{
		{"a long claim about memory that a notebook wraps", memlab.PartlyHolds},
		{"views take no new memory", memlab.Holds},
		{"视图不占新的数据区", memlab.DoesNotHold},
	}
	if len(got) != len(want) {
		t.Fatalf("Parse found %d verdicts, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Claim != w.claim || got[i].Verdict != w.v || got[i].Cell != "c" {
			t.Errorf("verdict %d = %+v, want %q %v", i, got[i], w.claim, w.v)
		}
	}
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Helper()             {}
func (r *recorder) Logf(string, ...any) {}
func (r *recorder) Errorf(format string, a ...any) {
	r.mu.Lock()
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
	r.mu.Unlock()
}
func (r *recorder) Fatal(a ...any) { r.Errorf("%s", fmt.Sprint(a...)); runtime.Goexit() }

// failures runs f with a recorder and returns what it reported.
func failures(f func(tb testing.TB)) string {
	r := &recorder{}
	done := make(chan struct{})
	go func() { defer close(done); f(r) }()
	<-done
	return strings.Join(r.errs, "\n")
}

// writeNotebooks writes a pristine notebook of code cells (sources) with one
// markdown cell (prose) and its executed copy, whose cell i was recorded from
// recordedFrom[i] and printed outputs[i].
func writeNotebooks(t *testing.T, prose string, sources, recordedFrom, outputs []string) (pristine, kept string) {
	t.Helper()
	dir := t.TempDir()
	cells := []map[string]any{{"cell_type": "markdown", "metadata": map[string]any{}, "source": prose}}
	var keptCells []map[string]any
	for i, src := range sources {
		cells = append(cells, map[string]any{"cell_type": "code", "metadata": map[string]any{}, "source": src, "outputs": []any{}, "execution_count": nil})
		sum := sha256.Sum256([]byte(recordedFrom[i]))
		keptCells = append(keptCells, map[string]any{"cell_type": "code", "source": recordedFrom[i], "execution_count": 1,
			"metadata": map[string]any{"memlab": map[string]any{"cell": fmt.Sprintf("c%d", i), "source_sha256": hex.EncodeToString(sum[:])}},
			"outputs":  []any{map[string]any{"output_type": "stream", "name": "stdout", "text": []string{outputs[i]}}}})
	}
	write := func(name string, cells []map[string]any) string {
		b, err := json.Marshal(map[string]any{"cells": cells, "metadata": map[string]any{}, "nbformat": 4, "nbformat_minor": 5})
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return write("p.ipynb", cells), write("k.ipynb", keptCells)
}

func TestAgree(t *testing.T) {
	holds := "Chapter: A | measured: x → holds\n"
	fails := "Chapter: A | measured: y → does not hold\n"
	b := "Chapter: B | measured: z → holds\n"
	for name, c := range map[string]struct {
		prose        string
		recordedFrom []string
		gpu          []string
		allowed      map[string]string
		min          int
		want         string // a failure to expect, "" for none
	}{
		"agree":           {"", []string{"s0", "s1"}, []string{holds, b}, nil, 2, ""},
		"differ":          {"", []string{"s0", "s1"}, []string{fails, b}, nil, 2, `"A" holds on the simulator but does not hold in the executed copy`},
		"allowed":         {"On a GPU\nA does not hold.", []string{"s0", "s1"}, []string{fails, b}, map[string]string{"A": "On a GPU A does not hold."}, 2, ""},
		"allowed unsaid":  {"", []string{"s0", "s1"}, []string{fails, b}, map[string]string{"A": "On a GPU A does not hold."}, 2, "the notebook does not say"},
		"fresh, no lines": {"", []string{"s0", "s1"}, []string{"", ""}, nil, 2, "holds 0 verdicts, want at least 2"},
		"stale, no lines": {"", []string{"old", "s1"}, []string{"", b}, nil, 2, ""},
		"stale, differs":  {"", []string{"old", "s1"}, []string{fails, b}, nil, 2, "does not hold in the executed copy"},
		"too few on sim":  {"", []string{"s0", "s1"}, []string{holds, b}, nil, 3, "prints 2 verdicts on the simulator, want at least 3"},
	} {
		t.Run(name, func(t *testing.T) {
			p, k := writeNotebooks(t, c.prose, []string{"s0", "s1"}, c.recordedFrom, c.gpu)
			sim := map[string]string{"c0": holds, "c1": b}
			got := failures(func(tb testing.TB) { AgreeFiles(tb, p, k, sim, c.allowed, c.min) })
			if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("failures:\n%s\nwant %q", got, c.want)
			}
		})
	}
	// A claim judged by two cells is one claim too many.
	p, k := writeNotebooks(t, "", []string{"s0", "s1"}, []string{"s0", "s1"}, []string{holds, holds})
	if got := failures(func(tb testing.TB) {
		AgreeFiles(tb, p, k, map[string]string{"c0": holds, "c1": holds}, nil, 1)
	}); !strings.Contains(got, "judged twice") {
		t.Errorf("a claim judged twice: %q", got)
	}
}
