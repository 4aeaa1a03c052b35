package keepalive

import (
	"fmt"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

// msg picks a failure message in the learner's language (MEMLAB_LANG).
var msg = exercisetest.Msg

func TestA_Span(t *testing.T) {
	tests := []struct {
		name           string
		v              View
		elemSize       int
		wantLo, wantHi int
		why            string
	}{
		{"first ten floats", View{0, []int{10}, []int{1}}, 4, 0, 40, msg("x[:10] of float32: elements 0..9, bytes [0, 40)", "float32 的 x[:10]：元素 0..9，字节 [0, 40)")},
		{"last ten floats", View{990, []int{10}, []int{1}}, 4, 3960, 4000, msg("x[990:] starts at element 990 = byte 3960", "x[990:] 从元素 990 = 字节 3960 开始")},
		{"column of a matrix", View{0, []int{10}, []int{100}}, 4, 0, 3604, msg("x.view(10, 100)[:, 0]: the last element is at 9·100 = 900, so bytes [0, 3604)", "x.view(10, 100)[:, 0]：最后一个元素在 9·100 = 900，所以字节 [0, 3604)")},
		{"transposed", View{0, []int{100, 10}, []int{1, 100}}, 4, 0, 4000, msg("a transpose touches the same bytes as its base", "转置碰到的字节和它的基张量一样")},
		{"broadcast", View{7, []int{5, 3}, []int{0, 1}}, 4, 28, 40, msg("stride 0 repeats elements 7..9: bytes [28, 40)", "步长 0 重复元素 7..9：字节 [28, 40)")},
		{"empty view", View{5, []int{0}, []int{1}}, 4, 20, 20, msg("x[5:5] has no elements: an empty span at its offset", "x[5:5] 没有元素：在它的偏移处的一个空范围")},
		{"scalar view", View{3, []int{}, []int{}}, 8, 24, 32, msg("x[3] of a float64 tensor is one element at byte 24", "float64 张量的 x[3] 是字节 24 处的一个元素")},
		{"half precision", View{2, []int{2, 3}, []int{6, 1}}, 2, 4, 22, msg("float16: last element 2 + 6 + 2 = 10, so bytes [4, 22)", "float16：最后一个元素 2 + 6 + 2 = 10，所以字节 [4, 22)")},
		{"size-1 dimension with big stride", View{0, []int{1, 4}, []int{1000, 1}}, 4, 0, 16, msg("a size-1 dimension adds (1−1)·stride = 0", "大小为 1 的维增加 (1−1)·stride = 0")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var lo, hi int
			var err error
			call := fmt.Sprintf("Span(%+v, %d)", tc.v, tc.elemSize)
			if !exercisetest.Call(t, call, func() { lo, hi, err = Span(tc.v, tc.elemSize) }) {
				return
			}
			if err != nil {
				t.Fatalf(msg("%s: unexpected error %v", "%s：意外的错误 %v"), call, err)
			}
			if lo != tc.wantLo || hi != tc.wantHi {
				t.Errorf(msg("%s: want [%d, %d), got [%d, %d) — %s", "%s：期望 [%d, %d)，得到 [%d, %d)——%s"), call, tc.wantLo, tc.wantHi, lo, hi, tc.why)
			}
		})
	}
}

func TestA_SpanErrors(t *testing.T) {
	tests := []struct {
		name     string
		v        View
		elemSize int
		why      string
	}{
		{"negative stride", View{10, []int{5}, []int{-1}}, 4, msg("PyTorch has no negative strides (x.flip copies)", "PyTorch 没有负步长（x.flip 会拷贝）")},
		{"negative offset", View{-1, []int{5}, []int{1}}, 4, msg("a storage offset cannot be negative", "存储偏移不能为负")},
		{"negative size", View{0, []int{-5}, []int{1}}, 4, msg("a size cannot be negative", "大小不能为负")},
		{"mismatched strides", View{0, []int{5, 2}, []int{1}}, 4, msg("one stride per dimension", "每一维一个步长")},
		{"zero element size", View{0, []int{5}, []int{1}}, 0, msg("every dtype has at least 1 byte", "每种数据类型至少 1 字节")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			call := fmt.Sprintf("Span(%+v, %d)", tc.v, tc.elemSize)
			if !exercisetest.Call(t, call, func() { _, _, err = Span(tc.v, tc.elemSize) }) {
				return
			}
			if err == nil {
				t.Errorf(msg("%s: want an error — %s", "%s：期望一个错误——%s"), call, tc.why)
			}
		})
	}
}

func TestB_KeptAlive(t *testing.T) {
	head := View{0, []int{10}, []int{1}}
	tests := []struct {
		name  string
		bytes int
		elem  int
		views []View
		want  Report
		why   string
	}{
		{"small view of a big tensor", 4000, 4, []View{head}, Report{4000, 40, 3960}, msg("y = x[:10]; del x — 4000 bytes stay allocated for 40 reachable ones", "y = x[:10]; del x——为了 40 个能读到的字节，4000 字节一直处于已分配")},
		{"overlapping views", 4000, 4, []View{head, {5, []int{15}, []int{1}}}, Report{4000, 80, 3920}, msg("x[:10] and x[5:20] overlap; the union is elements 0..19 = 80 bytes", "x[:10] 和 x[5:20] 重叠；并集是元素 0..19 = 80 字节")},
		{"disjoint views", 4000, 4, []View{head, {100, []int{10}, []int{1}}}, Report{4000, 80, 3920}, msg("two separate 40-byte spans", "两段分开的 40 字节范围")},
		{"touching views", 4000, 4, []View{head, {10, []int{10}, []int{1}}}, Report{4000, 80, 3920}, msg("x[:10] and x[10:20] touch; count each byte once", "x[:10] 和 x[10:20] 首尾相接；每个字节只算一次")},
		{"whole tensor", 4000, 4, []View{{0, []int{1000}, []int{1}}, head}, Report{4000, 4000, 0}, msg("a view of everything reaches everything", "覆盖全部的视图能读到全部")},
		{"only an empty view", 4000, 4, []View{{5, []int{0}, []int{1}}}, Report{4000, 0, 4000}, msg("even x[5:5] holds a reference to the storage: all 4000 bytes stay allocated", "连 x[5:5] 也持有存储的引用：4000 字节全部保持已分配")},
		{"no views", 4000, 4, nil, Report{0, 0, 0}, msg("when no tensor uses the storage it is freed", "没有张量用这个存储时，它就被释放")},
		{"unsorted", 4000, 4, []View{{900, []int{100}, []int{1}}, head, {950, []int{10}, []int{1}}}, Report{4000, 440, 3560}, msg("the spans [3600, 4000), [0, 40) and [3800, 3840) in any order: 400 + 40 bytes", "范围 [3600, 4000)、[0, 40) 和 [3800, 3840) 顺序任意：400 + 40 字节")},
		{"column keeps most of it", 4000, 4, []View{{0, []int{10}, []int{100}}}, Report{4000, 3604, 396}, msg("the span of a strided column covers everything between its first and last element", "一列带步长的元素，其范围覆盖第一个到最后一个元素之间的一切")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got Report
			var err error
			call := fmt.Sprintf("KeptAlive(%d, %d, %+v)", tc.bytes, tc.elem, tc.views)
			if !exercisetest.Call(t, call, func() { got, err = KeptAlive(tc.bytes, tc.elem, tc.views) }) {
				return
			}
			if err != nil {
				t.Fatalf(msg("%s: unexpected error %v", "%s：意外的错误 %v"), call, err)
			}
			if got != tc.want {
				t.Errorf(msg("%s: want %+v, got %+v — %s", "%s：期望 %+v，得到 %+v——%s"), call, tc.want, got, tc.why)
			}
		})
	}
}

func TestB_KeptAliveErrors(t *testing.T) {
	tests := []struct {
		name  string
		bytes int
		views []View
		why   string
	}{
		{"past the end", 4000, []View{{995, []int{10}, []int{1}}}, msg("elements 995..1004 do not fit in 1000 elements", "元素 995..1004 放不进 1000 个元素")},
		{"second view invalid", 4000, []View{{0, []int{1}, []int{1}}, {0, []int{2}, []int{-1}}}, msg("view 1 has a negative stride", "视图 1 有负步长")},
		{"negative storage", -4, nil, msg("a storage cannot have a negative size", "存储的大小不能为负")},
		{"empty view past the end", 40, []View{{20, []int{0}, []int{1}}}, msg("offset 20 (byte 80) is past a 40-byte storage even with no elements", "偏移 20（字节 80）超出了 40 字节的存储，即使没有元素")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got Report
			var err error
			call := fmt.Sprintf("KeptAlive(%d, 4, %+v)", tc.bytes, tc.views)
			if !exercisetest.Call(t, call, func() { got, err = KeptAlive(tc.bytes, 4, tc.views) }) {
				return
			}
			if err == nil {
				t.Errorf(msg("%s: want an error, got %+v — %s", "%s：期望一个错误，得到 %+v——%s"), call, got, tc.why)
			}
		})
	}
}
