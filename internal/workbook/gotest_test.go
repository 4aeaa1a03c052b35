package workbook

import (
	"strings"
	"testing"
)

// canned is go test -json output for two packages: one with a passing test, a
// failing table test and a skipped case; one that did not build (its external
// test package's error is reported under the "x_test [x.test]" variant).
const canned = `{"Action":"start","Package":"memlab.dev/memlab/exercises/01-a"}
{"Action":"run","Package":"memlab.dev/memlab/exercises/01-a","Test":"TestA_X"}
{"Action":"output","Package":"memlab.dev/memlab/exercises/01-a","Test":"TestA_X","Output":"=== RUN   TestA_X\n"}
{"Action":"output","Package":"memlab.dev/memlab/exercises/01-a","Test":"TestA_X","Output":"--- PASS: TestA_X (0.00s)\n"}
{"Action":"pass","Package":"memlab.dev/memlab/exercises/01-a","Test":"TestA_X"}
{"Action":"run","Package":"memlab.dev/memlab/exercises/01-a","Test":"TestB_Y"}
{"Action":"run","Package":"memlab.dev/memlab/exercises/01-a","Test":"TestB_Y/one_case"}
{"Action":"output","Package":"memlab.dev/memlab/exercises/01-a","Test":"TestB_Y/one_case","Output":"    y_test.go:12: Y(1): want 2, got 3 — because\n"}
{"Action":"fail","Package":"memlab.dev/memlab/exercises/01-a","Test":"TestB_Y/one_case"}
{"Action":"run","Package":"memlab.dev/memlab/exercises/01-a","Test":"TestB_Y/two"}
{"Action":"pass","Package":"memlab.dev/memlab/exercises/01-a","Test":"TestB_Y/two"}
{"Action":"run","Package":"memlab.dev/memlab/exercises/01-a","Test":"TestB_Y/three"}
{"Action":"output","Package":"memlab.dev/memlab/exercises/01-a","Test":"TestB_Y/three","Output":"    y_test.go:20: skipped: Z is not implemented yet\n"}
{"Action":"skip","Package":"memlab.dev/memlab/exercises/01-a","Test":"TestB_Y/three"}
{"Action":"fail","Package":"memlab.dev/memlab/exercises/01-a","Test":"TestB_Y"}
{"Action":"output","Package":"memlab.dev/memlab/exercises/01-a","Output":"FAIL\n"}
{"Action":"fail","Package":"memlab.dev/memlab/exercises/01-a"}
{"ImportPath":"memlab.dev/memlab/exercises/02-b [memlab.dev/memlab/exercises/02-b.test]","Action":"build-output","Output":"# memlab.dev/memlab/exercises/02-b\n"}
{"ImportPath":"memlab.dev/memlab/exercises/02-b_test [memlab.dev/memlab/exercises/02-b.test]","Action":"build-output","Output":"b.go:3:1: syntax error\n"}
{"ImportPath":"memlab.dev/memlab/exercises/02-b [memlab.dev/memlab/exercises/02-b.test]","Action":"build-fail"}
{"Action":"start","Package":"memlab.dev/memlab/exercises/02-b"}
{"Action":"output","Package":"memlab.dev/memlab/exercises/02-b","Output":"FAIL\tmemlab.dev/memlab/exercises/02-b [build failed]\n"}
{"Action":"fail","Package":"memlab.dev/memlab/exercises/02-b","FailedBuild":"x"}
`

func TestParseEvents(t *testing.T) {
	reports, err := parseEvents(strings.NewReader(canned))
	if err != nil {
		t.Fatal(err)
	}
	a, b := reports["01-a"], reports["02-b"]
	if a == nil || b == nil || len(reports) != 2 {
		t.Fatalf("parseEvents: got reports for %v, want 01-a and 02-b", keys(reports))
	}
	if len(a.Tests) != 2 || a.Tests[0].Name != "TestA_X" || a.Tests[1].Name != "TestB_Y" {
		t.Fatalf("01-a tests: %+v", a.Tests)
	}
	if c := a.Tests[0].Cases; len(c) != 1 || c[0].Name != "" || c[0].Status != Pass {
		t.Errorf("a test without subtests should be one unnamed passing case, got %+v", c)
	}
	y := a.Tests[1]
	if y.Status != Fail || len(y.Cases) != 3 {
		t.Fatalf("TestB_Y: status %v with %d cases, want fail with 3", y.Status, len(y.Cases))
	}
	if c := y.Cases[0]; c.Name != "one_case" || c.Status != Fail || len(c.Output) != 1 || c.Output[0] != "Y(1): want 2, got 3 — because" {
		t.Errorf("failed case: %+v — want the message without indentation or file:line", c)
	}
	if y.Cases[2].Status != Skip {
		t.Errorf("skipped case: %+v", y.Cases[2])
	}
	if pass, fail, skip := a.Counts(); pass != 2 || fail != 1 || skip != 1 {
		t.Errorf("Counts() = %d, %d, %d; want 2, 1, 1", pass, fail, skip)
	}
	if a.Passed() || a.NotStarted() || a.BuildFailed || a.Status != Fail {
		t.Errorf("01-a: Passed %v NotStarted %v BuildFailed %v Status %v; want a plain failure", a.Passed(), a.NotStarted(), a.BuildFailed, a.Status)
	}
	if !b.BuildFailed || len(b.BuildOutput) != 1 || b.BuildOutput[0] != "b.go:3:1: syntax error" {
		t.Errorf("02-b: BuildFailed %v, BuildOutput %q; want the compiler message", b.BuildFailed, b.BuildOutput)
	}
	if got := State(b); got != "does not build" {
		t.Errorf("State(02-b) = %q", got)
	}
	if got := State(a); got != "in progress (2/4)" {
		t.Errorf("State(01-a) = %q, want in progress (2/4)", got)
	}
	if got := State(nil); got != "no result" {
		t.Errorf("State(nil) = %q", got)
	}
}

func keys(m map[string]*Report) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	return k
}

func TestParseEventsRejectsGarbage(t *testing.T) {
	if _, err := parseEvents(strings.NewReader("{\"Action\": 3}\n")); err == nil {
		t.Error("parseEvents accepted a malformed event")
	}
	reports, err := parseEvents(strings.NewReader("go: downloading nothing\n\n"))
	if err != nil || len(reports) != 0 {
		t.Errorf("non-JSON lines: got %v, %v; want them ignored", reports, err)
	}
}
