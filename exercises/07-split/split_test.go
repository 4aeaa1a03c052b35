package split

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

// msg picks a failure message in the learner's language (MEMLAB_LANG).
var msg = exercisetest.Msg

const mib = 1 << 20

func TestA_ShouldSplit(t *testing.T) {
	tests := []struct {
		pool            Pool
		blockSize, size uint64
		cfg             Config
		want            bool
		why             string
	}{
		{SmallPool, 2 * mib, 1024, Config{}, true, msg("small pool: 2 MiB − 1 KiB remains, far more than 512", "小块池：剩下 2 MiB − 1 KiB，远多于 512")},
		{SmallPool, 1024, 512, Config{}, true, msg("small pool: exactly 512 bytes remain, and the test is ≥ 512", "小块池：正好剩下 512 字节，而条件是 ≥ 512")},
		{SmallPool, 1024, 1024, Config{}, false, "nothing remains"},
		{SmallPool, 1536, 1024, Config{}, true, msg("small pool: 512 bytes remain", "小块池：剩下 512 字节")},
		{LargePool, 20 * mib, 5 * mib, Config{}, true, msg("large pool: 15 MiB remain, more than 1 MiB", "大块池：剩下 15 MiB，多于 1 MiB")},
		{LargePool, 20 * mib, 39 * mib / 2, Config{}, false, msg("large pool: only 0.5 MiB would remain, not more than 1 MiB — the slack stays in the allocation", "大块池：只会剩下 0.5 MiB，不多于 1 MiB——多余部分留在这次分配里")},
		{LargePool, 20 * mib, 19 * mib, Config{}, false, msg("large pool: exactly 1 MiB remains; the test is strictly greater than 1 MiB", "大块池：正好剩下 1 MiB；条件是严格大于 1 MiB")},
		{LargePool, 20 * mib, 19*mib - 512, Config{}, true, msg("large pool: 1 MiB + 512 remains, more than 1 MiB", "大块池：剩下 1 MiB + 512，多于 1 MiB")},
		{LargePool, 1024 * mib, 512 * mib, Config{MaxSplitSize: 128 * mib}, false, msg("512 MiB ≥ max_split 128 MiB: oversize requests are never split", "512 MiB ≥ max_split 128 MiB：超大请求从不分割")},
		{LargePool, 1024 * mib, 512 * mib, Config{}, true, msg("without max_split_size the 1 GiB block splits: 512 MiB remain", "没有 max_split_size 时 1 GiB 的块会分割：剩下 512 MiB")},
		{LargePool, 130 * mib, 100 * mib, Config{MaxSplitSize: 128 * mib}, true, msg("100 MiB is below max_split, and 30 MiB remain", "100 MiB 小于 max_split，且剩下 30 MiB")},
		{SmallPool, 2 * mib, 1024, Config{MaxSplitSize: 1}, true, msg("max_split_size does not affect the small pool", "max_split_size 不影响小块池")},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%v pool %d of %d", tc.pool, tc.size, tc.blockSize), func(t *testing.T) {
			var got bool
			call := fmt.Sprintf("ShouldSplit(%v, %d, %d, %+v)", tc.pool, tc.blockSize, tc.size, tc.cfg)
			if !exercisetest.Call(t, call, func() { got = ShouldSplit(tc.pool, tc.blockSize, tc.size, tc.cfg) }) {
				return
			}
			if got != tc.want {
				t.Errorf(msg("%s: want %v, got %v — %s", "%s：期望 %v，得到 %v——%s"), call, tc.want, got, tc.why)
			}
		})
	}
}

func layout(seg []Block) string {
	parts := make([]string, len(seg))
	for i, b := range seg {
		state := "free"
		if b.Allocated {
			state = "A"
		}
		parts[i] = fmt.Sprintf("%#x:%d %s", b.Addr, b.Size, state)
	}
	return "[" + strings.Join(parts, " | ") + "]"
}

func TestB_Allocate(t *testing.T) {
	const base = 0x7f0000000000
	tests := []struct {
		name    string
		segment []Block
		i       int
		size    uint64
		pool    Pool
		cfg     Config
		want    []Block
		why     string
	}{
		{"fresh small segment", []Block{{base, 2 * mib, false}}, 0, 1024, SmallPool, Config{},
			[]Block{{base, 1024, true}, {base + 1024, 2*mib - 1024, false}},
			msg("the allocation takes the low addresses; the 2 MiB − 1 KiB remainder follows it, free", "分配占低地址；剩下的 2 MiB − 1 KiB 空闲地跟在后面")},
		{"first 5 MiB of a 20 MiB segment", []Block{{base, 20 * mib, false}}, 0, 5 * mib, LargePool, Config{},
			[]Block{{base, 5 * mib, true}, {base + 5*mib, 15 * mib, false}},
			msg("5 MiB allocated at the segment start, 15 MiB free after it", "在段的开头分配 5 MiB，后面 15 MiB 空闲")},
		{"second 5 MiB reuses the remainder", []Block{{base, 5 * mib, true}, {base + 5*mib, 15 * mib, false}}, 1, 5 * mib, LargePool, Config{},
			[]Block{{base, 5 * mib, true}, {base + 5*mib, 5 * mib, true}, {base + 10*mib, 10 * mib, false}},
			msg("the segment is carved from the bottom up: 5 A | 5 A | 10 free", "段从下往上切：5 A | 5 A | 10 空闲")},
		{"slack stays inside", []Block{{base, 20 * mib, false}}, 0, 39 * mib / 2, LargePool, Config{},
			[]Block{{base, 20 * mib, true}},
			msg("only 0.5 MiB would remain, so the whole 20 MiB block is allocated", "只会剩下 0.5 MiB，所以整个 20 MiB 的块都被分配")},
		{"block in the middle", []Block{{base, 5 * mib, true}, {base + 5*mib, 10 * mib, false}, {base + 15*mib, 5 * mib, true}}, 1, 4 * mib, LargePool, Config{},
			[]Block{{base, 5 * mib, true}, {base + 5*mib, 4 * mib, true}, {base + 9*mib, 6 * mib, false}, {base + 15*mib, 5 * mib, true}},
			msg("the blocks before and after stay as they were", "前后的块保持原样")},
		{"exact fit", []Block{{base, 1024, true}, {base + 1024, 1024, false}}, 1, 1024, SmallPool, Config{},
			[]Block{{base, 1024, true}, {base + 1024, 1024, true}},
			msg("nothing remains: no new block", "什么都不剩：没有新块")},
		{"oversize request is not split", []Block{{base, 1024 * mib, false}}, 0, 1000 * mib, LargePool, Config{MaxSplitSize: 128 * mib},
			[]Block{{base, 1024 * mib, true}},
			msg("requests ≥ max_split_size are never split: 24 MiB of slack stay in the allocation", "≥ max_split_size 的请求从不分割：24 MiB 的多余部分留在这次分配里")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seg := slices.Clone(tc.segment)
			var got []Block
			var err error
			call := fmt.Sprintf("Allocate(%s, %d, %d, %v, %+v)", layout(tc.segment), tc.i, tc.size, tc.pool, tc.cfg)
			if !exercisetest.Call(t, call, func() { got, err = Allocate(seg, tc.i, tc.size, tc.pool, tc.cfg) }) {
				return
			}
			if err != nil {
				t.Fatalf(msg("%s: unexpected error %v", "%s：意外的错误 %v"), call, err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf(msg("%s:\nwant %s\n got %s\n— %s", "%s：\n期望 %s\n得到 %s\n——%s"), call, layout(tc.want), layout(got), tc.why)
			}
			if !slices.Equal(seg, tc.segment) {
				t.Errorf(msg("%s modified its input to %s — build a new slice", "%s 把它的输入改成了 %s——请构造一个新切片"), call, layout(seg))
			}
		})
	}
}

func TestB_AllocateErrors(t *testing.T) {
	seg := []Block{{0x1000, 1024, true}, {0x1400, 4096, false}}
	tests := []struct {
		name string
		i    int
		size uint64
		why  string
	}{
		{"allocated block", 0, 512, msg("block 0 is in use; only free blocks can be allocated", "块 0 正在使用；只能分配空闲块")},
		{"index too large", 2, 512, msg("the segment has blocks 0 and 1 only", "这个段只有块 0 和块 1")},
		{"negative index", -1, 512, msg("indices start at 0", "下标从 0 开始")},
		{"too big", 1, 8192, msg("8192 bytes do not fit in a 4096-byte block", "8192 字节装不进 4096 字节的块")},
		{"unrounded size", 1, 1000, msg("1000 is not a multiple of 512: round the request first", "1000 不是 512 的倍数：先对请求取整")},
		{"zero size", 1, 0, msg("0 is not a rounded size", "0 不是取整后的大小")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []Block
			var err error
			call := fmt.Sprintf("Allocate(%s, %d, %d, small, {})", layout(seg), tc.i, tc.size)
			if !exercisetest.Call(t, call, func() { got, err = Allocate(seg, tc.i, tc.size, SmallPool, Config{}) }) {
				return
			}
			if err == nil {
				t.Errorf(msg("%s: want an error, got %s — %s", "%s：期望一个错误，得到 %s——%s"), call, layout(got), tc.why)
			}
		})
	}
}
