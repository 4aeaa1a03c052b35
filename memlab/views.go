package memlab

import (
	"fmt"
	"strings"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memplot/plotdata"
	"memlab.dev/memlab/tensor"
)

// Views is a list of tensors, each with the Python expression that made it,
// measured against a base tensor: the table and the bars of notebook 02's
// 2.1 (a view's size against the storage it keeps alive).
//
//	vs := memlab.NewViews(x)
//	vs.Add("x.t()", memlab.Must(x.T()))
//	vs.Table().Show()
type Views struct {
	base  *tensor.Tensor
	Exprs []string
	List  []*tensor.Tensor
}

// NewViews starts a list of views measured against base; base itself is its
// first entry, under the name "x".
func NewViews(base *tensor.Tensor) *Views {
	return &Views{base: base, Exprs: []string{"x"}, List: []*tensor.Tensor{base}}
}

// Add appends t under its expression and returns t.
func (v *Views) Add(expr string, t *tensor.Tensor) *tensor.Tensor {
	v.Exprs, v.List = append(v.Exprs, expr), append(v.List, t)
	return t
}

// Table is one row a tensor: shape, strides, offset (in elements: where its
// data starts in the storage), its own and its storage's size, whether it is
// contiguous and whether it shares the base's storage.
func (v *Views) Table() *Table {
	tab := NewTable("tensor", "shape", "stride", "offset", "nbytes", "storage nbytes", "contiguous", "shares x's storage")
	for i, t := range v.List {
		tab.Row(v.Exprs[i], t.Shape(), tensor.Shape(t.Strides()), t.StorageOffset(), FormatBytes(t.Nbytes()),
			FormatBytes(t.StorageNbytes()), t.IsContiguous(), t.SharesStorage(v.base))
	}
	return tab
}

// Bars is each tensor's own size beside the storage it keeps alive, in KiB,
// one bar group per expression: memlab.Show(memplot.Bars("…", "KiB",
// vs.Exprs, vs.Bars()...)) draws them.
func (v *Views) Bars() []plotdata.BarSeries {
	own := plotdata.BarSeries{Name: lang.Text("nbytes (the view)")}
	storage := plotdata.BarSeries{Name: lang.Text("storage nbytes (allocated)")}
	for _, t := range v.List {
		own.Values = append(own.Values, float64(t.Nbytes())/1024)
		storage.Values = append(storage.Values, float64(t.StorageNbytes())/1024)
	}
	return []plotdata.BarSeries{own, storage}
}

// Release releases every tensor of the list (Python's del).
func (v *Views) Release() error { return tensor.ReleaseAll(v.List...) }

// BlockOf finds the segment and block of the allocator's snapshot that hold
// t's data (after t's release, the free block there); ok is false when no
// segment does (t is of another lab).
func (l *Lab) BlockOf(t *tensor.Tensor) (seg allocator.Segment, b allocator.Block, ok bool) {
	p := uint64(t.DataPtr())
	for _, seg := range l.Snapshot().Segments {
		for _, b := range seg.Blocks {
			if p >= b.Address && p < b.Address+uint64(b.Size) {
				return seg, b, true
			}
		}
	}
	return allocator.Segment{}, allocator.Block{}, false
}

// Blocks writes each segment of a snapshot on a line, its blocks in address
// order, "A" for a block in use: "20.00 MiB large segment: 12.00 MiB A |
// 8.00 MiB free".
func Blocks(s allocator.Snapshot) string {
	var lines []string
	for _, seg := range s.Segments {
		var bs []string
		for _, b := range seg.Blocks {
			state := "A"
			if b.State == allocator.StateInactive {
				state = lang.Text("free")
			}
			bs = append(bs, FormatBytes(b.Size)+" "+state)
		}
		lines = append(lines, fmt.Sprintf(lang.Text("%s %s segment: %s"), FormatBytes(seg.TotalSize), lang.Text(seg.Pool), strings.Join(bs, " | ")))
	}
	return strings.Join(lines, "\n")
}

// CountBlocks counts the blocks of a snapshot's segments, and the free ones
// among them.
func CountBlocks(s allocator.Snapshot) (blocks, free int) {
	for _, seg := range s.Segments {
		for _, b := range seg.Blocks {
			blocks++
			if b.State == allocator.StateInactive {
				free++
			}
		}
	}
	return blocks, free
}
