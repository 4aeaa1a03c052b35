package ch2plot

import (
	"errors"
	"strings"
	"testing"

	"memlab.dev/memlab/experiments/ch2"
	"memlab.dev/memlab/memlab"
)

// TestTape: the two runs' allocated memory, the training run's labels under
// the x axis; no steps is an error.
func TestTape(t *testing.T) {
	l := memlab.MustOpen(memlab.NotCurrent())
	defer l.Close()
	a, b := l.Steps(), l.Steps()
	if _, err := Tape("t", a, b); err == nil {
		t.Error("Tape of no steps drew a figure")
	}
	a.Add("x")
	b.Add("x")
	b.Add("y")
	fig, err := Tape("t", a, b)
	if err != nil || fig == nil {
		t.Fatalf("Tape: %v", err)
	}
}

// TestTenantsAndRemedies: the bar charts of 2.4's tenants and 2.3's
// remedies, from results made up here; the remedies' figure marks the request.
func TestTenantsAndRemedies(t *testing.T) {
	fig, err := Tenants("two tenants", []ch2.Tenants{{Case: "greedy", A: 3 << 30, B: 1 << 30, Outside: 1 << 29}})
	if err != nil || fig == nil {
		t.Fatalf("Tenants: %v", err)
	}
	outs := []ch2.Outcome{
		{Remedy: ch2.Remedy{Name: "fragmented"}, Err: errors.New("out of memory"), Releasable: 0, Pinned: 1 << 30, Room: 1 << 28},
		{Remedy: ch2.Remedy{Name: "pre-allocation"}, Releasable: 2 << 30},
	}
	fig, err = Remedies(outs)
	if err != nil || fig == nil {
		t.Fatalf("Remedies: %v", err)
	}
	svg, err := fig.Encode("svg")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(svg), "(OOM)") {
		t.Error("the failed remedy is not marked (OOM)")
	}
}
