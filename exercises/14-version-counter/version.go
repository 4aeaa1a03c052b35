// Package version is exercise 14 of the memlab course: how PyTorch detects that a
// tensor saved for the backward pass was changed in place, with a version counter
// shared by every view of a storage. See README.md.
//
// 中文：练习 14：用版本计数器捕捉原地修改——谁共享计数器（视图、detach）、
// 谁不共享（.data、clone），以及保存的张量被改动后 Unpack 报错。
// 题目见 README.zh-CN.md。
package version

import "errors"

// ErrModifiedInPlace is returned (wrapped) by Saved.Unpack when the saved tensor's
// version counter moved after it was saved.
var ErrModifiedInPlace = errors.New("one of the variables needed for gradient computation has been modified by an inplace operation")
