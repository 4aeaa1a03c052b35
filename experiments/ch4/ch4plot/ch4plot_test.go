package ch4plot

import (
	"strings"
	"testing"

	"memlab.dev/memlab/experiments/ch4"
	"memlab.dev/memlab/memplot"
)

// TestKV draws a made-up KV result: the strategies' bytes held beside the
// useful ones, and a strategy's segment map named by its prefix; an unknown
// prefix is an error that names it. (ch4's tests draw real runs.)
func TestKV(t *testing.T) {
	r := ch4.KVResult{
		Useful: []int64{1 << 20, 2 << 20, 3 << 20},
		Rows: []ch4.KVRow{{
			Strategy: "paged", Held: []int64{2 << 20, 2 << 20, 4 << 20}, SegmentsReserved: 20 << 20,
			Segments: []memplot.Segment{{Pool: "large", Blocks: []memplot.Block{{Size: 4 << 20, State: memplot.Allocated}, {Size: 16 << 20, State: memplot.InactiveSplit}}}},
		}},
	}
	if fig, err := KV(r); err != nil || fig == nil {
		t.Fatalf("KV: %v", err)
	}
	fig, err := KVSegments(r, "pag")
	if err != nil || fig == nil {
		t.Fatalf("KVSegments: %v", err)
	}
	if !strings.Contains(fig.Title.Text, "20.00 MiB reserved") {
		t.Errorf("segment map title %q, want the reserved bytes", fig.Title.Text)
	}
	if _, err := KVSegments(r, "torch.cat"); err == nil || !strings.Contains(err.Error(), `"torch.cat"`) {
		t.Errorf("an unknown strategy: error %v, want one naming it", err)
	}
}
