//go:build !cuda || !cgo

package cuda

import "errors"

// newCUDriver is unavailable: this binary was built without -tags cuda and cgo.
func newCUDriver() (driver, error) {
	return nil, errors.New(`device/cuda: the "cu" binding (gorgonia.org/cu) needs a binary built with -tags cuda and cgo`)
}

// CUBindingAvailable reports whether this binary has the gorgonia.org/cu binding.
const CUBindingAvailable = false

// DefaultBinding is the binding Open uses: "cu" in a -tags cuda build,
// "purego" otherwise.
const DefaultBinding = "purego"
