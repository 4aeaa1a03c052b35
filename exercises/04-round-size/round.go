//go:build !solution

// Package round is exercise 04 of the memlab course: the size rounding PyTorch's
// CUDA caching allocator applies to every request (round_size), with and without
// roundup_power2_divisions. See README.md.
//
// 中文：练习 04：PyTorch 的 CUDA 缓存分配器对每个请求做的取整（round_size），
// 包括有无 roundup_power2_divisions 两种情况。题目见 README.zh-CN.md。
package round

// MinBlockSize is kMinBlockSize: every rounded size is a multiple of it.
const MinBlockSize = 512

// MaxRequest is the smallest request PyTorch refuses outright (1 EiB).
const MaxRequest = 1 << 60

// RoundSize returns the size the allocator uses for a request of size bytes.
//
// With divisions 0 or 1, sizes below 512 become 512 and other sizes are rounded
// up to a multiple of 512. With divisions d > 1 and size > 512·d, a power of two is
// kept and any other size is rounded up to a multiple of floor/d, where floor is the
// largest power of two not above size; smaller sizes get plain rounding.
//
// It returns an error if divisions is not 0, 1 or a power of two, or if size is at
// least MaxRequest.
//
// 中文：返回分配器对 size 字节的请求实际使用的大小。divisions 为 0 或 1 时，
// 小于 512 变成 512，其余向上取整到 512 的倍数；divisions d > 1 且 size > 512·d 时，
// 2 的幂保持不变，其余向上取整到 floor/d 的倍数（floor 是不超过 size 的最大 2 的幂）；
// 更小的大小普通取整。divisions 不是 0、1 或 2 的幂，或 size 不小于 MaxRequest 时返回错误。
func RoundSize(size, divisions uint64) (uint64, error) {
	panic("not implemented")
}

// IntervalIndex returns the entry of the roundup_power2_divisions table that
// governs size: floor(log2(size)) − 20, clamped to [0, 15]. Sizes below 2 MiB
// (including 0) use entry 0 and sizes of 32 GiB or more use entry 15.
//
// 中文：返回管 size 的那一项 roundup_power2_divisions 表项：
// floor(log2(size)) − 20，限制在 [0, 15]。2 MiB 以下（含 0）
// 用第 0 项，32 GiB 及以上用第 15 项。
func IntervalIndex(size uint64) int {
	panic("not implemented")
}

// RoundSizeTable rounds size with the divisions of its interval,
// table[IntervalIndex(size)], exactly as RoundSize does; its errors are RoundSize's.
//
// 中文：用 size 所在区间的等分数 table[IntervalIndex(size)] 取整，
// 与 RoundSize 完全一样；错误也与 RoundSize 相同。
func RoundSizeTable(size uint64, table [16]uint64) (uint64, error) {
	panic("not implemented")
}
