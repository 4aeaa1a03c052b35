package strides

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

// msg picks a failure message in the learner's language (MEMLAB_LANG).
var msg = exercisetest.Msg

func TestA_RowMajorStrides(t *testing.T) {
	tests := []struct {
		name  string
		shape []int
		want  []int
		why   string
	}{
		{"3-D tensor", []int{2, 3, 4}, []int{12, 4, 1}, msg("dimension 0 jumps over 3·4 elements, dimension 1 over 4", "第 0 维跳过 3·4 个元素，第 1 维跳过 4 个")},
		{"vector", []int{5}, []int{1}, msg("the last dimension is always adjacent: stride 1", "最后一维总是相邻的：步长 1")},
		{"scalar", []int{}, []int{}, msg("a scalar has no dimensions, so no strides (an empty slice)", "标量没有维度，所以没有步长（空切片）")},
		{"matrix", []int{3, 7}, []int{7, 1}, msg("a row of a 3×7 matrix is 7 elements long", "3×7 矩阵的一行有 7 个元素")},
		{"leading ones", []int{1, 1, 6}, []int{6, 6, 1}, msg("sizes of 1 still take part in the product (they multiply by 1)", "大小为 1 的维也参与乘积（乘以 1）")},
		{"zero-size middle dimension", []int{2, 0, 3}, []int{3, 3, 1}, msg("a size of 0 counts as 1 in the product, as in PyTorch's torch.empty(2, 0, 3).stride() == (3, 3, 1)", "大小为 0 的维在乘积里按 1 计，和 PyTorch 一样：torch.empty(2, 0, 3).stride() == (3, 3, 1)")},
		{"zero-size last dimension", []int{4, 0}, []int{1, 1}, msg("the 0 counts as 1, so dimension 0 gets stride 1", "这个 0 按 1 计，所以第 0 维的步长是 1")},
		{"4-D image batch", []int{8, 3, 32, 32}, []int{3072, 1024, 32, 1}, msg("NCHW: one image is 3·32·32 = 3072 elements", "NCHW：一张图像是 3·32·32 = 3072 个元素")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			var err error
			if !exercisetest.Call(t, fmt.Sprintf("RowMajorStrides(%v)", tc.shape), func() { got, err = RowMajorStrides(tc.shape) }) {
				return
			}
			if err != nil {
				t.Fatalf(msg("RowMajorStrides(%v): unexpected error %v", "RowMajorStrides(%v)：意外的错误 %v"), tc.shape, err)
			}
			if got == nil || !slices.Equal(got, tc.want) {
				t.Errorf(msg("RowMajorStrides(%v): want %v, got %#v — %s", "RowMajorStrides(%v)：期望 %v，得到 %#v——%s"), tc.shape, tc.want, got, tc.why)
			}
		})
	}
}

func TestA_RowMajorStridesErrors(t *testing.T) {
	tests := []struct {
		name  string
		shape []int
		why   string
	}{
		{"negative size", []int{2, -1, 3}, msg("a dimension cannot have a negative size", "维度的大小不能为负")},
		{"negative first size", []int{-4}, msg("a dimension cannot have a negative size", "维度的大小不能为负")},
		{"too many elements", []int{math.MaxInt / 2, 3}, msg("the element count overflows int; check before multiplying", "元素个数超出 int 范围；乘之前先检查")},
		{"overflow spread over dims", []int{1 << 32, 1 << 32, 2}, msg("2^65 elements do not fit in an int", "2^65 个元素放不进 int")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			var err error
			if !exercisetest.Call(t, fmt.Sprintf("RowMajorStrides(%v)", tc.shape), func() { got, err = RowMajorStrides(tc.shape) }) {
				return
			}
			if err == nil {
				t.Errorf(msg("RowMajorStrides(%v): want an error, got strides %v — %s", "RowMajorStrides(%v)：期望一个错误，得到步长 %v——%s"), tc.shape, got, tc.why)
			}
		})
	}
}

func TestB_Offset(t *testing.T) {
	tests := []struct {
		name                  string
		shape, strides, index []int
		want                  int
		why                   string
	}{
		{"row-major matrix", []int{2, 3}, []int{3, 1}, []int{1, 2}, 5, msg("row 1 starts at 3, plus column 2", "第 1 行从 3 开始，再加第 2 列")},
		{"transposed matrix", []int{2, 3}, []int{1, 2}, []int{1, 2}, 5, msg("1·1 + 2·2 = 5: strides need not be row-major", "1·1 + 2·2 = 5：步长不必是行优先的")},
		{"first element", []int{4, 5}, []int{5, 1}, []int{0, 0}, 0, msg("index 0 in every dimension is the start", "每一维下标都为 0 就是起点")},
		{"3-D", []int{2, 3, 4}, []int{12, 4, 1}, []int{1, 2, 3}, 23, "12 + 2·4 + 3 = 23"},
		{"broadcast dimension", []int{3, 4}, []int{0, 1}, []int{2, 3}, 3, msg("stride 0 repeats the same row: 2·0 + 3·1 = 3", "步长 0 重复同一行：2·0 + 3·1 = 3")},
		{"scalar", []int{}, []int{}, []int{}, 0, msg("a scalar's only element is at offset 0", "标量唯一的元素在偏移 0 处")},
		{"column of a wider tensor", []int{4, 1}, []int{10, 1}, []int{3, 0}, 30, msg("strides can skip elements: 3·10 = 30", "步长可以跳过元素：3·10 = 30")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got int
			var err error
			call := fmt.Sprintf("Offset(%v, %v, %v)", tc.shape, tc.strides, tc.index)
			if !exercisetest.Call(t, call, func() { got, err = Offset(tc.shape, tc.strides, tc.index) }) {
				return
			}
			if err != nil {
				t.Fatalf(msg("%s: unexpected error %v", "%s：意外的错误 %v"), call, err)
			}
			if got != tc.want {
				t.Errorf(msg("%s: want %d, got %d — %s", "%s：期望 %d，得到 %d——%s"), call, tc.want, got, tc.why)
			}
		})
	}
}

func TestB_OffsetErrors(t *testing.T) {
	tests := []struct {
		name                  string
		shape, strides, index []int
		why                   string
	}{
		{"index past the end", []int{2, 3}, []int{3, 1}, []int{1, 3}, msg("dimension 1 has size 3, so index 3 is out of range", "第 1 维大小为 3，所以下标 3 越界")},
		{"negative index", []int{2, 3}, []int{3, 1}, []int{-1, 0}, msg("negative indices are not allowed here", "这里不允许负下标")},
		{"index too short", []int{2, 3}, []int{3, 1}, []int{1}, msg("the index needs one entry per dimension", "下标必须每一维各有一项")},
		{"index too long", []int{2, 3}, []int{3, 1}, []int{1, 1, 1}, msg("the index needs one entry per dimension", "下标必须每一维各有一项")},
		{"strides too short", []int{2, 3}, []int{1}, []int{0, 0}, msg("strides need one entry per dimension", "步长必须每一维各有一项")},
		{"zero-size dimension", []int{2, 0}, []int{1, 1}, []int{0, 0}, msg("a dimension of size 0 has no valid index at all", "大小为 0 的维根本没有合法的下标")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got int
			var err error
			call := fmt.Sprintf("Offset(%v, %v, %v)", tc.shape, tc.strides, tc.index)
			if !exercisetest.Call(t, call, func() { got, err = Offset(tc.shape, tc.strides, tc.index) }) {
				return
			}
			if err == nil {
				t.Errorf(msg("%s: want an error, got offset %d — %s", "%s：期望一个错误，得到偏移 %d——%s"), call, got, tc.why)
			}
		})
	}
}
