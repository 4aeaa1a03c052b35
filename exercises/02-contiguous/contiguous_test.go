package contiguous

import (
	"fmt"
	"slices"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

// msg picks a failure message in the learner's language (MEMLAB_LANG).
var msg = exercisetest.Msg

func TestA_IsContiguous(t *testing.T) {
	tests := []struct {
		name           string
		shape, strides []int
		want           bool
		why            string
	}{
		{"row-major matrix", []int{2, 3}, []int{3, 1}, true, msg("strides are exactly the row-major ones", "步长正好是行优先的")},
		{"transposed matrix", []int{3, 2}, []int{1, 3}, false, msg("the last dimension must have stride 1 (a transpose has stride 3 there)", "最后一维的步长必须是 1（转置后那里是 3）")},
		{"size-1 dimension with odd stride", []int{2, 1, 3}, []int{3, 99, 1}, true, msg("you never step along a size-1 dimension, so its stride does not matter", "永远不会沿大小为 1 的维走，所以它的步长无所谓")},
		{"empty tensor with odd strides", []int{0, 5}, []int{1, 7}, true, msg("a tensor with no elements is always contiguous", "没有元素的张量总是连续的")},
		{"scalar", []int{}, []int{}, true, msg("a scalar is a single element: contiguous", "标量只有一个元素：连续")},
		{"every other column", []int{4, 3}, []int{6, 2}, false, msg("x[:, ::2] skips elements, so stride 2 is not 1", "x[:, ::2] 跳过了元素，所以步长是 2 而不是 1")},
		{"row slice", []int{2, 5}, []int{10, 1}, false, msg("x[:, :5] of a 2×10 tensor: rows are 10 apart but only 5 long — there are gaps", "2×10 张量的 x[:, :5]：行与行相距 10，但每行只有 5 个——中间有空隙")},
		{"rows of a larger tensor", []int{3, 10}, []int{10, 1}, true, msg("x[2:5] of a 10-column tensor is contiguous (its storage offset does not matter)", "10 列张量的 x[2:5] 是连续的（它的存储偏移无关紧要）")},
		{"expanded (broadcast)", []int{4, 3}, []int{0, 1}, false, msg("stride 0 repeats a row; the elements are not laid out one after another", "步长 0 重复一行；元素不是一个接一个排列的")},
		{"all ones", []int{1, 1, 1}, []int{5, 9, 2}, true, msg("every dimension has size 1, so no stride is checked", "每一维大小都是 1，所以不检查任何步长")},
		{"trailing size-1 dimension", []int{3, 4, 1}, []int{4, 1, 1}, true, msg("the size-1 dimension is skipped; then 4 and 1 are row-major for [3, 4]", "跳过大小为 1 的维；剩下的 4 和 1 对 [3, 4] 是行优先的")},
		{"vector with stride 2", []int{5}, []int{2}, false, msg("x[::2] of a longer vector", "更长向量的 x[::2]")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got bool
			var err error
			call := fmt.Sprintf("IsContiguous(%v, %v)", tc.shape, tc.strides)
			if !exercisetest.Call(t, call, func() { got, err = IsContiguous(tc.shape, tc.strides) }) {
				return
			}
			if err != nil {
				t.Fatalf(msg("%s: unexpected error %v", "%s：意外的错误 %v"), call, err)
			}
			if got != tc.want {
				t.Errorf(msg("%s: want %v, got %v — %s", "%s：期望 %v，得到 %v——%s"), call, tc.want, got, tc.why)
			}
		})
	}
}

func TestA_IsContiguousErrors(t *testing.T) {
	tests := []struct {
		name           string
		shape, strides []int
		why            string
	}{
		{"fewer strides", []int{2, 3}, []int{1}, msg("shape and strides must have the same length", "形状和步长的长度必须相同")},
		{"more strides", []int{2}, []int{2, 1}, msg("shape and strides must have the same length", "形状和步长的长度必须相同")},
		{"negative size", []int{2, -3}, []int{3, 1}, msg("a negative size is invalid", "负的大小不合法")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			call := fmt.Sprintf("IsContiguous(%v, %v)", tc.shape, tc.strides)
			if !exercisetest.Call(t, call, func() { _, err = IsContiguous(tc.shape, tc.strides) }) {
				return
			}
			if err == nil {
				t.Errorf(msg("%s: want an error — %s", "%s：期望一个错误——%s"), call, tc.why)
			}
		})
	}
}

func TestB_Transpose(t *testing.T) {
	tests := []struct {
		name                 string
		shape, strides       []int
		dim0, dim1           int
		wantShape, wantStrid []int
		why                  string
	}{
		{"matrix", []int{2, 3}, []int{3, 1}, 0, 1, []int{3, 2}, []int{1, 3}, msg("sizes and strides swap; no memory moves", "大小和步长互换；内存不动")},
		{"same dimension", []int{2, 3}, []int{3, 1}, 1, 1, []int{2, 3}, []int{3, 1}, msg("transposing a dimension with itself changes nothing", "一维和它自己转置，什么都不变")},
		{"negative dimensions", []int{2, 3, 4}, []int{12, 4, 1}, -1, -2, []int{2, 4, 3}, []int{12, 1, 4}, msg("-1 is the last dimension and -2 the one before", "-1 是最后一维，-2 是它前面那一维")},
		{"outer and inner", []int{2, 3, 4}, []int{12, 4, 1}, 0, 2, []int{4, 3, 2}, []int{1, 4, 12}, msg("dimensions 0 and 2 trade places, dimension 1 stays", "第 0 维和第 2 维互换位置，第 1 维不动")},
		{"of a non-contiguous tensor", []int{3, 2}, []int{1, 3}, 0, 1, []int{2, 3}, []int{3, 1}, msg("transposing a transpose gives back the original layout", "转置的转置回到原来的布局")},
		{"scalar", []int{}, []int{}, 0, -1, []int{}, []int{}, msg("PyTorch lets a scalar transpose dimensions 0 and -1; nothing changes", "PyTorch 允许标量转置第 0 维和第 -1 维；什么都不变")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			shape, strides := slices.Clone(tc.shape), slices.Clone(tc.strides)
			var gotShape, gotStrides []int
			var err error
			call := fmt.Sprintf("Transpose(%v, %v, %d, %d)", tc.shape, tc.strides, tc.dim0, tc.dim1)
			if !exercisetest.Call(t, call, func() { gotShape, gotStrides, err = Transpose(shape, strides, tc.dim0, tc.dim1) }) {
				return
			}
			if err != nil {
				t.Fatalf(msg("%s: unexpected error %v", "%s：意外的错误 %v"), call, err)
			}
			if !slices.Equal(gotShape, tc.wantShape) || !slices.Equal(gotStrides, tc.wantStrid) {
				t.Errorf(msg("%s: want shape %v strides %v, got shape %v strides %v — %s", "%s：期望形状 %v 步长 %v，得到形状 %v 步长 %v——%s"), call, tc.wantShape, tc.wantStrid, gotShape, gotStrides, tc.why)
			}
			if !slices.Equal(shape, tc.shape) || !slices.Equal(strides, tc.strides) {
				t.Errorf(msg("%s modified its input: shape is now %v, strides %v — copy the slices before swapping", "%s 修改了它的输入：形状现在是 %v，步长 %v——交换之前先拷贝切片"), call, shape, strides)
			}
		})
	}
}

func TestB_TransposeErrors(t *testing.T) {
	tests := []struct {
		name           string
		shape, strides []int
		dim0, dim1     int
		why            string
	}{
		{"dimension too large", []int{2, 3}, []int{3, 1}, 0, 2, msg("a 2-D tensor has dimensions 0 and 1 (or -2 and -1)", "二维张量的维度是 0 和 1（或 -2 和 -1）")},
		{"dimension too negative", []int{2, 3}, []int{3, 1}, -3, 0, msg("-3 is before the first dimension of a 2-D tensor", "-3 在二维张量的第一维之前")},
		{"mismatched strides", []int{2, 3}, []int{1}, 0, 1, msg("shape and strides must have the same length", "形状和步长的长度必须相同")},
		{"scalar dimension 1", []int{}, []int{}, 0, 1, msg("a scalar only accepts dimensions 0 and -1", "标量只接受第 0 维和第 -1 维")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			call := fmt.Sprintf("Transpose(%v, %v, %d, %d)", tc.shape, tc.strides, tc.dim0, tc.dim1)
			if !exercisetest.Call(t, call, func() { _, _, err = Transpose(tc.shape, tc.strides, tc.dim0, tc.dim1) }) {
				return
			}
			if err == nil {
				t.Errorf(msg("%s: want an error — %s", "%s：期望一个错误——%s"), call, tc.why)
			}
		})
	}
}
