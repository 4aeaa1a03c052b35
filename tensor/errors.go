package tensor

import (
	"errors"
	"fmt"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrReleased is returned by every operation on a tensor after its Release.
	ErrReleased = errors.New("tensor: use of a released tensor")
	// ErrDoubleRelease is returned by Release on a tensor already released.
	ErrDoubleRelease = errors.New("tensor: double release")
	// ErrScopeReleased is returned when a tensor is tracked by a scope that was released.
	ErrScopeReleased = errors.New("tensor: scope already released")
)

// Error is an error PyTorch would raise for the same call. Msg holds PyTorch's
// message word for word, so that it can be compared with what PyTorch prints;
// Op names the memlab operation that failed.
type Error struct {
	Op  string // the operation, such as "view" or "select"
	Msg string // PyTorch's message for the same mistake
	// Format and Args make Msg (fmt.Sprintf(Format, Args...)): an edition
	// of the workbook looks its translation up by Format (package lang).
	Format string
	Args   []any
	// Index is true where PyTorch raises IndexError rather than RuntimeError.
	Index bool
}

// Error returns "tensor: <op>: <PyTorch's message>".
func (e *Error) Error() string { return "tensor: " + e.Op + ": " + e.Msg }

func torchErr(op, format string, args ...any) error {
	return &Error{Op: op, Msg: fmt.Sprintf(format, args...), Format: format, Args: args}
}

func indexErr(op, format string, args ...any) error {
	return &Error{Op: op, Msg: fmt.Sprintf(format, args...), Format: format, Args: args, Index: true}
}
