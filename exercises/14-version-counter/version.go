// Package version is exercise 14 of the memlab course: how PyTorch detects that a
// tensor saved for the backward pass was changed in place, with a version counter
// shared by every view of a storage. See README.md.
package version

import "errors"

// ErrModifiedInPlace is returned (wrapped) by Saved.Unpack when the saved tensor's
// version counter moved after it was saved.
var ErrModifiedInPlace = errors.New("one of the variables needed for gradient computation has been modified by an inplace operation")
