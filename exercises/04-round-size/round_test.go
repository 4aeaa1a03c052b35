package round

import (
	"fmt"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

// msg picks a failure message in the learner's language (MEMLAB_LANG).
var msg = exercisetest.Msg

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
)

type roundCase struct {
	size, divisions, want uint64
	why                   string
}

func checkRound(t *testing.T, tests []roundCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d with %d divisions", tc.size, tc.divisions), func(t *testing.T) {
			var got uint64
			var err error
			if !exercisetest.Call(t, fmt.Sprintf("RoundSize(%d, %d)", tc.size, tc.divisions), func() { got, err = RoundSize(tc.size, tc.divisions) }) {
				return
			}
			if err != nil {
				t.Fatalf(msg("round_size(%d) with %d divisions: unexpected error %v", "round_size(%d)，%d 等分：意外的错误 %v"), tc.size, tc.divisions, err)
			}
			if got != tc.want {
				t.Errorf(msg("round_size(%d) with %d divisions: want %d, got %d — %s", "round_size(%d)，%d 等分：期望 %d，得到 %d——%s"), tc.size, tc.divisions, tc.want, got, tc.why)
			}
		})
	}
}

func TestA_PlainRounding(t *testing.T) {
	checkRound(t, []roundCase{
		{1, 0, 512, msg("every size below 512 becomes 512 (kMinBlockSize)", "小于 512 的大小都变成 512（kMinBlockSize）")},
		{0, 0, 512, msg("0 is below 512 too (PyTorch never asks, but round_size(0) is 512)", "0 也小于 512（PyTorch 不会请求 0，但 round_size(0) 是 512）")},
		{511, 0, 512, msg("below 512 becomes 512", "小于 512 变成 512")},
		{512, 0, 512, msg("512 is already a multiple of 512", "512 已经是 512 的倍数")},
		{513, 0, 1024, msg("one byte over a multiple of 512 rounds up to the next one", "比 512 的倍数多一个字节，就向上取整到下一个倍数")},
		{1000, 0, 1024, msg("rounded up to a multiple of 512", "向上取整到 512 的倍数")},
		{1200, 0, 1536, msg("1200 rounds up to 3×512", "1200 向上取整到 3×512")},
		{mib, 0, mib, msg("1 MiB is a multiple of 512", "1 MiB 是 512 的倍数")},
		{mib + 1, 0, mib + 512, msg("1048577 rounds to 1049088 — just over 1 MiB, so it will go to the large pool", "1048577 取整为 1049088——刚过 1 MiB，所以会进大块池")},
		{1200, 1, 1536, msg("1 division means no power-of-two rounding", "1 等分表示不做 2 的幂取整")},
		{5000, 1, 5120, msg("1 division means no power-of-two rounding: 10×512", "1 等分表示不做 2 的幂取整：10×512")},
	})
}

func TestB_PowerOfTwoDivisions(t *testing.T) {
	checkRound(t, []roundCase{
		{1200, 4, 1536, msg("1200 is not above 512×4, so plain 512-byte rounding applies", "1200 不大于 512×4，所以按普通的 512 字节取整")},
		{2048, 4, 2048, msg("2048 is not above 512×4 (the test is strictly greater), so plain rounding: 2048", "2048 不大于 512×4（条件是严格大于），所以普通取整：2048")},
		{2049, 4, 2560, msg("floor is 2048, the step is 2048/4 = 512, next multiple of 512 is 2560", "floor 是 2048，step 是 2048/4 = 512，512 的下一个倍数是 2560")},
		{3000, 4, 3072, msg("floor 2048, step 512: 3000 rounds up to 3072", "floor 2048，step 512：3000 向上取整到 3072")},
		{1000000, 4, mib, msg("floor 524288, step 131072: 1000000 rounds up to 8 steps = 1048576", "floor 524288，step 131072：1000000 向上取整到 8 步 = 1048576")},
		{mib + 1, 4, 1310720, msg("floor 1 MiB, step 256 KiB: the next quarter-octave is 1.25 MiB", "floor 1 MiB，step 256 KiB：下一个四分之一倍频程是 1.25 MiB")},
		{300*mib + 1, 4, 320 * mib, msg("floor 256 MiB, step 64 MiB: next multiple is 320 MiB", "floor 256 MiB，step 64 MiB：下一个倍数是 320 MiB")},
		{769 * mib, 4, 896 * mib, msg("floor 512 MiB, step 128 MiB: 769 MiB rounds up to 896 MiB", "floor 512 MiB，step 128 MiB：769 MiB 向上取整到 896 MiB")},
		{768 * mib, 4, 768 * mib, msg("768 MiB is already a multiple of the 128 MiB step", "768 MiB 已经是 128 MiB 步长的倍数")},
		{gib, 4, gib, msg("a power of two is kept as it is", "2 的幂保持不变")},
		{5000, 2, 6144, msg("5000 > 512×2: floor 4096, step 2048, so 6144 (plain rounding would give 5120)", "5000 > 512×2：floor 4096，step 2048，所以是 6144（普通取整会得到 5120）")},
		{3*mib + 1, 2, 4 * mib, msg("floor 2 MiB, step 1 MiB: rounds up to 4 MiB", "floor 2 MiB，step 1 MiB：向上取整到 4 MiB")},
		{1025, 8, 1536, msg("1025 is not above 512×8 = 4096: plain rounding", "1025 不大于 512×8 = 4096：普通取整")},
		{9000, 16, 9216, msg("9000 > 512×16: floor 8192, step 512, so 9216", "9000 > 512×16：floor 8192，step 512，所以是 9216")},
		{100, 4, 512, msg("small sizes still become 512", "小的大小仍然变成 512")},
	})
}

func TestB_RoundSizeErrors(t *testing.T) {
	tests := []struct {
		size, divisions uint64
		why             string
	}{
		{1000, 3, msg("3 divisions is not a power of two; PyTorch rejects it", "3 等分不是 2 的幂；PyTorch 拒绝它")},
		{1000, 6, msg("6 divisions is not a power of two", "6 等分不是 2 的幂")},
		{1 << 60, 0, msg("PyTorch refuses requests of 1 EiB or more", "PyTorch 拒绝 1 EiB 及以上的请求")},
		{1<<64 - 1, 0, msg("the largest uint64 is far above 1 EiB (and rounding it would overflow)", "最大的 uint64 远大于 1 EiB（而且对它取整会溢出）")},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d with %d divisions", tc.size, tc.divisions), func(t *testing.T) {
			var got uint64
			var err error
			if !exercisetest.Call(t, fmt.Sprintf("RoundSize(%d, %d)", tc.size, tc.divisions), func() { got, err = RoundSize(tc.size, tc.divisions) }) {
				return
			}
			if err == nil {
				t.Errorf(msg("round_size(%d) with %d divisions: want an error, got %d — %s", "round_size(%d)，%d 等分：期望一个错误，得到 %d——%s"), tc.size, tc.divisions, got, tc.why)
			}
		})
	}
}

func TestC_IntervalIndex(t *testing.T) {
	tests := []struct {
		size uint64
		want int
		why  string
	}{
		{1, 0, msg("everything below 2 MiB uses entry 0", "2 MiB 以下的一切用第 0 项")},
		{0, 0, msg("0 is below 2 MiB", "0 小于 2 MiB")},
		{2*mib - 1, 0, msg("just below 2 MiB: entry 0", "刚好小于 2 MiB：第 0 项")},
		{2 * mib, 1, msg("2 MiB starts interval 1 (log2 = 21, minus 20)", "2 MiB 开始第 1 个区间（log2 = 21，减 20）")},
		{3 * mib, 1, msg("3 MiB is in [2 MiB, 4 MiB): entry 1", "3 MiB 在 [2 MiB, 4 MiB) 里：第 1 项")},
		{gib, 10, msg("log2(1 GiB) = 30, minus 20 = 10", "log2(1 GiB) = 30，减 20 = 10")},
		{32 * gib, 15, msg("32 GiB starts the last interval", "32 GiB 开始最后一个区间")},
		{1 << 40, 15, msg("1 TiB is clamped to the last entry, 15", "1 TiB 截到最后一项，15")},
		{700 * kib, 0, msg("700 KiB (a small-pool size) uses entry 0", "700 KiB（小块池的大小）用第 0 项")},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d", tc.size), func(t *testing.T) {
			var got int
			if !exercisetest.Call(t, fmt.Sprintf("IntervalIndex(%d)", tc.size), func() { got = IntervalIndex(tc.size) }) {
				return
			}
			if got != tc.want {
				t.Errorf(msg("IntervalIndex(%d): want %d, got %d — %s", "IntervalIndex(%d)：期望 %d，得到 %d——%s"), tc.size, tc.want, got, tc.why)
			}
		})
	}
}

func TestC_RoundSizeTable(t *testing.T) {
	// PYTORCH_CUDA_ALLOC_CONF=roundup_power2_divisions:[256:1,512:2,1024:4,>:8]
	// gives this table: the first entry fills every lower interval, ">" fills the rest.
	table := [16]uint64{1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 4, 8, 8, 8, 8, 8}
	tests := []struct {
		size, want uint64
		why        string
	}{
		{300*mib + 1, 300*mib + 512, msg("interval 8 ([256 MiB, 512 MiB)) has 1 division: plain 512-byte rounding", "第 8 个区间（[256 MiB, 512 MiB)）是 1 等分：普通的 512 字节取整")},
		{600*mib + 1, 768 * mib, msg("interval 9 has 2 divisions: floor 512 MiB, step 256 MiB", "第 9 个区间是 2 等分：floor 512 MiB，step 256 MiB")},
		{1536*mib + 1, 1792 * mib, msg("interval 10 has 4 divisions: floor 1 GiB, step 256 MiB", "第 10 个区间是 4 等分：floor 1 GiB，step 256 MiB")},
		{3*gib + 1, 3*gib + 256*mib, msg("interval 11 has 8 divisions: floor 2 GiB, step 256 MiB", "第 11 个区间是 8 等分：floor 2 GiB，step 256 MiB")},
		{1000, 1024, msg("interval 0 has 1 division: plain rounding", "第 0 个区间是 1 等分：普通取整")},
		{40 * gib, 40 * gib, msg("interval 15 has 8 divisions; 40 GiB is a multiple of 32 GiB/8 = 4 GiB", "第 15 个区间是 8 等分；40 GiB 是 32 GiB/8 = 4 GiB 的倍数")},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d", tc.size), func(t *testing.T) {
			var got uint64
			var err error
			if !exercisetest.Call(t, fmt.Sprintf("RoundSizeTable(%d, table)", tc.size), func() { got, err = RoundSizeTable(tc.size, table) }) {
				return
			}
			if err != nil {
				t.Fatalf(msg("RoundSizeTable(%d): unexpected error %v", "RoundSizeTable(%d)：意外的错误 %v"), tc.size, err)
			}
			if got != tc.want {
				t.Errorf(msg("round_size(%d) with table %v: want %d, got %d — %s", "round_size(%d)，表 %v：期望 %d，得到 %d——%s"), tc.size, table, tc.want, got, tc.why)
			}
		})
	}
	t.Run("bad table entry", func(t *testing.T) {
		bad := [16]uint64{3}
		var err error
		if !exercisetest.Call(t, "RoundSizeTable(1000, [3 0 …])", func() { _, err = RoundSizeTable(1000, bad) }) {
			return
		}
		if err == nil {
			t.Error(msg("RoundSizeTable(1000) with entry 0 = 3: want an error — 3 divisions is not a power of two", "RoundSizeTable(1000)，第 0 项 = 3：期望一个错误——3 等分不是 2 的幂"))
		}
	})
}
