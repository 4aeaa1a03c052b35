package tensor

import "fmt"

// DType is the element type of a tensor.
type DType uint8

// The element types memlab supports, with PyTorch's names.
const (
	Float32 DType = iota
	Float16
	BFloat16
	Int32
	Int64
	Uint8
	Bool
)

var dtypeInfo = [...]struct {
	name string
	size int
}{
	Float32:  {"float32", 4},
	Float16:  {"float16", 2},
	BFloat16: {"bfloat16", 2},
	Int32:    {"int32", 4},
	Int64:    {"int64", 8},
	Uint8:    {"uint8", 1},
	Bool:     {"bool", 1},
}

// Size returns the number of bytes one element of d occupies (PyTorch's element_size).
func (d DType) Size() int {
	if int(d) >= len(dtypeInfo) {
		return 0
	}
	return dtypeInfo[d].size
}

// String returns PyTorch's name for d, such as "float32".
func (d DType) String() string {
	if int(d) >= len(dtypeInfo) {
		return fmt.Sprintf("DType(%d)", uint8(d))
	}
	return dtypeInfo[d].name
}

// Valid reports whether d is one of the defined element types.
func (d DType) Valid() bool { return int(d) < len(dtypeInfo) }

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d == Float32 || d == Float16 || d == BFloat16 }
