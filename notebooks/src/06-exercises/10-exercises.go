package nb06

import (
	"memlab.dev/memlab/memlab"
)

/*md
# 06 · Exercises in the notebook

Every exercise of the course is here, in order: 1–14 each re-implement one rule of chapters 2 and
4 on plain integers and slices, 15–19 use memlab's own API — tensors, the caching allocator and its
`torch.cuda`-style functions. Each one has two cells: the first holds **your code** (it starts as the exercise's
stub; edit it in place) and saves it with GoNB's `%%writefile` to your copy of the exercise under
`workbook/exercises/` (git ignores it: the repository's files never change); the second runs the
exercise's **official tests** against that copy:

    go run ./cmd/memlab exercises check N --not-started-ok --student workbook/exercises/FOLDER

— in a terminal at the repository root, `go run ./cmd/memlab exercises check N` checks the same copy
(your working copy; the tracked `exercises/` is the instructor's). An exercise you have not started
says TODO, calmly; one you started says PASS, or FAIL with what is wrong. Run the cell above it again
after every edit. Hints, one at a time: `go run ./cmd/memlab exercises hint N`; progress:
`go run ./cmd/memlab exercises list`, and the last cell of every other notebook.

The next cell makes your copies (an existing copy is kept), then the tests' card is opened once so
you can see what they run on.
*/

/*md:zh-CN
# 06 · 在笔记本里做练习

课程的全部练习都在这里，按顺序排列：1–14 各用普通的整数和切片重新实现第 2、4 章里的一条规则；15–19 用的是 memlab 自己的 API：张量、缓存分配器（caching allocator）以及仿照 `torch.cuda` 的那些函数。每个练习有两个单元格：第一个放**你的代码**（一开始是练习的桩代码，直接在单元格里改），用 GoNB 的 `%%writefile` 存到 `workbook/exercises/` 下你自己的那份练习里（git 不跟踪它，仓库里的文件永远不会被改动）；第二个用练习的**官方测试**检查这份代码：

    go run ./cmd/memlab exercises check N --not-started-ok --student workbook/exercises/FOLDER

——在仓库根目录的终端里，`go run ./cmd/memlab exercises check N` 检查的也是这一份（你的工作副本；仓库里的 `exercises/` 是讲师用的）。还没开始的练习只平静地显示 TODO；开始了的显示 PASS，或者 FAIL 并说明哪里不对。每次改完代码，先重新运行上面那个单元格，再运行检查。提示一次给一条：`go run ./cmd/memlab exercises hint N`；查看进度：`go run ./cmd/memlab exercises list`，以及其他每个笔记本的最后一个单元格。

下一个单元格生成你的副本（已有的副本保持不动），然后打开一次测试所用的那张卡，让你看看测试在什么上面跑。
*/

/*nb:raw
!cd "$MEMLAB_REPO" && go run ./cmd/memlab exercises copy 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 --to "$MEMLAB_WORKBOOK/exercises"
*/

//nb:cell
func theCard() {
	l := memlab.MustOpen(memlab.Sim("1GiB"))
	defer l.Close()
	free, total := memlab.Must2(l.MemGetInfo())
	memlab.Measured("the exercises' card: %s, of which %s free and %s the CUDA context",
		memlab.FormatBytes(int64(total)), memlab.FormatBytes(int64(free)), memlab.FormatBytes(int64(total-free)))
}

/*md
## 1 · Row-major strides (§2.1)

The task, in parts: [exercises/01-strides/README.md](../../exercises/01-strides/README.md); hints: `go run ./cmd/memlab exercises hint 1`.
*/

/*md:zh-CN
## 1 · 行优先的步长（§2.1）

题目分几个部分，见 [exercises/01-strides/README.md](../../exercises/01-strides/README.md)；提示：`go run ./cmd/memlab exercises hint 1`。
*/

/*nb:raw
%%writefile ${MEMLAB_WORKBOOK}/exercises/01-strides/strides.go
// Package strides is exercise 01 of the memlab course: the strides of a row-major
// tensor and the storage offset of one element. See README.md.
//
// 中文：练习 01：行优先张量的步长，以及单个元素在存储中的偏移。题目见 README.zh-CN.md。
package strides

// RowMajorStrides returns the strides, in elements, of a contiguous (row-major)
// tensor of the given shape: the last dimension has stride 1 and every earlier
// dimension's stride is the product of the sizes after it. A dimension of size 0
// counts as size 1 in that product, as in PyTorch. A scalar (empty shape) has no
// strides: the result is an empty, non-nil slice.
//
// It returns an error naming the dimension if a size is negative, and an error if
// the number of elements does not fit in an int.
//
// 中文：返回给定形状的连续（行优先）张量的步长（以元素计）：最后一维步长为 1，
// 前面每一维的步长是它后面各维大小之积；大小为 0 的维在乘积里按 1 计（与 PyTorch 相同）。
// 标量返回空的非 nil 切片。大小为负时返回写明维度的错误，元素个数超出 int 时返回错误。
func RowMajorStrides(shape []int) ([]int, error) {
	panic("not implemented")
}

// Offset returns the storage position, in elements, of the element at index in a
// tensor with the given shape and strides: the sum of index[k]·strides[k]. Strides
// may be anything (including 0); they are not required to be row-major.
//
// It returns an error if strides or index do not have one entry per dimension of
// shape, or if some index[k] lies outside [0, shape[k]).
//
// 中文：返回下标 index 处的元素在存储中的位置（以元素计）：index[k]·strides[k] 之和；
// 步长可以是任意值（包括 0）。strides 或 index 不是每维一项，
// 或某个 index[k] 不在 [0, shape[k]) 内时返回错误。
func Offset(shape, strides, index []int) (int, error) {
	panic("not implemented")
}
*/

/*nb:raw exercise-check
!cd "$MEMLAB_REPO" && go run ./cmd/memlab exercises check 1 --not-started-ok --student "$MEMLAB_WORKBOOK/exercises/01-strides"
*/

/*md
## 2 · Is it contiguous? (§2.1)

The task, in parts: [exercises/02-contiguous/README.md](../../exercises/02-contiguous/README.md); hints: `go run ./cmd/memlab exercises hint 2`.
*/

/*md:zh-CN
## 2 · 是否连续？（§2.1）

题目分几个部分，见 [exercises/02-contiguous/README.md](../../exercises/02-contiguous/README.md)；提示：`go run ./cmd/memlab exercises hint 2`。
*/

/*nb:raw
%%writefile ${MEMLAB_WORKBOOK}/exercises/02-contiguous/contiguous.go
// Package contiguous is exercise 02 of the memlab course: deciding whether shape
// and strides describe a contiguous tensor, and the transpose that makes one
// non-contiguous without moving memory. See README.md.
//
// 中文：练习 02：判断形状和步长描述的张量是否连续，以及不移动内存就让张量变得不连续的转置。
// 题目见 README.zh-CN.md。
package contiguous

// IsContiguous reports whether a tensor with the given shape and strides (in
// elements) is contiguous by PyTorch's rule: true if it has no elements; otherwise,
// walking from the last dimension to the first and ignoring dimensions of size 1,
// each stride equals the product of the sizes of the dimensions after it.
//
// It returns an error if shape and strides differ in length or a size is negative.
//
// 中文：按 PyTorch 的规则判断是否连续：没有元素时为 true；否则从最后一维到第一维、
// 跳过大小为 1 的维，每个步长都等于它后面各维大小之积。形状与步长长度不同或有负的大小时返回错误。
func IsContiguous(shape, strides []int) (bool, error) {
	panic("not implemented")
}

// Transpose returns the shape and strides of the tensor with dimensions dim0 and
// dim1 swapped, as PyTorch's transpose does: no memory moves, only the two sizes and
// the two strides trade places. Negative dimensions count from the end (-1 is the
// last); a scalar accepts 0 and -1. The input slices are not modified.
//
// It returns an error if shape and strides differ in length or a dimension is out
// of range.
//
// 中文：返回交换 dim0 与 dim1 之后的形状和步长（同 PyTorch 的 transpose）：
// 内存不动，只交换两个大小和两个步长。负维度从末尾数起（-1 是最后一维）；
// 标量接受 0 和 -1。不修改传入的切片。长度不同或维度越界时返回错误。
func Transpose(shape, strides []int, dim0, dim1 int) (newShape, newStrides []int, err error) {
	panic("not implemented")
}
*/

/*nb:raw exercise-check
!cd "$MEMLAB_REPO" && go run ./cmd/memlab exercises check 2 --not-started-ok --student "$MEMLAB_WORKBOOK/exercises/02-contiguous"
*/

/*md
## 3 · When is `view` possible? (§2.1)

The task, in parts: [exercises/03-view/README.md](../../exercises/03-view/README.md); hints: `go run ./cmd/memlab exercises hint 3`.
*/

/*md:zh-CN
## 3 · 什么时候能用 `view`？（§2.1）

题目分几个部分，见 [exercises/03-view/README.md](../../exercises/03-view/README.md)；提示：`go run ./cmd/memlab exercises hint 3`。
*/

/*nb:raw
%%writefile ${MEMLAB_WORKBOOK}/exercises/03-view/view.go
// Package view is exercise 03 of the memlab course: PyTorch's rule for when a
// tensor can be viewed with a new shape without copying, and the strides of that
// view. See README.md.
//
// 中文：练习 03：PyTorch 判断张量能否不拷贝地换成新形状（view）
// 的规则，以及这个视图的步长。题目见 README.zh-CN.md。
package view

import "errors"

// ErrNotViewable is returned (wrapped) by ViewStrides when the elements of the
// tensor cannot be described by any strides for the new shape, so view() must fail
// and reshape() would copy.
var ErrNotViewable = errors.New("view: view size is not compatible with input tensor's size and stride; use reshape instead")

// InferShape resolves shape against a tensor of numel elements, as view and reshape
// do: at most one entry may be -1, and it becomes the size that makes the product of
// the shape equal numel. The result is a new slice; shape is not modified.
//
// It returns an error if more than one entry is -1, if an entry is below -1, if the
// -1 is ambiguous (the other sizes multiply to 0), or if no size makes the element
// count equal numel.
//
// 中文：像 view/reshape 那样按 numel 个元素解析 shape：
// 最多一项为 -1，它取使乘积等于 numel 的大小。返回新切片，不修改 shape。
// 多于一个 -1、有小于 -1 的项、-1 有歧义（其余乘积为 0）或元素个数对不上时返回错误。
func InferShape(numel int, shape []int) ([]int, error) {
	panic("not implemented")
}

// ViewStrides returns the strides of the view of a tensor (shape, strides) with the
// fully specified newShape, following ATen's computeStride: the old dimensions form
// chunks of mutually contiguous dimensions, the new shape must split into chunks of
// the same element counts, and within a chunk the new strides are row-major scaled
// by the stride of the chunk's last old dimension.
//
// A scalar (empty shape) views as strides of all ones. A tensor with no elements
// keeps its strides if newShape equals shape, and otherwise gets row-major strides
// (sizes of 0 counted as 1).
//
// It returns an error wrapping ErrNotViewable if no strides exist, and a different
// error if shape and strides differ in length, a size is negative, or newShape
// holds a different number of elements than shape.
//
// 中文：按 ATen 的 computeStride 返回视图的步长：原来的各维组成彼此连续的组块，
// 新形状必须分成元素个数相同的组块，组块内新步长按行优先排列并乘上该组块最后一维的步长。
// 标量的 view 步长全为 1；没有元素的张量形状不变则保留步长，否则用行优先步长（0 按 1 计）。
// 不存在步长时返回包装 ErrNotViewable 的错误；长度不同、大小为负或元素个数不同时返回其他错误。
func ViewStrides(shape, strides, newShape []int) ([]int, error) {
	panic("not implemented")
}
*/

/*nb:raw exercise-check
!cd "$MEMLAB_REPO" && go run ./cmd/memlab exercises check 3 --not-started-ok --student "$MEMLAB_WORKBOOK/exercises/03-view"
*/

/*md
## 4 · Rounding a request: `round_size` (§2.2)

The task, in parts: [exercises/04-round-size/README.md](../../exercises/04-round-size/README.md); hints: `go run ./cmd/memlab exercises hint 4`.
*/

/*md:zh-CN
## 4 · 请求大小的取整：`round_size`（§2.2）

题目分几个部分，见 [exercises/04-round-size/README.md](../../exercises/04-round-size/README.md)；提示：`go run ./cmd/memlab exercises hint 4`。
*/

/*nb:raw
%%writefile ${MEMLAB_WORKBOOK}/exercises/04-round-size/round.go
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
*/

/*nb:raw exercise-check
!cd "$MEMLAB_REPO" && go run ./cmd/memlab exercises check 4 --not-started-ok --student "$MEMLAB_WORKBOOK/exercises/04-round-size"
*/

/*md
## 5 · Which pool, and how big a segment? (§2.2)

The task, in parts: [exercises/05-segment-size/README.md](../../exercises/05-segment-size/README.md); hints: `go run ./cmd/memlab exercises hint 5`.
*/

/*md:zh-CN
## 5 · 哪个池，段有多大？（§2.2）

题目分几个部分，见 [exercises/05-segment-size/README.md](../../exercises/05-segment-size/README.md)；提示：`go run ./cmd/memlab exercises hint 5`。
*/

/*nb:raw
%%writefile ${MEMLAB_WORKBOOK}/exercises/05-segment-size/segment.go
package segment

// PoolFor returns the pool a rounded request of size bytes is served from: the
// small pool for sizes up to and including SmallSize (1 MiB), the large pool above.
//
// It returns an error if size is not a rounded size (a multiple of 512, at least 512).
//
// 中文：返回取整后 size 字节的请求由哪个池满足：不超过 SmallSize（1 MiB，
// 含）进小块池，更大的进大块池。size 不是取整后的大小（512 的倍数，至少 512）
// 时返回错误。
func PoolFor(size uint64) (Pool, error) {
	panic("not implemented")
}

// SegmentSize returns the size of the segment (one cudaMalloc) the allocator makes
// for a rounded request of size bytes when no cached block fits: SmallBuffer (2 MiB)
// for sizes up to 1 MiB, LargeBuffer (20 MiB) for sizes below MinLargeAlloc (10 MiB),
// and otherwise size rounded up to a multiple of RoundLarge (2 MiB).
//
// It returns an error if size is not a rounded size (a multiple of 512, at least 512).
//
// 中文：返回没有缓存块装得下时，分配器为取整后 size 字节的请求新建的段（一次 cudaMalloc）
// 的大小：不超过 1 MiB 用 SmallBuffer（2 MiB），小于 MinLargeAlloc（10 MiB）
// 用 LargeBuffer（20 MiB），否则把 size 向上取整到 RoundLarge（2 MiB）
// 的倍数。size 不是取整后的大小时返回错误。
func SegmentSize(size uint64) (uint64, error) {
	panic("not implemented")
}
*/

/*nb:raw exercise-check
!cd "$MEMLAB_REPO" && go run ./cmd/memlab exercises check 5 --not-started-ok --student "$MEMLAB_WORKBOOK/exercises/05-segment-size"
*/

/*md
## 6 · Best fit, and the oversize rules (§2.2)

The task, in parts: [exercises/06-best-fit/README.md](../../exercises/06-best-fit/README.md); hints: `go run ./cmd/memlab exercises hint 6`.
*/

/*md:zh-CN
## 6 · 最佳适配与超大块规则（§2.2）

题目分几个部分，见 [exercises/06-best-fit/README.md](../../exercises/06-best-fit/README.md)；提示：`go run ./cmd/memlab exercises hint 6`。
*/

/*nb:raw
%%writefile ${MEMLAB_WORKBOOK}/exercises/06-best-fit/bestfit.go
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
*/

/*nb:raw exercise-check
!cd "$MEMLAB_REPO" && go run ./cmd/memlab exercises check 6 --not-started-ok --student "$MEMLAB_WORKBOOK/exercises/06-best-fit"
*/

/*md
## 7 · Splitting a block (§2.2)

The task, in parts: [exercises/07-split/README.md](../../exercises/07-split/README.md); hints: `go run ./cmd/memlab exercises hint 7`.
*/

/*md:zh-CN
## 7 · 分割一个块（§2.2）

题目分几个部分，见 [exercises/07-split/README.md](../../exercises/07-split/README.md)；提示：`go run ./cmd/memlab exercises hint 7`。
*/

/*nb:raw
%%writefile ${MEMLAB_WORKBOOK}/exercises/07-split/split.go
package split

// ShouldSplit reports whether allocating size bytes from a free block of blockSize
// bytes in pool splits the block (should_split): in the small pool if at least 512
// bytes remain; in the large pool if size is below cfg.MaxSplitSize (0 = unlimited)
// and more than 1 MiB remains. size ≤ blockSize is a precondition.
//
// 中文：报告从 blockSize 字节的块分配 size 字节时是否分割：小块池剩下至少 512 字节就分割；
// 大块池只在 size 小于 cfg.MaxSplitSize（0 表示不限）
// 且剩下的严格多于 1 MiB 时才分割。
func ShouldSplit(pool Pool, blockSize, size uint64, cfg Config) bool {
	panic("not implemented")
}

// Allocate allocates size bytes from the free block segment[i] of a segment whose
// blocks are listed in address order, and returns the new list of blocks. If
// ShouldSplit says so, the allocation takes the block's first size bytes and a free
// block with the rest follows it; otherwise the whole block becomes allocated.
// segment is not modified.
//
// It returns an error if i is out of range, segment[i] is allocated, size is not a
// rounded size (a multiple of 512, at least 512) or size exceeds the block.
//
// 中文：从段的空闲块 i 分配 size 字节，返回新的块列表：分割时分配占低地址，
// 空闲的剩余部分紧跟其后；不分割时整个块变成已分配（多余部分也算）。不修改 segment。
// i 越界、块 i 已分配、size 不是取整后的大小或比块大时返回错误。
func Allocate(segment []Block, i int, size uint64, pool Pool, cfg Config) ([]Block, error) {
	panic("not implemented")
}
*/

/*nb:raw exercise-check
!cd "$MEMLAB_REPO" && go run ./cmd/memlab exercises check 7 --not-started-ok --student "$MEMLAB_WORKBOOK/exercises/07-split"
*/

/*md
## 8 · Freeing and merging (§2.2)

The task, in parts: [exercises/08-merge/README.md](../../exercises/08-merge/README.md); hints: `go run ./cmd/memlab exercises hint 8`.
*/

/*md:zh-CN
## 8 · 释放与合并（§2.2）

题目分几个部分，见 [exercises/08-merge/README.md](../../exercises/08-merge/README.md)；提示：`go run ./cmd/memlab exercises hint 8`。
*/

/*nb:raw
%%writefile ${MEMLAB_WORKBOOK}/exercises/08-merge/merge.go
package merge

// Free frees the allocated block that starts at addr in segment, whose blocks are
// listed in address order, merges it with its previous and next blocks if they are
// free, and returns the new list of blocks. segment is not modified.
//
// It returns an error if no block starts at addr or the block there is already free.
//
// 中文：释放从 addr 开始的已分配块，把它和空闲的前一个和/或后一个块合并，
// 返回新的块列表；合并后的块保留最低的地址。不修改 segment。addr 不是某个块的起点，
// 或那里的块已经空闲（重复释放）时返回错误（不返回块）。
func Free(segment []Block, addr uint64) ([]Block, error) {
	panic("not implemented")
}

// Releasable reports whether empty_cache could return the segment to CUDA: it
// consists of exactly one block, and that block is free.
//
// 中文：报告 empty_cache() 能否释放这个段：它只有一个块，而且是空闲的。
func Releasable(segment []Block) bool {
	panic("not implemented")
}
*/

/*nb:raw exercise-check
!cd "$MEMLAB_REPO" && go run ./cmd/memlab exercises check 8 --not-started-ok --student "$MEMLAB_WORKBOOK/exercises/08-merge"
*/

/*md
## 9 · `memory_allocated` vs `memory_reserved` (§2.4)

The task, in parts: [exercises/09-stats/README.md](../../exercises/09-stats/README.md); hints: `go run ./cmd/memlab exercises hint 9`.
*/

/*md:zh-CN
## 9 · `memory_allocated` 与 `memory_reserved`（§2.4）

题目分几个部分，见 [exercises/09-stats/README.md](../../exercises/09-stats/README.md)；提示：`go run ./cmd/memlab exercises hint 9`。
*/

/*nb:raw
%%writefile ${MEMLAB_WORKBOOK}/exercises/09-stats/track.go
package stats

// Increase adds n to Current and Allocated and raises Peak to Current if Current
// is now higher.
//
// 中文：current 和 allocated 增加 n；current 更高时 peak 跟上。
func (s *Stat) Increase(n uint64) {
	panic("not implemented")
}

// Decrease subtracts n from Current and adds it to Freed. It returns an error, and
// leaves s unchanged, if n exceeds Current.
//
// 中文：current 减少 n，freed 增加 n。n 大于 current 时返回错误，
// Stat 不变。
func (s *Stat) Decrease(n uint64) error {
	panic("not implemented")
}

// ResetPeak sets Peak to Current, as reset_peak_memory_stats does.
//
// 中文：把 peak 设为 current（reset_peak_memory_stats）。
func (s *Stat) ResetPeak() {
	panic("not implemented")
}

// Apply updates the statistics for one event: SegmentAlloc and SegmentFree move
// Reserved by e.Size and Segments by 1; Alloc and Free move Allocated by e.Size,
// Requested by e.Requested and Allocations by 1.
//
// It returns an error, and changes nothing, if the event is impossible: an unknown
// kind, a zero Size, Requested above Size (or zero) for Alloc/Free, a decrease below
// zero, allocated bytes above reserved bytes afterwards.
//
// 中文：把一个分配器事件重放进五个 Stat（Allocated、Requested、
// Reserved、Allocations、Segments）。事件不可能发生时（释放多于已有、
// 已分配会超过已预留、已预留会低于已分配、请求比块大、大小为零、未知类型）返回错误，
// 什么都不改。
func (t *Tracker) Apply(e Event) error {
	panic("not implemented")
}
*/

/*nb:raw exercise-check
!cd "$MEMLAB_REPO" && go run ./cmd/memlab exercises check 9 --not-started-ok --student "$MEMLAB_WORKBOOK/exercises/09-stats"
*/

/*md
## 10 · Measuring fragmentation (§2.3)

The task, in parts: [exercises/10-fragmentation/README.md](../../exercises/10-fragmentation/README.md); hints: `go run ./cmd/memlab exercises hint 10`.
*/

/*md:zh-CN
## 10 · 度量碎片化（§2.3）

题目分几个部分，见 [exercises/10-fragmentation/README.md](../../exercises/10-fragmentation/README.md)；提示：`go run ./cmd/memlab exercises hint 10`。
*/

/*nb:raw
%%writefile ${MEMLAB_WORKBOOK}/exercises/10-fragmentation/fragmentation.go
package fragmentation

// Summarize returns the total free bytes, the largest free block and the
// fragmentation 1 − largest/total of segments, each a list of blocks in address
// order. With no free memory every field is 0.
//
// 中文：返回各段空闲块的总字节数 TotalFree、最大的空闲块 LargestFree，
// 以及 Fragmentation = 1 − LargestFree/TotalFree（没有空闲时为 0）。
func Summarize(segments [][]Block) Summary {
	panic("not implemented")
}

// Breakdown splits the bytes of segments into allocated bytes, bytes of segments
// with no allocated block (releasable by empty_cache), and free bytes in segments
// that also hold an allocated block (non-releasable, with their block count).
//
// 中文：像 memory_summary() 那样把已预留的字节分成：Allocated（已分配块）、
// Releasable（整段只有一个空闲块的段）、NonReleasable（同时有已分配块的段里的空闲字节，
// 即 inactive_split_bytes）及这样的空闲块个数 NonReleasableBlocks。
func Breakdown(segments [][]Block) Split {
	panic("not implemented")
}
*/

/*nb:raw exercise-check
!cd "$MEMLAB_REPO" && go run ./cmd/memlab exercises check 10 --not-started-ok --student "$MEMLAB_WORKBOOK/exercises/10-fragmentation"
*/

/*md
## 11 · What a view keeps alive (§2.1)

The task, in parts: [exercises/11-views-keep-alive/README.md](../../exercises/11-views-keep-alive/README.md); hints: `go run ./cmd/memlab exercises hint 11`.
*/

/*md:zh-CN
## 11 · 视图让什么一直活着（§2.1）

题目分几个部分，见 [exercises/11-views-keep-alive/README.md](../../exercises/11-views-keep-alive/README.md)；提示：`go run ./cmd/memlab exercises hint 11`。
*/

/*nb:raw
%%writefile ${MEMLAB_WORKBOOK}/exercises/11-views-keep-alive/keepalive.go
package keepalive

// Span returns the byte range [lo, hi) of the storage that v can touch, for elements
// of elemSize bytes: lo = Offset·elemSize and hi = (Offset + Σ (Shape[k]−1)·Strides[k]
// + 1)·elemSize. A view with no elements has lo == hi == Offset·elemSize.
//
// It returns an error if elemSize < 1, Shape and Strides differ in length, or the
// offset, a size or a stride is negative.
//
// 中文：返回视图能碰到的存储字节范围 [lo, hi)：从第一个元素到最后一个元素之后；
// 没有元素的视图 lo == hi == Offset·elemSize。负的偏移、
// 大小或步长，形状与步长长度不同，或 elemSize < 1 时返回错误。
func Span(v View, elemSize int) (lo, hi int, err error) {
	panic("not implemented")
}

// KeptAlive reports the bytes that views of a storage of storageBytes bytes hold
// (the whole storage if there is any view, even an empty one), the bytes inside the
// union of their spans, and the difference.
//
// It returns an error naming the view if a view is invalid (see Span) or reaches
// past the end of the storage, and an error if storageBytes is negative.
//
// 中文：报告一个 storageBytes 字节的存储的一组存活视图的代价：Held（至少有一个视图时为整个存储，
// 否则为 0）、Reachable（各视图范围并集的字节数）、Unreachable = Held − Reachable。
// 某个视图超出存储末尾时返回写明该视图的错误。
func KeptAlive(storageBytes, elemSize int, views []View) (Report, error) {
	panic("not implemented")
}
*/

/*nb:raw exercise-check
!cd "$MEMLAB_REPO" && go run ./cmd/memlab exercises check 11 --not-started-ok --student "$MEMLAB_WORKBOOK/exercises/11-views-keep-alive"
*/

/*md
## 12 · A fixed-shape tensor pool (§4.3)

The task, in parts: [exercises/12-tensor-pool/README.md](../../exercises/12-tensor-pool/README.md); hints: `go run ./cmd/memlab exercises hint 12`.
*/

/*md:zh-CN
## 12 · 固定形状的张量池（§4.3）

题目分几个部分，见 [exercises/12-tensor-pool/README.md](../../exercises/12-tensor-pool/README.md)；提示：`go run ./cmd/memlab exercises hint 12`。
*/

/*nb:raw
%%writefile ${MEMLAB_WORKBOOK}/exercises/12-tensor-pool/tensorpool.go
package tensorpool

// Buffer is one buffer of a Pool. Data holds its bytes.
type Buffer struct {
	Data []byte
	// Add the fields you need, for example the pool the buffer came from.
}

// Pool hands out buffers of one shape and element size, at most capacity of them
// at a time, reusing returned buffers most-recently-returned first. It is safe for
// concurrent use.
type Pool struct {
	// Add the fields you need.
}

// NewPool returns a pool of buffers of numel(shape)·elemSize bytes, of which it
// creates at most capacity.
//
// It returns an error if a size in shape is negative, elemSize < 1 or capacity < 1.
//
// 中文：创建一个池：每个缓冲区的 Data 有 numel(shape)·elemSize 字节，
// 最多 capacity 个。大小为负、elemSize < 1 或 capacity < 1 时返回错误。
func NewPool(shape []int, elemSize, capacity int) (*Pool, error) {
	panic("not implemented")
}

// Get returns the most recently returned idle buffer, or a new one if none is idle
// and fewer than capacity exist. A reused buffer keeps its old contents.
//
// It returns an error wrapping ErrExhausted if capacity buffers are all in use.
//
// 中文：返回一个空闲缓冲区（最近归还的那个，后进先出），没有则新建一个，最多 capacity 个；
// 全部在用时返回包装 ErrExhausted 的错误。可并发调用。
func (p *Pool) Get() (*Buffer, error) {
	panic("not implemented")
}

// Put returns b to the pool.
//
// It returns an error, and changes nothing, if b is nil, came from another pool,
// or is already in the pool.
//
// 中文：把 b 还给池，内容不清零。b 为 nil、来自另一个池或已经在池里（重复归还）
// 时返回错误，什么都不改。可并发调用。
func (p *Pool) Put(b *Buffer) error {
	panic("not implemented")
}

// Stats returns the pool's counters.
//
// 中文：报告 Created、Reused、InUse 和 Idle。
func (p *Pool) Stats() Stats {
	panic("not implemented")
}
*/

/*nb:raw exercise-check
!cd "$MEMLAB_REPO" && go run ./cmd/memlab exercises check 12 --not-started-ok --student "$MEMLAB_WORKBOOK/exercises/12-tensor-pool"
*/

/*md
## 13 · A paged KV-cache block table (§4.3)

The task, in parts: [exercises/13-kv-block-table/README.md](../../exercises/13-kv-block-table/README.md); hints: `go run ./cmd/memlab exercises hint 13`.
*/

/*md:zh-CN
## 13 · 分页 KV 缓存的块表（§4.3）

题目分几个部分，见 [exercises/13-kv-block-table/README.md](../../exercises/13-kv-block-table/README.md)；提示：`go run ./cmd/memlab exercises hint 13`。
*/

/*nb:raw
%%writefile ${MEMLAB_WORKBOOK}/exercises/13-kv-block-table/table.go
package kvcache

// BlockTable maps the tokens of sequences to physical KV-cache blocks of a fixed
// number of tokens, shared between sequences with reference counts.
type BlockTable struct {
	// Add the fields you need.
}

// NewBlockTable returns a table over physical blocks 0 … numBlocks−1 of blockSize
// tokens each, all free.
//
// It returns an error if numBlocks or blockSize is less than 1.
//
// 中文：创建一个有 numBlocks 个物理块（全部空闲）、每块 blockSize 个词元的块表。
// 两者都至少为 1，否则返回错误。
func NewBlockTable(numBlocks, blockSize int) (*BlockTable, error) {
	panic("not implemented")
}

// Append adds tokens to sequence seq, creating it if it does not exist. It fills the
// sequence's last block before taking new blocks, lowest free id first. If the last
// block is shared with another sequence and partly filled, Append first replaces it
// with a new block and returns a Copy for the caller to perform; otherwise the
// result is empty.
//
// It returns an error if tokens < 1, and an error wrapping ErrOutOfBlocks if too
// few blocks are free; either way nothing changes.
//
// 中文：给序列 seq 追加 tokens 个词元（第一次用到时创建它）：
// 先填满最后一块，新块按 id 从小到大取；最后一块共享且未填满时先写时复制，
// 返回需要的拷贝。空闲块不够时返回包装 ErrOutOfBlocks 的错误，
// 什么都不改。
func (bt *BlockTable) Append(seq, tokens int) ([]Copy, error) {
	panic("not implemented")
}

// Blocks returns a copy of the block table of seq: its physical blocks in logical
// order. It returns nil for an unknown sequence.
//
// 中文：返回序列的块表的拷贝；未知序列返回 nil。
func (bt *BlockTable) Blocks(seq int) []int {
	panic("not implemented")
}

// Len returns the number of tokens of seq, 0 for an unknown sequence.
//
// 中文：返回序列的词元数；未知序列返回 0。
func (bt *BlockTable) Len(seq int) int {
	panic("not implemented")
}

// NumFree returns the number of physical blocks no sequence uses.
//
// 中文：返回空闲的物理块数。
func (bt *BlockTable) NumFree() int {
	panic("not implemented")
}

// Slot returns the physical block and the offset within it of token pos of seq.
//
// It returns an error if seq is unknown or pos is outside [0, Len(seq)).
//
// 中文：返回序列第 pos 个词元所在的物理块和块内偏移。位置越界或序列未知时返回错误。
func (bt *BlockTable) Slot(seq, pos int) (block, offset int, err error) {
	panic("not implemented")
}

// Fork creates sequence child sharing all blocks and the length of parent.
//
// It returns an error if parent does not exist or child already exists.
//
// 中文：创建 child，共享 parent 的所有块（引用计数加一）和长度。
// parent 不存在、child 已存在或二者相同时返回错误。
func (bt *BlockTable) Fork(parent, child int) error {
	panic("not implemented")
}

// Free removes seq, returning each of its blocks to the free list when no other
// sequence shares it.
//
// It returns an error if seq does not exist.
//
// 中文：把序列的块的引用计数减一，降到 0 的块回到空闲列表，然后删除这个序列。
// 序列不存在时返回错误。
func (bt *BlockTable) Free(seq int) error {
	panic("not implemented")
}
*/

/*nb:raw exercise-check
!cd "$MEMLAB_REPO" && go run ./cmd/memlab exercises check 13 --not-started-ok --student "$MEMLAB_WORKBOOK/exercises/13-kv-block-table"
*/

/*md
## 14 · Catching in-place changes with version counters (§4.1)

The task, in parts: [exercises/14-version-counter/README.md](../../exercises/14-version-counter/README.md); hints: `go run ./cmd/memlab exercises hint 14`.
*/

/*md:zh-CN
## 14 · 用版本计数器捕捉原地修改（§4.1）

题目分几个部分，见 [exercises/14-version-counter/README.md](../../exercises/14-version-counter/README.md)；提示：`go run ./cmd/memlab exercises hint 14`。
*/

/*nb:raw
%%writefile ${MEMLAB_WORKBOOK}/exercises/14-version-counter/counter.go
package version

// Tensor is a tensor as far as version counting is concerned: a name and a version
// counter that it may share with other tensors of the same storage.
type Tensor struct {
	Name string
	// Add the fields you need.
}

// NewTensor returns a new tensor with its own version counter, at version 0.
//
// 中文：返回一个名为 name 的新张量，版本 0，有自己的计数器。
func NewTensor(name string) *Tensor {
	panic("not implemented")
}

// View returns a view of t named name: it shares t's storage and version counter.
//
// 中文：返回 t 的一个视图，与 t 共享版本计数器。
func (t *Tensor) View(name string) *Tensor {
	panic("not implemented")
}

// Detach returns t.detach() named name: it shares t's storage and, as in PyTorch,
// t's version counter.
//
// 中文：返回 t.detach()：共享内存，也共享版本计数器。
func (t *Tensor) Detach(name string) *Tensor {
	panic("not implemented")
}

// Data returns t.data named name: it shares t's storage but has a new version
// counter at 0, so in-place changes through it are invisible to t's counter.
//
// 中文：返回 t.data：共享内存，但有一个从 0 开始的新计数器。
func (t *Tensor) Data(name string) *Tensor {
	panic("not implemented")
}

// Clone returns a copy of t named name, with its own version counter at 0.
//
// 中文：返回 t 的克隆：新内存，新计数器从 0 开始。
func (t *Tensor) Clone(name string) *Tensor {
	panic("not implemented")
}

// InPlace records an in-place operation on t: its version counter goes up by one.
// It is safe for concurrent use.
//
// 中文：记录对 t 的一次原地操作：计数器加一。可并发调用。
func (t *Tensor) InPlace() {
	panic("not implemented")
}

// Version returns the current value of t's version counter (PyTorch's t._version).
// It is safe for concurrent use.
//
// 中文：返回 t 的计数器当前的值（PyTorch 的 t._version）。
// 可并发调用。
func (t *Tensor) Version() uint64 {
	panic("not implemented")
}

// Saved is a tensor saved for the backward pass together with the version it had.
// The zero value holds nothing.
type Saved struct {
	// Add the fields you need.
}

// Save records t and its current version, as ctx.save_for_backward does.
//
// 中文：保存 t 及其当前版本（ctx.save_for_backward）。
func Save(t *Tensor) Saved {
	panic("not implemented")
}

// Unpack returns the saved tensor. It returns an error wrapping ErrModifiedInPlace,
// naming the tensor with its current and saved versions, if the version changed
// since Save, and an error if s holds nothing.
//
// 中文：返回保存的张量；计数器此后变过时返回包装 ErrModifiedInPlace 的错误，
// 信息写明张量和两个版本。零值的 Saved 也返回错误。
func (s Saved) Unpack() (*Tensor, error) {
	panic("not implemented")
}
*/

/*nb:raw exercise-check
!cd "$MEMLAB_REPO" && go run ./cmd/memlab exercises check 14 --not-started-ok --student "$MEMLAB_WORKBOOK/exercises/14-version-counter"
*/

/*md
## 15 · Fitting a workload in its budget (§2.3)

Part A: return allocator settings (`PYTORCH_CUDA_ALLOC_CONF` syntax) under which a fragmenting
workload fits in the 1 GiB card. Part B: run multi-scale steps from **one** preallocated buffer.
The task in full: [exercises/15-fit-the-budget/README.md](../../exercises/15-fit-the-budget/README.md).
*/

/*md:zh-CN
## 15 · 在预算内装下一个工作负载（§2.3）

A 部分：返回一组分配器设置（`PYTORCH_CUDA_ALLOC_CONF` 的写法），让一个会制造碎片的工作负载装进 1 GiB 的卡。B 部分：多尺度的每一步都只用**一块**预先分配好的缓冲区——正是第 2.3 节那句「改成预分配固定大小的缓冲区」。完整题目见 [exercises/15-fit-the-budget/README.md](../../exercises/15-fit-the-budget/README.md)。
*/

/*nb:raw
%%writefile ${MEMLAB_WORKBOOK}/exercises/15-fit-the-budget/budget.go
package budget

import "memlab.dev/memlab/tensor"

// AllocConf returns the allocator settings, in PYTORCH_CUDA_ALLOC_CONF syntax
// (such as "max_split_size_mb:512"), under which the fragmenting workload of
// part A fits in its 1 GiB card. "" means PyTorch's defaults — which run out of
// memory.
//
// 中文：返回 PYTORCH_CUDA_ALLOC_CONF 语法的分配器设置，
// 使 README 里的工作负载能装进 1 GiB 的卡。
func AllocConf() string {
	panic("not implemented")
}

// RunSteps runs one step per entry of sizes. Step i needs a contiguous float32
// feature map of exactly sizes[i] elements (a 1-D tensor on dev), which it
// receives through step(i, featureMap); RunSteps owns the memory and must
// release everything it allocated before it returns. It stops at the first
// error (of the allocator or of step) and returns it.
//
// Part B's rule: the whole run may ask the device for memory once — one
// buffer, allocated before the first step, serves every step.
//
// 中文：对每个 i 调用 step(i, featureMap)，featureMap 是恰好 sizes[i] 个元素的连续 float32 张量；
// 整个运行只向设备要一次显存，返回之前在每条路径上都释放一切（某一步失败时返回它的错误）。
// 小于 1 的大小是错误。
func RunSteps(dev tensor.Device, sizes []int, step func(i int, featureMap *tensor.Tensor) error) error {
	panic("not implemented")
}
*/

/*nb:raw exercise-check
!cd "$MEMLAB_REPO" && go run ./cmd/memlab exercises check 15 --not-started-ok --student "$MEMLAB_WORKBOOK/exercises/15-fit-the-budget"
*/

/*md
## 16 · The leak check, and two tenants on one card (§2.4)

Part A: the chapter's leak-check idiom on the allocator. Part B: a training loop whose leak
check reports zero. Part C: cap two tenants with `SetPerProcessMemoryFraction` so neither starves.
The task in full: [exercises/16-leak-check/README.md](../../exercises/16-leak-check/README.md).
*/

/*md:zh-CN
## 16 · 泄漏检查，以及一张卡上的两个租户（§2.4）

A 部分：在分配器上写出本章的泄漏检查套路。B 部分：写一个泄漏检查结果为零的训练循环。C 部分：用 `SetPerProcessMemoryFraction` 给两个共用一张卡的租户设上限，谁也饿不死谁。完整题目见 [exercises/16-leak-check/README.md](../../exercises/16-leak-check/README.md)。
*/

/*nb:raw
%%writefile ${MEMLAB_WORKBOOK}/exercises/16-leak-check/leak.go
package leak

import (
	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/tensor"
)

// LeakCheck is chapter 2.4's leak-check idiom on the allocator a: reset the peak
// statistics, note memory_allocated, run f, empty the cache, and return how many
// bytes are still allocated beyond the start (leaked) and how far allocated
// memory rose above the start while f ran (peak). f's error is returned as is,
// with both numbers still measured.
//
// 中文：按教材的顺序运行 f 并返回 leaked（之后减之前的已分配）和 peak（f 运行期间已分配比开始时最多高出多少），
// 检查之前的分配和峰值不算；f 的错误原样返回。
func LeakCheck(a *allocator.Allocator, f func() error) (leaked, peak int64, err error) {
	panic("not implemented")
}

// TrainLoop runs steps training steps on dev and returns each step's loss. The
// model is one weight w = Randn(dev, seed 1, float32, [64, 64]); step s draws
// x = Randn(dev, seed 100+s, float32, [32, 64]) and its loss is the sum of all
// elements of relu(x @ w). Every tensor it makes is released before it returns:
// the leak check reports zero.
//
// 中文：运行 README 里的训练循环 steps 步，返回同样的 loss，
// 处理每个错误，且不泄漏任何显存。
func TrainLoop(dev tensor.Device, steps int) ([]float64, error) {
	panic("not implemented")
}

// CapTenants caps two tenants that share one card, each with its own allocator,
// with set_per_process_memory_fraction, so that neither can starve the other:
// whatever one of them allocates, the other can still get at least 416 MiB of
// the 1 GiB card the tests use (896 MiB of which are free: the rest is the CUDA
// context).
//
// 中文：用 SetPerProcessMemoryFraction 给两个租户设上限，
// 使任何一个贪心时仍能拿到至少 384 MiB，另一个之后还能分配 416 MiB。
func CapTenants(a, b *allocator.Allocator) error {
	panic("not implemented")
}
*/

/*nb:raw exercise-check
!cd "$MEMLAB_REPO" && go run ./cmd/memlab exercises check 16 --not-started-ok --student "$MEMLAB_WORKBOOK/exercises/16-leak-check"
*/

/*md
## 17 · An in-place block, without the version-counter error (§4.1)

Make `relu((x + b) * s) + x` in place where it is safe: one allocation for inference, two while
a tape watches `x` (no version-counter error), and measure what it saves.
The task in full: [exercises/17-inplace-block/README.md](../../exercises/17-inplace-block/README.md).
*/

/*md:zh-CN
## 17 · 原地操作的模块，且不触发版本计数器错误（§4.1）

在安全的地方把 `relu((x + b) * s) + x` 改成原地操作（in-place）：推理时只分配一次；有计算图（tape）记录 `x` 时最多分配两次，且不能触发版本计数器（version counter）错误；最后量一量省下了多少。完整题目见 [exercises/17-inplace-block/README.md](../../exercises/17-inplace-block/README.md)。
*/

/*nb:raw
%%writefile ${MEMLAB_WORKBOOK}/exercises/17-inplace-block/block.go
package inplace

import (
	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/tensor"
)

// Block computes what NaiveBlock computes, relu((x + b) * s) + x, for inference:
// no tape watches x. It allocates at most one new tensor (the result) and leaves
// x unchanged.
//
// 中文：计算 relu((x + b) * s) + x，只分配一次；x 不变。
func Block(x, b *tensor.Tensor, s float64) (*tensor.Tensor, error) {
	panic("not implemented")
}

// BlockTrain computes the same while a tape (autograd) watches x: the tape's
// saved tensors must still be intact afterwards (no version-counter error in
// Backward), x is unchanged, and the block allocates at most two tensors.
//
// 中文：在 x 被计算图观察时计算同样的结果，最多分配两次，且计算图保存的张量完好（tape.CheckSaved() 不失败）；
// x 不变。
func BlockTrain(x, b *tensor.Tensor, s float64) (*tensor.Tensor, error) {
	panic("not implemented")
}

// Saving measures what Block saves: it runs NaiveBlock and then Block on the
// same inputs, each from a fresh peak (reset_peak_memory_stats), and returns how
// far memory_allocated rose above its starting value during each. Both results
// are released before it returns.
//
// 中文：依次运行 NaiveBlock 和 Block，各自从刚重置的峰值开始，
// 返回每次 memory_allocated 比开始时最多高出多少；两个结果都释放。
func Saving(a *allocator.Allocator, x, b *tensor.Tensor, s float64) (naive, mine int64, err error) {
	panic("not implemented")
}
*/

/*nb:raw exercise-check
!cd "$MEMLAB_REPO" && go run ./cmd/memlab exercises check 17 --not-started-ok --student "$MEMLAB_WORKBOOK/exercises/17-inplace-block"
*/

/*md
## 18 · Serving from a pool of your own (§4.3)

A pool of tensors allocated once: serve 200 requests with zero allocator mallocs, and refuse
misuse.
The task in full: [exercises/18-my-pool/README.md](../../exercises/18-my-pool/README.md).
*/

/*md:zh-CN
## 18 · 用自己的显存池提供服务（§4.3）

一个只分配一次的张量池：处理 200 个请求，期间分配器一次 malloc 都不发生，并且拒绝误用。完整题目见 [exercises/18-my-pool/README.md](../../exercises/18-my-pool/README.md)。
*/

/*nb:raw
%%writefile ${MEMLAB_WORKBOOK}/exercises/18-my-pool/pool.go
package mypool

import "memlab.dev/memlab/tensor"

// Pool hands out float32 tensors of one shape from device memory it allocated
// once, up front: serving from it never asks the allocator for memory.
type Pool struct {
	// Add the fields you need.
}

// NewPool allocates n buffers of the given shape on dev (n ≥ 1, every
// dimension ≥ 1) and returns the pool.
//
// 中文：在 dev 上分配 n 个形状为 shape 的 float32 缓冲区。
// n < 1 或某一维小于 1 时返回错误。
func NewPool(dev tensor.Device, n int, shape ...int) (*Pool, error) {
	panic("not implemented")
}

// Get hands out a buffer no one else holds; ErrExhausted if there is none.
// Its contents are whatever the last user left.
//
// 中文：交出一个别人没有拿着的缓冲区，不向分配器要显存；全部被拿走时返回 ErrExhausted。
func (p *Pool) Get() (*tensor.Tensor, error) {
	panic("not implemented")
}

// Put gives back a buffer Get handed out; ErrNotFromPool for anything else,
// including a buffer already given back.
//
// 中文：收回 Get 交出的缓冲区；不是池交出的或已经还回来的返回 ErrNotFromPool。
func (p *Pool) Put(t *tensor.Tensor) error {
	panic("not implemented")
}

// Close releases the pool's memory; ErrInUse (and nothing released) while
// buffers are still handed out.
//
// 中文：释放池的全部显存；还有缓冲区没还时返回 ErrInUse，什么都不释放。
func (p *Pool) Close() error {
	panic("not implemented")
}
*/

/*nb:raw exercise-check
!cd "$MEMLAB_REPO" && go run ./cmd/memlab exercises check 18 --not-started-ok --student "$MEMLAB_WORKBOOK/exercises/18-my-pool"
*/

/*md
## 19 · Lowering a forward pass's peak (§4.4)

One feed-forward layer at no more than 60 % of the naive version's peak, with views and in-place
ops, then into a reused output buffer with no allocation at all.
The task in full: [exercises/19-lower-the-peak/README.md](../../exercises/19-lower-the-peak/README.md).
*/

/*md:zh-CN
## 19 · 压低一次前向计算的峰值（§4.4）

用视图（view）和原地操作，把一个前馈层的峰值压到朴素写法的 60% 以内；再把结果写进一块反复使用的输出缓冲区，一次分配都没有。完整题目见 [exercises/19-lower-the-peak/README.md](../../exercises/19-lower-the-peak/README.md)。
*/

/*nb:raw
%%writefile ${MEMLAB_WORKBOOK}/exercises/19-lower-the-peak/forward.go
package peak

import "memlab.dev/memlab/tensor"

// Forward computes what NaiveForward computes, gelu(x @ w + bias) * 0.5 as
// [batch, seq, hidden], with a peak (memory allocated above the start while it
// runs) at most 60 % of NaiveForward's. x is unchanged.
//
// 中文：计算与 NaiveForward 相同的结果，x 不变，峰值最多是 NaiveForward 的 60%。
func Forward(x, w, bias *tensor.Tensor) (*tensor.Tensor, error) {
	panic("not implemented")
}

// ForwardInto computes the same into out, a [batch, seq, hidden] float32
// tensor the caller allocated once and reuses for every batch: it allocates
// nothing at all.
//
// 中文：把结果写进 out，不向分配器要任何显存。
func ForwardInto(out, x, w, bias *tensor.Tensor) error {
	panic("not implemented")
}
*/

/*nb:raw exercise-check
!cd "$MEMLAB_REPO" && go run ./cmd/memlab exercises check 19 --not-started-ok --student "$MEMLAB_WORKBOOK/exercises/19-lower-the-peak"
*/
