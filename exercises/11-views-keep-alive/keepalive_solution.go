//go:build solution

package keepalive

import (
	"cmp"
	"fmt"
	"slices"
)

// Span is the reference solution; keepalive.go documents the contract.
func Span(v View, elemSize int) (lo, hi int, err error) {
	if elemSize < 1 {
		return 0, 0, fmt.Errorf("views: element size %d, want at least 1", elemSize)
	}
	if len(v.Shape) != len(v.Strides) {
		return 0, 0, fmt.Errorf("views: %d strides for a %d-dimensional shape", len(v.Strides), len(v.Shape))
	}
	if v.Offset < 0 {
		return 0, 0, fmt.Errorf("views: negative storage offset %d", v.Offset)
	}
	last := v.Offset
	empty := false
	for k, n := range v.Shape {
		switch {
		case n < 0:
			return 0, 0, fmt.Errorf("views: dimension %d has negative size %d", k, n)
		case v.Strides[k] < 0:
			return 0, 0, fmt.Errorf("views: dimension %d has negative stride %d", k, v.Strides[k])
		case n == 0:
			empty = true
		default:
			last += (n - 1) * v.Strides[k]
		}
	}
	lo = v.Offset * elemSize
	if empty {
		return lo, lo, nil
	}
	return lo, (last + 1) * elemSize, nil
}

// KeptAlive is the reference solution; keepalive.go documents the contract.
func KeptAlive(storageBytes, elemSize int, views []View) (Report, error) {
	if storageBytes < 0 {
		return Report{}, fmt.Errorf("views: negative storage size %d", storageBytes)
	}
	type span struct{ lo, hi int }
	var spans []span
	for i, v := range views {
		lo, hi, err := Span(v, elemSize)
		if err != nil {
			return Report{}, fmt.Errorf("views: view %d: %w", i, err)
		}
		if hi > storageBytes || lo > storageBytes {
			return Report{}, fmt.Errorf("views: view %d reaches byte %d of a %d-byte storage", i, max(lo, hi), storageBytes)
		}
		if hi > lo {
			spans = append(spans, span{lo, hi})
		}
	}
	if len(views) == 0 {
		return Report{}, nil
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	reach := 0
	for i := 0; i < len(spans); {
		cur := spans[i]
		for i++; i < len(spans) && spans[i].lo <= cur.hi; i++ {
			cur.hi = max(cur.hi, spans[i].hi)
		}
		reach += cur.hi - cur.lo
	}
	return Report{Held: storageBytes, Reachable: reach, Unreachable: storageBytes - reach}, nil
}
