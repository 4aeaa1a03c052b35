package tensor

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Printing follows torch/_tensor_str.py with its default print options:
// precision 4, line width 80, summarised with "..." above 1000 elements,
// keeping 3 items at each edge.
const (
	printPrecision = 4
	printLinewidth = 80
	printThreshold = 1000
	printEdgeitems = 3
)

// String formats t as PyTorch's repr does, for example
//
//	tensor([[1., 2.],
//	        [3., 4.]], device='cuda:0')
//
// Large tensors are summarised with "...". It reads only the elements it
// prints and allocates no device memory. A released tensor prints as
// "tensor(<released>, …)"; a read error is printed in place of the values.
func (t *Tensor) String() string {
	if t == nil {
		return "tensor(<nil>)"
	}
	if t.Released() {
		return fmt.Sprintf("tensor(<released>, size=%s, dtype=%s)", shapeTuple(t.layout.Shape), torchDTypeName(t.dtype))
	}
	var suffixes []string
	suffixes = append(suffixes, "device='"+t.storage.dev.String()+"'")
	body := "[]"
	if t.Numel() == 0 {
		if t.Dim() != 1 {
			suffixes = append(suffixes, "size="+shapeTuple(t.layout.Shape))
		}
		if t.dtype != Float32 {
			suffixes = append(suffixes, "dtype="+torchDTypeName(t.dtype))
		}
	} else {
		if t.dtype != Float32 && t.dtype != Int64 && t.dtype != Bool {
			suffixes = append(suffixes, "dtype="+torchDTypeName(t.dtype))
		}
		p, err := newPrinter(t)
		if err != nil {
			body = "<" + err.Error() + ">"
		} else {
			body = p.tensorStr(t.layout, 7)
		}
	}
	switch {
	case t.grad.fn != "":
		suffixes = append(suffixes, "grad_fn=<"+t.grad.fn+">")
	case t.grad.tape != nil:
		suffixes = append(suffixes, "requires_grad=True")
	}
	return addSuffixes("tensor("+body, suffixes, 7)
}

func torchDTypeName(d DType) string { return "torch." + d.String() }

// shapeTuple formats a shape as Python prints a tuple: (2, 3), (5,), ().
func shapeTuple(s Shape) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = strconv.Itoa(d)
	}
	if len(s) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func addSuffixes(s string, suffixes []string, indent int) string {
	var b strings.Builder
	b.WriteString(s)
	last := len(s) - strings.LastIndexByte(s, '\n') + 1 // as Python's rfind, -1 without a newline
	for _, suf := range suffixes {
		if last+len(suf)+2 > printLinewidth {
			b.WriteString(",\n" + strings.Repeat(" ", indent) + suf)
			last = indent + len(suf)
		} else {
			b.WriteString(", " + suf)
			last += len(suf) + 2
		}
	}
	b.WriteString(")")
	return b.String()
}

// printer holds what formatting needs: the values that will be printed (read
// from the device on demand) and the column width PyTorch's _Formatter picks.
type printer struct {
	t         *Tensor
	summarize bool
	vals      map[int]float64 // storage offset -> value
	floating  bool
	intMode   bool
	sciMode   bool
	width     int
}

// shownOffsets lists, in order, the indices of one dimension that are printed.
func (p *printer) shown(size int) []int {
	if p.summarize && size > 2*printEdgeitems {
		idx := make([]int, 0, 2*printEdgeitems)
		for i := range printEdgeitems {
			idx = append(idx, i)
		}
		for i := size - printEdgeitems; i < size; i++ {
			idx = append(idx, i)
		}
		return idx
	}
	idx := make([]int, size)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// collect calls f with the storage offset of every printed element.
func (p *printer) collect(l Layout, off int, d int, f func(off int)) {
	if d == l.Dim() {
		f(off)
		return
	}
	for _, i := range p.shown(l.Shape[d]) {
		p.collect(l, off+i*l.Strides[d], d+1, f)
	}
}

func newPrinter(t *Tensor) (*printer, error) {
	p := &printer{t: t, summarize: t.Numel() > printThreshold, vals: map[int]float64{}, floating: t.dtype.IsFloat(), intMode: true, width: 1}
	var offs []int
	p.collect(t.layout, t.layout.Offset, 0, func(off int) { offs = append(offs, off) })
	es := t.ElementSize()
	// One read of the span the elements cover, unless they are a few elements
	// scattered over a large storage (a column of a big matrix): then one read
	// per element.
	lo, hi := t.layout.Span()
	if (hi-lo)*es <= max(1<<20, 4*len(offs)*es) {
		buf, lo, err := t.readSpan("print")
		if err != nil {
			return nil, err
		}
		for _, off := range offs {
			p.vals[off] = getElem(t.dtype, buf[(off-lo)*es:])
		}
	} else {
		b := make([]byte, es)
		for _, off := range offs {
			if _, ok := p.vals[off]; ok {
				continue
			}
			if err := t.storage.dev.CopyToHost(b, t.storage.ptr+Ptr(off*es)); err != nil {
				return nil, fmt.Errorf("tensor: print: %w", err)
			}
			p.vals[off] = getElem(t.dtype, b)
		}
	}
	p.measure(offs)
	return p, nil
}

// measure is _Formatter.__init__: it picks integer, fixed or scientific
// notation and the column width from the printed values.
func (p *printer) measure(offs []int) {
	if !p.floating {
		for _, off := range offs {
			p.width = max(p.width, len(p.format(p.vals[off])))
		}
		return
	}
	var finite []float64
	for _, off := range offs {
		v := p.vals[off]
		if v != 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
			finite = append(finite, v)
		}
	}
	if len(finite) == 0 {
		return
	}
	lo, hi := math.Inf(1), 0.0
	for _, v := range finite {
		lo, hi = min(lo, math.Abs(v)), max(hi, math.Abs(v))
		if v != math.Ceil(v) {
			p.intMode = false
		}
	}
	// The ratio is computed in the tensor's own precision (double here).
	if p.intMode {
		if hi/lo > 1000 || hi > 1e8 {
			p.sciMode = true
		}
	} else if hi/lo > 1000 || hi > 1e8 || lo < 1e-4 {
		p.sciMode = true
	}
	for _, v := range finite {
		s := p.formatRaw(v)
		n := len(s)
		if p.intMode && !p.sciMode {
			n = len(strconv.FormatFloat(v, 'f', 0, 64)) + 1
		}
		p.width = max(p.width, n)
	}
}

// formatRaw formats v without padding, as Python's format would.
func (p *printer) formatRaw(v float64) string {
	if !p.floating {
		if p.t.dtype == Bool {
			if v != 0 {
				return "True"
			}
			return "False"
		}
		return strconv.FormatInt(int64(v), 10)
	}
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	switch {
	case p.sciMode:
		return strconv.FormatFloat(v, 'e', printPrecision, 64)
	case p.intMode:
		return strconv.FormatFloat(v, 'f', 0, 64) + "."
	}
	return strconv.FormatFloat(v, 'f', printPrecision, 64)
}

// format pads formatRaw to the column width.
func (p *printer) format(v float64) string {
	s := p.formatRaw(v)
	if n := p.width - len(s); n > 0 {
		s = strings.Repeat(" ", n) + s
	}
	return s
}

// tensorStr is _tensor_str_with_formatter.
func (p *printer) tensorStr(l Layout, indent int) string {
	switch l.Dim() {
	case 0:
		return p.format(p.vals[l.Offset])
	case 1:
		return p.vectorStr(l, indent)
	}
	var slices []string
	size := l.Shape[0]
	for _, i := range p.shown(size) {
		if p.summarize && size > 2*printEdgeitems && i == size-printEdgeitems {
			slices = append(slices, "...")
		}
		sub, _ := l.Select(0, i)
		slices = append(slices, p.tensorStr(sub, indent+1))
	}
	sep := "," + strings.Repeat("\n", l.Dim()-1) + strings.Repeat(" ", indent+1)
	return "[" + strings.Join(slices, sep) + "]"
}

// vectorStr is _vector_str: elements wrapped to the line width.
func (p *printer) vectorStr(l Layout, indent int) string {
	perLine := max(1, (printLinewidth-indent)/(p.width+2))
	var data []string
	size := l.Shape[0]
	for _, i := range p.shown(size) {
		if p.summarize && size > 2*printEdgeitems && i == size-printEdgeitems {
			data = append(data, " ...")
		}
		data = append(data, p.format(p.vals[l.Offset+i*l.Strides[0]]))
	}
	var lines []string
	for i := 0; i < len(data); i += perLine {
		lines = append(lines, strings.Join(data[i:min(i+perLine, len(data))], ", "))
	}
	return "[" + strings.Join(lines, ",\n"+strings.Repeat(" ", indent+1)) + "]"
}
