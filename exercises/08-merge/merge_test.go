package merge

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

// msg picks a failure message in the learner's language (MEMLAB_LANG).
var msg = exercisetest.Msg

const (
	mib  = 1 << 20
	base = 0x7f0000000000
)

func layout(seg []Block) string {
	parts := make([]string, len(seg))
	for i, b := range seg {
		state := "free"
		if b.Allocated {
			state = "A"
		}
		parts[i] = fmt.Sprintf("+%d MiB:%d MiB %s", (b.Addr-base)/mib, b.Size/mib, state)
	}
	return "[" + strings.Join(parts, " | ") + "]"
}

func TestA_Free(t *testing.T) {
	tests := []struct {
		name    string
		segment []Block
		addr    uint64
		want    []Block
		why     string
	}{
		{"merge with next", []Block{{base, 5 * mib, true}, {base + 5*mib, 5 * mib, true}, {base + 10*mib, 10 * mib, false}}, base + 5*mib,
			[]Block{{base, 5 * mib, true}, {base + 5*mib, 15 * mib, false}},
			msg("the freed 5 MiB joins the free 10 MiB after it", "释放的 5 MiB 和后面空闲的 10 MiB 合并")},
		{"no free neighbour", []Block{{base, 5 * mib, true}, {base + 5*mib, 5 * mib, true}, {base + 10*mib, 10 * mib, false}}, base,
			[]Block{{base, 5 * mib, false}, {base + 5*mib, 5 * mib, true}, {base + 10*mib, 10 * mib, false}},
			msg("the next block is allocated, so nothing merges", "下一个块已分配，所以什么都不合并")},
		{"merge both sides", []Block{{base, 5 * mib, false}, {base + 5*mib, 5 * mib, true}, {base + 10*mib, 10 * mib, false}}, base + 5*mib,
			[]Block{{base, 20 * mib, false}},
			msg("free on both sides: the three blocks become the whole 20 MiB segment again", "两边都空闲：三个块重新成为整个 20 MiB 的段")},
		{"merge with previous", []Block{{base, 5 * mib, false}, {base + 5*mib, 5 * mib, true}, {base + 10*mib, 10 * mib, true}}, base + 5*mib,
			[]Block{{base, 10 * mib, false}, {base + 10*mib, 10 * mib, true}},
			msg("the merged block starts at the previous block's (lower) address", "合并后的块从前一个块的（更低的）地址开始")},
		{"whole segment", []Block{{base, 20 * mib, true}}, base,
			[]Block{{base, 20 * mib, false}},
			msg("an unsplit segment simply becomes free", "没有分割过的段直接变成空闲")},
		{"small segment", []Block{{base, 1024, true}, {base + 1024, 2*mib - 1024, false}}, base,
			[]Block{{base, 2 * mib, false}},
			msg("torch.empty(1000) freed: the 2 MiB small segment is whole again", "释放 torch.empty(1000)：2 MiB 的小段又完整了")},
		{"middle of many", []Block{{base, mib, true}, {base + mib, mib, false}, {base + 2*mib, mib, true}, {base + 3*mib, mib, false}, {base + 4*mib, mib, true}}, base + 2*mib,
			[]Block{{base, mib, true}, {base + mib, 3 * mib, false}, {base + 4*mib, mib, true}},
			msg("only the direct neighbours merge; the blocks beyond them stay", "只有直接相邻的块合并；再往外的块保持不变")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seg := slices.Clone(tc.segment)
			var got []Block
			var err error
			call := fmt.Sprintf("Free(%s, +%d MiB)", layout(tc.segment), (tc.addr-base)/mib)
			if !exercisetest.Call(t, call, func() { got, err = Free(seg, tc.addr) }) {
				return
			}
			if err != nil {
				t.Fatalf(msg("%s: unexpected error %v", "%s：意外的错误 %v"), call, err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf(msg("%s:\nwant %s\n got %s\n— %s", "%s：\n期望 %s\n得到 %s\n——%s"), call, layout(tc.want), layout(got), tc.why)
			}
			if !slices.Equal(seg, tc.segment) {
				t.Errorf(msg("%s modified its input to %s — work on a copy", "%s 把它的输入改成了 %s——请在拷贝上操作"), call, layout(seg))
			}
		})
	}
}

func TestB_BadFrees(t *testing.T) {
	seg := []Block{{base, 5 * mib, true}, {base + 5*mib, 15 * mib, false}}
	tests := []struct {
		name string
		addr uint64
		why  string
	}{
		{"double free", base + 5*mib, msg("the block at +5 MiB is already free", "+5 MiB 处的块已经空闲")},
		{"inside a block", base + mib, msg("+1 MiB is inside the first block, not the start of one", "+1 MiB 落在第一个块的中间，不是某个块的起点")},
		{"outside the segment", base + 40*mib, msg("no block starts at +40 MiB", "没有块从 +40 MiB 开始")},
		{"below the segment", base - 512, msg("the segment starts at +0", "段从 +0 开始")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []Block
			var err error
			call := fmt.Sprintf("Free(%s, %#x)", layout(seg), tc.addr)
			if !exercisetest.Call(t, call, func() { got, err = Free(seg, tc.addr) }) {
				return
			}
			if err == nil {
				t.Errorf(msg("%s: want an error, got %s — %s", "%s：期望一个错误，得到 %s——%s"), call, layout(got), tc.why)
			}
		})
	}
	t.Run("empty segment", func(t *testing.T) {
		var err error
		if !exercisetest.Call(t, "Free([], base)", func() { _, err = Free(nil, base) }) {
			return
		}
		if err == nil {
			t.Error(msg("Free of an empty segment: want an error — there is no block to free", "释放空段：期望一个错误——没有块可以释放"))
		}
	})
}

func TestC_Releasable(t *testing.T) {
	tests := []struct {
		name    string
		segment []Block
		want    bool
		why     string
	}{
		{"whole free segment", []Block{{base, 20 * mib, false}}, true, msg("one free block: empty_cache can cudaFree it", "一个空闲块：empty_cache 可以 cudaFree 它")},
		{"whole allocated segment", []Block{{base, 20 * mib, true}}, false, msg("a tensor still uses it", "还有张量在用它")},
		{"split with a live block", []Block{{base, 5 * mib, true}, {base + 5*mib, 15 * mib, false}}, false, msg("the 15 MiB free piece is non-releasable while the 5 MiB block lives", "只要 5 MiB 的块还活着，15 MiB 的空闲碎片就不可释放")},
		{"split, all free", []Block{{base, 5 * mib, false}, {base + 5*mib, 15 * mib, false}}, false, msg("two free blocks means merging was skipped — not a whole segment (cannot happen after correct merging)", "两个空闲块说明跳过了合并——不是一整个段（正确合并后不会发生）")},
		{"empty", nil, false, msg("no blocks at all is not a segment", "一个块都没有就不是段")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got bool
			call := fmt.Sprintf("Releasable(%s)", layout(tc.segment))
			if !exercisetest.Call(t, call, func() { got = Releasable(tc.segment) }) {
				return
			}
			if got != tc.want {
				t.Errorf(msg("%s: want %v, got %v — %s", "%s：期望 %v，得到 %v——%s"), call, tc.want, got, tc.why)
			}
		})
	}
}
