//go:build !solution

package keepalive

// Span returns the byte range [lo, hi) of the storage that v can touch, for elements
// of elemSize bytes: lo = Offset·elemSize and hi = (Offset + Σ (Shape[k]−1)·Strides[k]
// + 1)·elemSize. A view with no elements has lo == hi == Offset·elemSize.
//
// It returns an error if elemSize < 1, Shape and Strides differ in length, or the
// offset, a size or a stride is negative.
//
// 中文：返回视图能碰到的存储字节范围 [lo, hi)：从第一个元素到最后一个元素之后；
// 没有元素的视图 lo == hi == Offset·elemSize。负的偏移、
// 大小或步长，形状与步长长度不同，或 elemSize < 1 时返回错误。
func Span(v View, elemSize int) (lo, hi int, err error) {
	panic("not implemented")
}

// KeptAlive reports the bytes that views of a storage of storageBytes bytes hold
// (the whole storage if there is any view, even an empty one), the bytes inside the
// union of their spans, and the difference.
//
// It returns an error naming the view if a view is invalid (see Span) or reaches
// past the end of the storage, and an error if storageBytes is negative.
//
// 中文：报告一个 storageBytes 字节的存储的一组存活视图的代价：Held（至少有一个视图时为整个存储，
// 否则为 0）、Reachable（各视图范围并集的字节数）、Unreachable = Held − Reachable。
// 某个视图超出存储末尾时返回写明该视图的错误。
func KeptAlive(storageBytes, elemSize int, views []View) (Report, error) {
	panic("not implemented")
}
