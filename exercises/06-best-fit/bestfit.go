//go:build !solution

package bestfit

// BestFit returns the index in free of the block PyTorch's get_free_block would
// choose for a rounded request of size bytes, or -1 if it would find none.
//
// The candidate is the smallest block with Size ≥ size, ties broken by the lowest
// Addr. Then the oversize rules of cfg apply to that candidate alone: a request
// below cfg.MaxSplitSize may not take a block of at least MaxSplitSize, and a
// request of at least MaxSplitSize may not take a block of at least
// size + MaxNonSplitRounding. If the candidate is rejected the result is -1.
//
// free may be in any order and is not modified.
//
// 中文：返回 PyTorch 的 get_free_block 会为取整后 size 字节的请求选中的块在 free 里的下标，
// 找不到时返回 -1。候选块是 Size ≥ size 的最小块，大小相同取 Addr 最低的；
// 然后只对这个候选块应用 cfg 的超大块规则：小于 MaxSplitSize 的请求不能拿至少 MaxSplitSize 的块，
// 至少 MaxSplitSize 的请求不能拿至少 size + MaxNonSplitRounding 的块；
// 被拒绝则返回 -1。free 顺序任意，且不被修改。
func BestFit(free []Block, size uint64, cfg Config) int {
	panic("not implemented")
}
