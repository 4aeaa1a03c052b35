package fidelity

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
)

func gz(t *testing.T, s string) *bytes.Reader {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return bytes.NewReader(b.Bytes())
}

func TestDecode(t *testing.T) {
	h, v, err := Decode[map[string]int](gz(t, `{"kind":"header","suite":"x","torch":"2.11.0"}`+"\n"+`{"a":1}`+"\n\n"+`{"a":2}`+"\n"), "f")
	if err != nil || h.Torch != "2.11.0" || len(v) != 2 || v[1]["a"] != 2 {
		t.Fatalf("got %+v %v %v", h, v, err)
	}
	for _, bad := range []string{``, `{"a":1}`, `{"kind":"header"}`, `{"kind":"header","torch":"2"}` + "\n{"} {
		if _, _, err := Decode[map[string]int](gz(t, bad), "f"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if _, _, err := Decode[int](strings.NewReader("not gzip"), "f"); err == nil {
		t.Error("not gzip: no error")
	}
	if _, _, err := Read[int]("/nonexistent/x.jsonl.gz"); err == nil || !strings.Contains(err.Error(), "fidelity.sh") {
		t.Errorf("missing file: %v", err)
	}
}

// fakeTB records what Check reports.
type fakeTB struct {
	testing.TB
	errs []string
}

func (f *fakeTB) Helper()                   {}
func (f *fakeTB) Log(args ...any)           {}
func (f *fakeTB) Errorf(s string, a ...any) { f.errs = append(f.errs, s) }

func TestTally(t *testing.T) {
	ta := Tally{Suite: "s", Known: map[string]string{"k1": "why", "k2": "why", "gone": "why"}}
	ta.Case("a", "")
	ta.Case("b", "differs")
	ta.Case("k1", "differs") // listed, still differs: fine
	ta.Case("k2", "")        // listed, agrees now: reported
	var tb fakeTB
	ta.Check(&tb, "2.11")
	if c, a := ta.Cases(); c != 4 || a != 1 {
		t.Errorf("cases %d agree %d, want 4 and 1", c, a)
	}
	if len(tb.errs) != 4 { // b, k2, gone, and BENCHMARKS.md does not quote the summary
		t.Errorf("%d reports, want 4: %q", len(tb.errs), tb.errs)
	}
	var empty Tally
	tb = fakeTB{}
	empty.Check(&tb, "2.11")
	if len(tb.errs) != 2 || !strings.Contains(strings.Join(tb.errs, " "), "no cases") { // and the quote
		t.Errorf("an empty suite must fail: %q", tb.errs)
	}
}
