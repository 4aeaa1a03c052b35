//go:build solution

package merge

import (
	"fmt"
	"slices"
)

// Free is the reference solution; merge.go documents the contract.
func Free(segment []Block, addr uint64) ([]Block, error) {
	i := slices.IndexFunc(segment, func(b Block) bool { return b.Addr == addr })
	if i < 0 {
		return nil, fmt.Errorf("merge: no block starts at %#x", addr)
	}
	if !segment[i].Allocated {
		return nil, fmt.Errorf("merge: double free: the block at %#x is already free", addr)
	}
	out := slices.Clone(segment)
	out[i].Allocated = false
	if i+1 < len(out) && !out[i+1].Allocated {
		out[i].Size += out[i+1].Size
		out = slices.Delete(out, i+1, i+2)
	}
	if i > 0 && !out[i-1].Allocated {
		out[i-1].Size += out[i].Size
		out = slices.Delete(out, i, i+1)
	}
	return out, nil
}

// Releasable is the reference solution; merge.go documents the contract.
func Releasable(segment []Block) bool {
	return len(segment) == 1 && !segment[0].Allocated
}
