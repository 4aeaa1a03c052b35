package workloads

import (
	"strings"
	"testing"

	"memlab.dev/memlab/snapshot"
)

// The default run of GPT-2 replayed under each recorded setting predicts
// every figure PyTorch measured in that run (single stream: nothing depends
// on GPU timing).
func TestPredictsRecordedRuns(t *testing.T) {
	s, err := Load("gpt2_train__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range Settings {
		r, err := ReadRun("gpt2_train__" + tag)
		if err != nil {
			t.Fatal(err)
		}
		if Tag(r.Conf) != tag {
			t.Errorf("%s: conf %q, whose tag is %q", tag, r.Conf, Tag(r.Conf))
		}
		p, err := Predict(s, r)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range Figures {
			if p.Stats[k] != r.Stats[k] {
				t.Errorf("%s: %s predicted %s, PyTorch measured %s", tag, k, Format(k, p.Stats[k]), Format(k, r.Stats[k]))
			}
		}
		if n := Agree(p, r); n != len(Figures) {
			t.Errorf("%s: Agree = %d, want all %d", tag, n, len(Figures))
		}
		r.Stats["num_ooms"]++
		if n := Agree(p, r); n != len(Figures)-1 {
			t.Errorf("%s: Agree with one figure off = %d, want %d", tag, n, len(Figures)-1)
		}
	}
}

func TestMissingFilesNameThem(t *testing.T) {
	if _, err := Load("no_such__default.pickle"); err == nil || !strings.Contains(err.Error(), "no_such__default.pickle") {
		t.Errorf("Load of a missing file: %v", err)
	}
	if _, err := ReadRun("no_such__default"); err == nil || !strings.Contains(err.Error(), "no_such__default.facts.json") {
		t.Errorf("ReadRun of a missing file: %v", err)
	}
}

func TestFormat(t *testing.T) {
	if got := Format("reserved_bytes.all.peak", 3<<20); got != "3.00 MiB" {
		t.Errorf("bytes: %q", got)
	}
	if got := Format("num_device_alloc", 101); got != "101" {
		t.Errorf("count: %q", got)
	}
}

func TestDeferredFrees(t *testing.T) {
	tr := []snapshot.TraceEntry{
		{Action: snapshot.ActionAlloc, Addr: 1}, {Action: snapshot.ActionAlloc, Addr: 2},
		{Action: snapshot.ActionFreeRequested, Addr: 1}, {Action: snapshot.ActionFreeCompleted, Addr: 1}, // at once
		{Action: snapshot.ActionFreeRequested, Addr: 2}, {Action: snapshot.ActionAlloc, Addr: 3},
		{Action: snapshot.ActionFreeCompleted, Addr: 2}, // later: another stream used it
	}
	if n := DeferredFrees(tr); n != 1 {
		t.Errorf("DeferredFrees = %d, want 1", n)
	}
	s, err := Load("multistream_branches__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	if n := DeferredFrees(s.Traces[0]); n != 12 {
		t.Errorf("multistream_branches: %d deferred frees, want 12", n)
	}
}

// The shipped repeats: eight runs of multistream_branches per setting, whose
// figures PyTorch did not measure the same every time.
func TestRepeats(t *testing.T) {
	runs, err := Repeats("multistream_branches", "max_split_size_mb_128")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 8 {
		t.Fatalf("%d repeated runs, want 8", len(runs))
	}
	if v := Values(runs, "allocated_bytes.all.peak"); len(v) != 1 {
		t.Errorf("the allocated peak varies over the repeats: %v", v)
	}
	v := Values(runs, "inactive_split_bytes.all.peak")
	n := 0
	for _, c := range v {
		n += c
	}
	if len(v) < 2 || n != 8 {
		t.Errorf("inactive split peak over 8 runs: %v", v)
	}
	if _, err := Repeats("no_such_program", "default"); err == nil || !strings.Contains(err.Error(), "no_such_program") {
		t.Errorf("Repeats of a missing program: %v", err)
	}
}
