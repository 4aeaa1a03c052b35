package segment

import (
	"fmt"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

// msg picks a failure message in the learner's language (MEMLAB_LANG).
var msg = exercisetest.Msg

const mib = 1 << 20

func TestA_PoolFor(t *testing.T) {
	tests := []struct {
		size uint64
		want Pool
		why  string
	}{
		{512, SmallPool, msg("the smallest block is small", "最小的块属于小块池")},
		{1024, SmallPool, msg("torch.empty(1000, dtype=torch.uint8) rounds to 1024: small pool", "torch.empty(1000, dtype=torch.uint8) 取整为 1024：小块池")},
		{mib, SmallPool, msg("exactly 1 MiB is still small (the test is ≤ 1 MiB)", "恰好 1 MiB 仍属于小块池（条件是 ≤ 1 MiB）")},
		{mib + 512, LargePool, msg("one step above 1 MiB is large — 1048577 bytes rounds here", "比 1 MiB 多一步就属于大块池——1048577 字节取整后就落在这里")},
		{20 * mib, LargePool, msg("anything above 1 MiB is large", "超过 1 MiB 的都属于大块池")},
		{700 * 1024, SmallPool, "700 KiB ≤ 1 MiB"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.size), func(t *testing.T) {
			var got Pool
			var err error
			if !exercisetest.Call(t, fmt.Sprintf("PoolFor(%d)", tc.size), func() { got, err = PoolFor(tc.size) }) {
				return
			}
			if err != nil {
				t.Fatalf(msg("PoolFor(%d): unexpected error %v", "PoolFor(%d)：意外的错误 %v"), tc.size, err)
			}
			if got != tc.want {
				t.Errorf(msg("PoolFor(%d): want the %v pool, got the %v pool — %s", "PoolFor(%d)：期望 %v 池，得到 %v 池——%s"), tc.size, tc.want, got, tc.why)
			}
		})
	}
}

func TestB_SegmentSize(t *testing.T) {
	tests := []struct {
		size, want uint64
		why        string
	}{
		{512, 2 * mib, msg("small requests share 2 MiB segments", "小请求共享 2 MiB 的段")},
		{mib, 2 * mib, msg("1 MiB is still small: a 2 MiB segment", "1 MiB 仍属于小块池：2 MiB 的段")},
		{mib + 512, 20 * mib, msg("just above 1 MiB: a 20 MiB segment (kLargeBuffer) to share with later requests", "刚过 1 MiB：一个 20 MiB 的段（kLargeBuffer），和后面的请求共享")},
		{3 * mib / 2, 20 * mib, msg("1.5 MiB is between 1 and 10 MiB: 20 MiB", "1.5 MiB 在 1 与 10 MiB 之间：20 MiB")},
		{10*mib - 512, 20 * mib, msg("just below 10 MiB still gets kLargeBuffer", "刚好小于 10 MiB 仍然得到 kLargeBuffer")},
		{10 * mib, 10 * mib, msg("from 10 MiB the segment fits the request, rounded to 2 MiB: 10 MiB", "从 10 MiB 起段正好装下请求，取整到 2 MiB：10 MiB")},
		{10*mib + 512, 12 * mib, msg("10 MiB + 512 rounds up to the next multiple of 2 MiB", "10 MiB + 512 向上取整到 2 MiB 的下一个倍数")},
		{39 * mib / 2, 20 * mib, msg("19.5 MiB rounds up to a 20 MiB segment", "19.5 MiB 向上取整为 20 MiB 的段")},
		{21 * mib, 22 * mib, msg("21 MiB is not a multiple of 2 MiB: 22 MiB", "21 MiB 不是 2 MiB 的倍数：22 MiB")},
		{1 << 30, 1 << 30, msg("1 GiB is a multiple of 2 MiB: a 1 GiB segment", "1 GiB 是 2 MiB 的倍数：一个 1 GiB 的段")},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.size), func(t *testing.T) {
			var got uint64
			var err error
			if !exercisetest.Call(t, fmt.Sprintf("SegmentSize(%d)", tc.size), func() { got, err = SegmentSize(tc.size) }) {
				return
			}
			if err != nil {
				t.Fatalf(msg("SegmentSize(%d): unexpected error %v", "SegmentSize(%d)：意外的错误 %v"), tc.size, err)
			}
			if got != tc.want {
				t.Errorf(msg("SegmentSize(%d): want %d (%.1f MiB), got %d (%.1f MiB) — %s", "SegmentSize(%d)：期望 %d（%.1f MiB），得到 %d（%.1f MiB）——%s"), tc.size, tc.want, float64(tc.want)/mib, got, float64(got)/mib, tc.why)
			}
		})
	}
}

func TestA_PoolForUnrounded(t *testing.T) {
	for _, size := range []uint64{0, 1, 511, 1000, mib + 1} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			var err error
			if !exercisetest.Call(t, fmt.Sprintf("PoolFor(%d)", size), func() { _, err = PoolFor(size) }) {
				return
			}
			if err == nil {
				t.Errorf(msg("PoolFor(%d): want an error — %d is not a multiple of 512 (at least 512), so it was never rounded", "PoolFor(%d)：期望一个错误——%d 不是 512 的倍数（至少 512），所以它没有被取整过"), size, size)
			}
		})
	}
}

func TestB_SegmentSizeUnrounded(t *testing.T) {
	for _, size := range []uint64{0, 1, 511, 1000, 10*mib + 1} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			var err error
			if !exercisetest.Call(t, fmt.Sprintf("SegmentSize(%d)", size), func() { _, err = SegmentSize(size) }) {
				return
			}
			if err == nil {
				t.Errorf(msg("SegmentSize(%d): want an error — %d is not a multiple of 512 (at least 512), so it was never rounded", "SegmentSize(%d)：期望一个错误——%d 不是 512 的倍数（至少 512），所以它没有被取整过"), size, size)
			}
		})
	}
}
