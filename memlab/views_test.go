package memlab

import (
	"memlab.dev/memlab/memplot"
	"strings"
	"testing"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/tensor"
)

func TestViewsBlockOfBlocks(t *testing.T) {
	l := openSim(t)
	x := Must(tensor.Empty(l, tensor.Float32, 1024, 1024))
	vs := NewViews(x)
	vs.Add("x[512]", Must(x.Select(0, 512)))
	tab := vs.Table().String()
	if !strings.Contains(tab, "x[512]") || !strings.Contains(tab, "524288") {
		t.Errorf("table:\n%s", tab)
	}
	if _, err := memplot.Bars("v", "KiB", vs.Exprs, vs.Bars()...); err != nil {
		t.Error(err)
	}
	seg, b, ok := l.BlockOf(vs.List[1])
	if !ok || b.Size != 4<<20 || seg.TotalSize != 20<<20 {
		t.Errorf("BlockOf = %+v %+v %v", seg, b, ok)
	}
	if got, want := Blocks(l.Snapshot()), "20.00 MiB large segment: 4.00 MiB A | 16.00 MiB free"; got != want {
		t.Errorf("Blocks = %q, want %q", got, want)
	}
	if n, free := CountBlocks(l.Snapshot()); n != 2 || free != 1 {
		t.Errorf("CountBlocks = %d, %d; want 2 blocks, 1 free", n, free)
	}
	if err := vs.Release(); err != nil {
		t.Fatal(err)
	}
	if _, b, ok := l.BlockOf(x); !ok || b.State != allocator.StateInactive {
		t.Errorf("after the release BlockOf = %+v, %v: want the free block", b, ok)
	}
}
