package ch2

import (
	"os"
	"strings"
	"testing"

	"memlab.dev/memlab/device"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/tensor"
)

func TestMain(m *testing.M) {
	os.Setenv(device.EnvVar, "sim")
	os.Exit(m.Run())
}

func TestChapterSequenceMatchesPyTorch(t *testing.T) {
	steps, at768, err := ChapterSequence("")
	if err != nil {
		t.Fatal(err)
	}
	torch, err := PyTorch("a__default.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	if _, differ, err := Compare(steps, torch); err != nil || differ != 0 || len(at768) != 1 {
		t.Errorf("differ %d, %d segments at 768 MiB, %v", differ, len(at768), err)
	}
	if _, _, err := Compare(steps, torch[1:]); err == nil {
		t.Error("comparing sequences of different lengths succeeded")
	}
	if _, err := PyTorch("no-such-trace.jsonl.gz"); err == nil {
		t.Error("reading a missing trace succeeded")
	}
}

// The remedies as the notebook states them: only the fragmented run fails;
// pre-allocation runs all six batches with its activations as views.
func TestRemedies(t *testing.T) {
	outs, err := TryAll(Remedies...)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if failed := o.Err != nil; failed != (o.Name == Fragmented.Name) {
			t.Errorf("%s: request error %v", o.Name, o.Err)
		}
	}
	pre := outs[1]
	if pre.Pinned != 0 || pre.Peak >= outs[0].Peak {
		t.Errorf("pre-allocation: pinned %d, peak %d against %d", pre.Pinned, pre.Peak, outs[0].Peak)
	}
	if s := Table(outs).String(); !strings.Contains(s, "out of memory") {
		t.Errorf("table:\n%s", s)
	}
}

func TestWorkloadBadInput(t *testing.T) {
	l := memlab.MustOpen(memlab.Budget(Device), memlab.NotCurrent())
	defer l.Close()
	if _, err := (Workload{Batches: 0, Long: 1, Short: 1, Kept: 1}).Run(l, nil); err == nil {
		t.Error("a workload of no batches ran")
	}
	buf := memlab.Must(tensor.Empty(l, tensor.Uint8, 1<<20))
	w := Fragmenting
	w.Buffer = buf
	if _, err := w.Run(l, nil); err == nil || !strings.Contains(err.Error(), "cannot hold") {
		t.Errorf("a buffer too small: %v", err)
	}
	memlab.Check(buf.Release())
	// Running out of memory midway releases what the workload held.
	w = Workload{Batches: 20, Long: 512 << 20, Short: 496 << 20, Kept: 256 << 20}
	if _, err := w.Run(l, nil); !memlab.IsOutOfMemory(err) {
		t.Errorf("20 batches in 4 GiB: %v", err)
	}
	if l.MemoryAllocated() != 0 {
		t.Errorf("%d bytes left allocated after the failed run", l.MemoryAllocated())
	}
}

func TestTenants(t *testing.T) {
	a := memlab.MustOpen(memlab.Budget(8<<30), memlab.NotCurrent())
	b := memlab.MustOpen(memlab.SharedWith(a), memlab.NotCurrent())
	defer a.Close()
	defer b.Close()
	memlab.Check(CapHalf(a, b))
	held, err := Greedy(a)
	if err != nil || len(held) != 4 {
		t.Fatalf("greedy A under half of 8 GiB took %d GiB: %v", len(held), err)
	}
	memlab.Check(tensor.ReleaseAll(held...))
}
