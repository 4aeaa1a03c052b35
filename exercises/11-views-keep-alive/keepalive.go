//go:build !solution

package keepalive

// Span returns the byte range [lo, hi) of the storage that v can touch, for elements
// of elemSize bytes: lo = Offset·elemSize and hi = (Offset + Σ (Shape[k]−1)·Strides[k]
// + 1)·elemSize. A view with no elements has lo == hi == Offset·elemSize.
//
// It returns an error if elemSize < 1, Shape and Strides differ in length, or the
// offset, a size or a stride is negative.
func Span(v View, elemSize int) (lo, hi int, err error) {
	panic("not implemented")
}

// KeptAlive reports the bytes that views of a storage of storageBytes bytes hold
// (the whole storage if there is any view, even an empty one), the bytes inside the
// union of their spans, and the difference.
//
// It returns an error naming the view if a view is invalid (see Span) or reaches
// past the end of the storage, and an error if storageBytes is negative.
func KeptAlive(storageBytes, elemSize int, views []View) (Report, error) {
	panic("not implemented")
}
