package fragmentation

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

// msg picks a failure message in the learner's language (MEMLAB_LANG).
var msg = exercisetest.Msg

const mib = 1 << 20

func a(n uint64) Block { return Block{n * mib, true} }
func f(n uint64) Block { return Block{n * mib, false} }

func show(segments [][]Block) string {
	var sb strings.Builder
	for i, seg := range segments {
		if i > 0 {
			sb.WriteString(" ")
		}
		sb.WriteString("[")
		for j, b := range seg {
			if j > 0 {
				sb.WriteString(" | ")
			}
			state := "free"
			if b.Allocated {
				state = "A"
			}
			if b.Size%mib == 0 {
				fmt.Fprintf(&sb, "%d MiB %s", b.Size/mib, state)
			} else {
				fmt.Fprintf(&sb, "%d B %s", b.Size, state)
			}
		}
		sb.WriteString("]")
	}
	return sb.String()
}

func TestA_Summarize(t *testing.T) {
	tests := []struct {
		name     string
		segments [][]Block
		want     Summary
		why      string
	}{
		{"nothing", nil, Summary{}, msg("no segments: nothing free, fragmentation 0", "没有段：没有空闲，碎片化为 0")},
		{"one free piece", [][]Block{{a(5), f(15)}}, Summary{15 * mib, 15 * mib, 0}, msg("all free memory is one block: fragmentation 0", "所有空闲显存是一个块：碎片化为 0")},
		{"pieces in two segments", [][]Block{{a(5), f(5), a(5), f(5)}, {f(20)}}, Summary{30 * mib, 20 * mib, 1.0 / 3}, msg("30 MiB free, but the largest request that fits without cudaMalloc is 20 MiB", "空闲 30 MiB，但不调用 cudaMalloc 能满足的最大请求是 20 MiB")},
		{"crumbs", [][]Block{{a(1), f(1), a(1), f(1), a(1), f(1)}}, Summary{3 * mib, mib, 2.0 / 3}, msg("three 1 MiB holes: a 2 MiB request needs a new segment although 3 MiB are free", "三个 1 MiB 的洞：虽然空闲 3 MiB，2 MiB 的请求仍需要一个新段")},
		{"all allocated", [][]Block{{a(20)}, {a(2)}}, Summary{}, msg("no free memory at all: fragmentation is defined as 0", "完全没有空闲显存：碎片化定义为 0")},
		{"small and large pools", [][]Block{{{1024, true}, {2*mib - 1024, false}}, {f(20)}}, Summary{22*mib - 1024, 20 * mib, 1 - float64(20*mib)/float64(22*mib-1024)}, msg("free blocks of both pools count", "两个池的空闲块都算")},
		{"equal holes", [][]Block{{f(10)}, {f(10)}}, Summary{20 * mib, 10 * mib, 0.5}, msg("two separate 10 MiB segments are two blocks, never one: they cannot merge across segments", "两个分开的 10 MiB 段是两个块，永远不是一个：块不能跨段合并")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got Summary
			call := fmt.Sprintf("Summarize(%s)", show(tc.segments))
			if !exercisetest.Call(t, call, func() { got = Summarize(tc.segments) }) {
				return
			}
			if got.TotalFree != tc.want.TotalFree || got.LargestFree != tc.want.LargestFree || math.Abs(got.Fragmentation-tc.want.Fragmentation) > 1e-9 {
				t.Errorf(msg("%s: want total %d, largest %d, fragmentation %.4f; got %d, %d, %.4f — %s", "%s：期望总量 %d、最大 %d、碎片化 %.4f；得到 %d、%d、%.4f——%s"),
					call, tc.want.TotalFree, tc.want.LargestFree, tc.want.Fragmentation, got.TotalFree, got.LargestFree, got.Fragmentation, tc.why)
			}
		})
	}
}

func TestB_Breakdown(t *testing.T) {
	tests := []struct {
		name     string
		segments [][]Block
		want     Split
		why      string
	}{
		{"whole free segment", [][]Block{{f(20)}}, Split{0, 20 * mib, 0, 0}, msg("nothing uses the segment: empty_cache can cudaFree all 20 MiB", "没有谁在用这个段：empty_cache 可以 cudaFree 全部 20 MiB")},
		{"split segment", [][]Block{{a(5), f(15)}}, Split{5 * mib, 0, 15 * mib, 1}, msg("the 15 MiB are stuck until the 5 MiB tensor dies (inactive_split)", "这 15 MiB 被卡住，直到 5 MiB 的张量消亡（非活跃分割块，inactive_split）")},
		{"two holes in one segment", [][]Block{{a(5), f(5), a(5), f(5)}}, Split{10 * mib, 0, 10 * mib, 2}, msg("each free block of a used segment counts once in inactive_split", "用着的段里每个空闲块在 inactive_split 里各算一次")},
		{"mixed", [][]Block{{a(5), f(5), a(5), f(5)}, {f(20)}, {a(2)}}, Split{12 * mib, 20 * mib, 10 * mib, 2}, msg("reserved 42 MiB = 12 allocated + 20 releasable + 10 non-releasable", "已预留 42 MiB = 12 已分配 + 20 可释放 + 10 不可释放")},
		{"nothing", nil, Split{}, msg("no segments, nothing reserved", "没有段，什么都没预留")},
		{"small segment", [][]Block{{{1024, true}, {2*mib - 1024, false}}}, Split{1024, 0, 2*mib - 1024, 1}, msg("torch.empty(1000) pins its whole 2 MiB small segment: 2096128 bytes non-releasable", "torch.empty(1000) 钉住了它整个 2 MiB 的小段：2096128 字节不可释放")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got Split
			call := fmt.Sprintf("Breakdown(%s)", show(tc.segments))
			if !exercisetest.Call(t, call, func() { got = Breakdown(tc.segments) }) {
				return
			}
			if got != tc.want {
				t.Errorf(msg("%s: want %+v, got %+v — %s", "%s：期望 %+v，得到 %+v——%s"), call, tc.want, got, tc.why)
			}
		})
	}
}
