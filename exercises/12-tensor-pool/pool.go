// Package tensorpool is exercise 12 of the memlab course: a pool of buffers of one
// shape that hands them out again instead of allocating, with a hard cap on how
// many exist. See README.md.
//
// 中文：练习 12：固定形状的张量池——同一形状的缓冲区，后进先出地复用，有容量上限，
// 并发安全。题目见 README.zh-CN.md。
package tensorpool

import "errors"

// ErrExhausted is returned (wrapped) by Get when every buffer the pool may create
// is in use.
var ErrExhausted = errors.New("tensorpool: exhausted: every buffer is in use")

// Stats counts what a Pool has done.
type Stats struct {
	Created int // buffers created (at most the capacity)
	Reused  int // Gets served by an idle buffer
	InUse   int // buffers handed out and not yet returned
	Idle    int // buffers in the pool, ready for Get
}
