// Package keepalive is exercise 11 of the memlab course: views share their base
// tensor's storage, so one small view can keep a large allocation alive. It measures
// which bytes a set of views can reach and which they only hold. See README.md.
//
// 中文：练习 11：视图让什么一直活着——视图能碰到的存储字节范围，以及一组存活视图让多少字节保持已分配、
// 其中多少谁也读不到。题目见 README.zh-CN.md。
package keepalive

// View is a strided view of a storage: element (i0, i1, …) is at element position
// Offset + Σ ik·Strides[k]. Offset and Strides are in elements, as in PyTorch.
type View struct {
	Offset  int
	Shape   []int
	Strides []int
}

// Report is what a set of live views of one storage costs.
type Report struct {
	Held        int // bytes kept allocated: the storage size if any view lives
	Reachable   int // bytes inside the union of the views' spans
	Unreachable int // Held − Reachable
}
