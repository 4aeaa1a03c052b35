package bestfit

import (
	"fmt"
	"slices"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

// msg picks a failure message in the learner's language (MEMLAB_LANG).
var msg = exercisetest.Msg

const mib = 1 << 20

type fitCase struct {
	name string
	free []Block
	size uint64
	cfg  Config
	want int
	why  string
}

func describe(free []Block, i int) string {
	if i < 0 || i >= len(free) {
		return fmt.Sprintf("%d (no block)", i)
	}
	return fmt.Sprintf("%d (%d MiB at %#x)", i, free[i].Size/mib, free[i].Addr)
}

func checkFit(t *testing.T, tests []fitCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			free := slices.Clone(tc.free)
			var got int
			call := fmt.Sprintf("BestFit(free, %d MiB, %+v)", tc.size/mib, tc.cfg)
			if !exercisetest.Call(t, call, func() { got = BestFit(free, tc.size, tc.cfg) }) {
				return
			}
			if got != tc.want {
				t.Errorf(msg("%s with free blocks %v: want index %s, got %s — %s", "%s，空闲块 %v：期望下标 %s，得到 %s——%s"), call, tc.free, describe(tc.free, tc.want), describe(tc.free, got), tc.why)
			}
			if !slices.Equal(free, tc.free) {
				t.Errorf(msg("%s reordered or changed its input: %v became %v — search without sorting the caller's slice", "%s 重排或改动了它的输入：%v 变成了 %v——查找时不要对调用者的切片排序"), call, tc.free, free)
			}
		})
	}
}

func TestA_BestFit(t *testing.T) {
	pool := []Block{
		{Addr: 0x7f0000000000, Size: 4 * mib},
		{Addr: 0x7f0004000000, Size: 2 * mib},
		{Addr: 0x7f0000400000, Size: 2 * mib},
		{Addr: 0x7f0008000000, Size: 8 * mib},
	}
	checkFit(t, []fitCase{
		{"exact size, lowest address", pool, 2 * mib, Config{}, 2, msg("two 2 MiB blocks fit exactly; the one at the lower address wins", "两个 2 MiB 的块都正好装得下；地址低的那个胜出")},
		{"smallest that fits", pool, 3 * mib, Config{}, 0, msg("the 4 MiB block is the smallest at least 3 MiB", "4 MiB 的块是至少 3 MiB 的块里最小的")},
		{"smaller request", pool, mib, Config{}, 2, msg("1 MiB fits everywhere; the smallest block is 2 MiB and the lower of those two wins", "1 MiB 哪里都装得下；最小的块是 2 MiB，两个里地址低的胜出")},
		{"largest block", pool, 8 * mib, Config{}, 3, msg("only the 8 MiB block is large enough", "只有 8 MiB 的块够大")},
		{"nothing fits", pool, 9 * mib, Config{}, -1, msg("no cached block holds 9 MiB: the allocator will need a new segment", "没有缓存块装得下 9 MiB：分配器需要一个新段")},
		{"empty pool", nil, 512, Config{}, -1, msg("with nothing cached there is nothing to find", "什么都没缓存，就什么都找不到")},
		{"equal sizes listed high address first", []Block{{0x3000, 1024}, {0x2000, 1024}, {0x1000, 1024}}, 1024, Config{}, 2, msg("order by (size, address): 0x1000 is lowest", "按 (大小, 地址) 排序：0x1000 最低")},
		{"huge block, default config", []Block{{0x1000, 1 << 30}}, 2 * mib, Config{}, 0, msg("without max_split_size no block is oversize: a 2 MiB request may take a 1 GiB block (and split it)", "没有 max_split_size 时没有超大块：2 MiB 的请求可以拿 1 GiB 的块（并分割它）")},
	})
}

func TestB_OversizeRules(t *testing.T) {
	cfg := Config{MaxSplitSize: 128 * mib}
	checkFit(t, []fitCase{
		{"oversize request, far bigger block", []Block{{0x1000, 1024 * mib}}, 512 * mib, cfg, -1, msg("512 MiB ≥ max_split 128 MiB, and 1024 MiB ≥ 512 + 20 MiB: the big block may not be used (PyTorch makes a new segment)", "512 MiB ≥ max_split 128 MiB，且 1024 MiB ≥ 512 + 20 MiB：不能用这个大块（PyTorch 新建一个段）")},
		{"oversize request, close fit", []Block{{0x1000, 140 * mib}, {0x9000000, 64 * mib}}, 130 * mib, cfg, 0, msg("140 MiB < 130 + 20 MiB: an oversize request may take a block at most 20 MiB bigger", "140 MiB < 130 + 20 MiB：超大请求可以拿最多大 20 MiB 的块")},
		{"normal request, oversize block", []Block{{0x1000, 140 * mib}}, 100 * mib, cfg, -1, msg("100 MiB < 128 MiB is a normal request; it never takes an oversize (≥ 128 MiB) cached block", "100 MiB < 128 MiB 是普通请求；它从不拿超大（≥ 128 MiB）的缓存块")},
		{"normal request, normal block", []Block{{0x1000, 140 * mib}, {0x9000000, 64 * mib}}, 32 * mib, cfg, 1, msg("64 MiB is the best fit and is below max_split", "64 MiB 是最佳适配，且小于 max_split")},
		{"only the best candidate is tried", []Block{{0x1000, 200 * mib}, {0x9000000, 300 * mib}}, 150 * mib, cfg, -1, msg("the best fit 200 MiB is ≥ 150 + 20 MiB, so the search fails without looking further", "最佳适配 200 MiB ≥ 150 + 20 MiB，所以查找失败，不再往下看")},
		{"request equal to max_split is oversize", []Block{{0x1000, 148 * mib}}, 128 * mib, cfg, -1, msg("128 MiB ≥ max_split counts as oversize, and 148 MiB ≥ 128 + 20 MiB", "128 MiB ≥ max_split 算超大，且 148 MiB ≥ 128 + 20 MiB")},
		{"just under the slack", []Block{{0x1000, 148*mib - 512}}, 128 * mib, cfg, 0, msg("148 MiB − 512 is below 128 + 20 MiB: allowed", "148 MiB − 512 小于 128 + 20 MiB：允许")},
		{"block equal to max_split is oversize", []Block{{0x1000, 128 * mib}}, 64 * mib, cfg, -1, msg("a 128 MiB block is ≥ max_split: oversize, out of reach of a normal request", "128 MiB 的块 ≥ max_split：超大，普通请求够不着")},
		{"custom non-split rounding", []Block{{0x1000, 560 * mib}}, 512 * mib, Config{MaxSplitSize: 128 * mib, MaxNonSplitRounding: 64 * mib}, 0, msg("with max_non_split_rounding 64 MiB, 560 MiB < 512 + 64 MiB is allowed", "max_non_split_rounding 为 64 MiB 时，560 MiB < 512 + 64 MiB，允许")},
		{"oversize request, nothing big enough", []Block{{0x1000, 64 * mib}}, 256 * mib, cfg, -1, msg("no block is at least 256 MiB", "没有至少 256 MiB 的块")},
	})
}
