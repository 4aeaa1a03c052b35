package mypool

import "errors"

// Errors of the pool; return them wrapped or as they are (the tests use errors.Is).
var (
	// ErrExhausted: Get with every buffer handed out.
	ErrExhausted = errors.New("mypool: every buffer is in use")
	// ErrNotFromPool: Put of a tensor the pool did not hand out, or already got back.
	ErrNotFromPool = errors.New("mypool: not a buffer handed out by this pool")
	// ErrInUse: Close while buffers are still handed out.
	ErrInUse = errors.New("mypool: buffers are still in use")
)
