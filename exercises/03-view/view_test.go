package view

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

// msg picks a failure message in the learner's language (MEMLAB_LANG).
var msg = exercisetest.Msg

func TestA_InferShape(t *testing.T) {
	tests := []struct {
		name  string
		numel int
		shape []int
		want  []int
		why   string
	}{
		{"infer last", 6, []int{2, -1}, []int{2, 3}, msg("6 elements / 2 = 3", "6 个元素 / 2 = 3")},
		{"infer only", 6, []int{-1}, []int{6}, msg("flattening: -1 takes every element", "展平：-1 取走所有元素")},
		{"infer first", 24, []int{-1, 3, 4}, []int{2, 3, 4}, "24 / (3·4) = 2"},
		{"nothing to infer", 6, []int{3, 2}, []int{3, 2}, msg("a fully specified shape with the right count is returned as is", "完全给定且个数正确的形状原样返回")},
		{"empty tensor flattened", 0, []int{-1}, []int{0}, msg("0 elements / 1 = 0: the other sizes multiply to 1, so -1 is not ambiguous", "0 个元素 / 1 = 0：其他各维乘积为 1，所以 -1 没有歧义")},
		{"empty tensor, explicit", 0, []int{3, 0}, []int{3, 0}, msg("3·0 = 0 elements, as required", "3·0 = 0 个元素，符合要求")},
		{"scalar", 1, []int{}, []int{}, msg("an empty shape holds one element", "空形状有一个元素")},
		{"size-1 dims around -1", 8, []int{1, -1, 1}, []int{1, 8, 1}, msg("sizes of 1 do not change the count", "大小为 1 的维不改变个数")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			shape := slices.Clone(tc.shape)
			var got []int
			var err error
			call := fmt.Sprintf("InferShape(%d, %v)", tc.numel, tc.shape)
			if !exercisetest.Call(t, call, func() { got, err = InferShape(tc.numel, shape) }) {
				return
			}
			if err != nil {
				t.Fatalf(msg("%s: unexpected error %v — %s", "%s：意外的错误 %v——%s"), call, err, tc.why)
			}
			if got == nil || !slices.Equal(got, tc.want) {
				t.Errorf(msg("%s: want %v, got %#v — %s", "%s：期望 %v，得到 %#v——%s"), call, tc.want, got, tc.why)
			}
			if !slices.Equal(shape, tc.shape) {
				t.Errorf(msg("%s modified its input to %v — return a new slice", "%s 把它的输入改成了 %v——请返回一个新切片"), call, shape)
			}
		})
	}
}

func TestA_InferShapeErrors(t *testing.T) {
	tests := []struct {
		name  string
		numel int
		shape []int
		why   string
	}{
		{"not a multiple", 6, []int{4, -1}, msg("6 is not a multiple of 4, so no size fits", "6 不是 4 的倍数，所以没有合适的大小")},
		{"two inferred", 6, []int{-1, -1}, msg("only one dimension can be inferred", "只能推断一维")},
		{"other negative", 6, []int{2, -3}, msg("-3 is not a size and not the -1 placeholder", "-3 既不是大小，也不是占位的 -1")},
		{"wrong count", 6, []int{2, 2}, msg("2·2 = 4 elements, but the tensor has 6", "2·2 = 4 个元素，但张量有 6 个")},
		{"ambiguous", 0, []int{0, -1}, msg("with a 0 elsewhere, any size for -1 gives 0 elements: ambiguous", "别处有 0 时，-1 取任何大小都得到 0 个元素：有歧义")},
		{"scalar into two", 1, []int{2}, msg("a scalar has one element, not 2", "标量有一个元素，不是 2 个")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			var err error
			call := fmt.Sprintf("InferShape(%d, %v)", tc.numel, tc.shape)
			if !exercisetest.Call(t, call, func() { got, err = InferShape(tc.numel, tc.shape) }) {
				return
			}
			if err == nil {
				t.Errorf(msg("%s: want an error, got %v — %s", "%s：期望一个错误，得到 %v——%s"), call, got, tc.why)
			}
		})
	}
}

func TestB_ViewStrides(t *testing.T) {
	tests := []struct {
		name                     string
		shape, strides, newShape []int
		want                     []int
		why                      string
	}{
		{"contiguous merge", []int{2, 3, 4}, []int{12, 4, 1}, []int{6, 4}, []int{4, 1}, msg("a contiguous tensor is one chunk: any new shape gets row-major strides", "连续张量是一个组块：任何新形状都得到行优先步长")},
		{"contiguous flatten", []int{2, 3, 4}, []int{12, 4, 1}, []int{24}, []int{1}, msg("one chunk of 24 elements", "一个 24 个元素的组块")},
		{"contiguous split", []int{6}, []int{1}, []int{2, 3}, []int{3, 1}, msg("splitting a dimension is always possible inside a chunk", "在组块内部拆开一维总是可以的")},
		{"sliced columns, split inner", []int{4, 4}, []int{6, 1}, []int{4, 2, 2}, []int{6, 2, 1}, msg("x[:, :4] of a 4×6 tensor has two chunks ([4] stride 6, [4] stride 1); splitting the inner one is fine", "4×6 张量的 x[:, :4] 有两个组块（[4] 步长 6，[4] 步长 1）；拆开内层那个没问题")},
		{"sliced columns, split outer", []int{4, 4}, []int{6, 1}, []int{2, 2, 4}, []int{12, 6, 1}, msg("the outer chunk [4] with stride 6 splits into [2, 2] with strides 12, 6", "外层组块 [4]（步长 6）拆成 [2, 2]，步长 12、6")},
		{"transpose with a new size-1 dim", []int{3, 2}, []int{1, 3}, []int{3, 2, 1}, []int{1, 3, 3}, msg("a new size-1 dimension joins the chunk: its stride is viewNumel·chunkBase = 3", "新的大小为 1 的维加入组块：它的步长是 viewNumel·chunkBase = 3")},
		{"broadcast split inner", []int{3, 4}, []int{0, 1}, []int{3, 2, 2}, []int{0, 2, 1}, msg("an expanded dimension (stride 0) is its own chunk and keeps stride 0", "扩展出来的维（步长 0）自成一个组块，保持步长 0")},
		{"drop size-1 dims", []int{1, 5, 1}, []int{7, 1, 3}, []int{5}, []int{1}, msg("size-1 dimensions never break a chunk and can disappear", "大小为 1 的维从不打断组块，也可以消失")},
		{"scalar to [1, 1]", []int{}, []int{}, []int{1, 1}, []int{1, 1}, msg("a scalar views as all-ones strides", "标量的 view 步长全为 1")},
		{"[1] to scalar", []int{1}, []int{1}, []int{}, []int{}, msg("a one-element tensor views as a scalar: no strides", "单元素张量 view 成标量：没有步长")},
		{"empty, same shape", []int{0, 3}, []int{7, 2}, []int{0, 3}, []int{7, 2}, msg("a tensor with no elements and an unchanged shape keeps its strides", "没有元素、形状不变的张量保持原来的步长")},
		{"empty, new shape", []int{0, 3}, []int{3, 1}, []int{3, 0}, []int{1, 1}, msg("no elements: row-major strides of [3, 0], counting the 0 as 1", "没有元素：[3, 0] 的行优先步长，0 按 1 计")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			var err error
			call := fmt.Sprintf("ViewStrides(%v, %v, %v)", tc.shape, tc.strides, tc.newShape)
			if !exercisetest.Call(t, call, func() { got, err = ViewStrides(tc.shape, tc.strides, tc.newShape) }) {
				return
			}
			if err != nil {
				t.Fatalf(msg("%s: unexpected error %v — %s", "%s：意外的错误 %v——%s"), call, err, tc.why)
			}
			if got == nil || !slices.Equal(got, tc.want) {
				t.Errorf(msg("%s: want %v, got %#v — %s", "%s：期望 %v，得到 %#v——%s"), call, tc.want, got, tc.why)
			}
		})
	}
}

func TestB_ViewStridesErrors(t *testing.T) {
	tests := []struct {
		name                     string
		shape, strides, newShape []int
		notViewable              bool
		why                      string
	}{
		{"transpose flattened", []int{3, 2}, []int{1, 3}, []int{6}, true, msg("a transpose has two chunks; [6] would need both in one", "转置有两个组块；[6] 需要把它们合成一个")},
		{"sliced columns flattened", []int{4, 4}, []int{6, 1}, []int{16}, true, msg("x[:, :4] of a 4×6 tensor has gaps between rows, so [16] spans two chunks", "4×6 张量的 x[:, :4] 行与行之间有空隙，所以 [16] 跨了两个组块")},
		{"chunks regrouped", []int{4, 4}, []int{6, 1}, []int{2, 8}, true, msg("[2, 8] would merge half of the outer chunk with the inner one", "[2, 8] 会把外层组块的一半和内层组块合并")},
		{"broadcast flattened", []int{3, 4}, []int{0, 1}, []int{12}, true, msg("stride 0 repeats a row: no single stride walks all 12 elements", "步长 0 重复一行：没有哪个单一步长能走遍全部 12 个元素")},
		{"wrong element count", []int{2, 3}, []int{3, 1}, []int{4}, false, msg("6 elements cannot become 4 — a count error, not ErrNotViewable", "6 个元素不能变成 4 个——这是个数错误，不是 ErrNotViewable")},
		{"negative new size", []int{2, 3}, []int{3, 1}, []int{-1, 6}, false, msg("ViewStrides takes a resolved shape; -1 must go through InferShape first", "ViewStrides 接收解析过的形状；-1 必须先经过 InferShape")},
		{"mismatched strides", []int{2, 3}, []int{1}, []int{6}, false, msg("shape and strides must have the same length", "形状和步长的长度必须相同")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			var err error
			call := fmt.Sprintf("ViewStrides(%v, %v, %v)", tc.shape, tc.strides, tc.newShape)
			if !exercisetest.Call(t, call, func() { got, err = ViewStrides(tc.shape, tc.strides, tc.newShape) }) {
				return
			}
			if err == nil {
				t.Fatalf(msg("%s: want an error, got strides %v — %s", "%s：期望一个错误，得到步长 %v——%s"), call, got, tc.why)
			}
			if errors.Is(err, ErrNotViewable) != tc.notViewable {
				t.Errorf(msg("%s: errors.Is(err, ErrNotViewable) = %v, want %v (err: %v) — %s", "%s：errors.Is(err, ErrNotViewable) = %v，期望 %v（err：%v）——%s"), call, !tc.notViewable, tc.notViewable, err, tc.why)
			}
		})
	}
}
