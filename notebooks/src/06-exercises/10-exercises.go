package nb06

import (
	"memlab.dev/memlab/memlab"
)

/*md
# 06 · Exercises in the notebook

Exercises 15–19 use memlab's own API — tensors, the caching allocator and its `torch.cuda`-style
functions. Each one has two cells here: the first holds **your code** (it starts as the exercise's
stub; edit it in place) and saves it with GoNB's `%%writefile` to your copy of the exercise under
`workbook/exercises/` (git ignores it: the repository's files never change); the second runs the
exercise's **official tests** against that copy:

    go run ./cmd/memlab exercises check N --student workbook/exercises/FOLDER

— the same command as in a terminal at the repository root (`go run ./cmd/memlab exercises check N`
checks the copy in `exercises/`). Run the cell above it again after every edit. Hints, one at a time:
`go run ./cmd/memlab exercises hint N`. Exercises 1–14 work the same way:
`go run ./cmd/memlab exercises copy N` makes your copy, and the check takes `--student` as here.

The next cell makes your copies (an existing copy is kept), then the tests' card is opened once so
you can see what they run on.
*/

/*md:zh-CN
# 06 · 在笔记本里做练习

练习 15–19 用的是 memlab 自己的 API：张量、缓存分配器（caching allocator）以及仿照 `torch.cuda` 的那些函数。每个练习在这里有两个单元格：第一个放**你的代码**（一开始是练习的桩代码，直接在单元格里改），用 GoNB 的 `%%writefile` 存到 `workbook/exercises/` 下你自己的那份练习里（git 不跟踪它，仓库里的文件永远不会被改动）；第二个用练习的**官方测试**检查这份代码：

    go run ./cmd/memlab exercises check N --student workbook/exercises/FOLDER

——和在仓库根目录的终端里用的是同一条命令（`go run ./cmd/memlab exercises check N` 检查的是 `exercises/` 里的那份）。每次改完代码，先重新运行上面那个单元格，再运行检查。提示一次给一条：`go run ./cmd/memlab exercises hint N`。练习 1–14 也一样：`go run ./cmd/memlab exercises copy N` 生成你的副本，检查时同样加上 `--student`。

下一个单元格生成你的副本（已有的副本保持不动），然后打开一次测试所用的那张卡，让你看看测试在什么上面跑。
*/

/*nb:raw
!cd ../.. && go run ./cmd/memlab exercises copy 15 16 17 18 19
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
%%writefile ../../workbook/exercises/15-fit-the-budget/budget.go
package budget

import "memlab.dev/memlab/tensor"

// AllocConf returns the allocator settings, in PYTORCH_CUDA_ALLOC_CONF syntax
// (such as "max_split_size_mb:512"), under which the fragmenting workload of
// part A fits in its 1 GiB card. "" means PyTorch's defaults — which run out of
// memory.
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
func RunSteps(dev tensor.Device, sizes []int, step func(i int, featureMap *tensor.Tensor) error) error {
	panic("not implemented")
}
*/

/*nb:raw exercise-check
!cd ../.. && go run ./cmd/memlab exercises check 15 --student workbook/exercises/15-fit-the-budget
*/

/*md
## 16 · The leak check, and two tenants on one card (§2.4)

Part A: the chapter's leak-check idiom on the allocator. Part B: a training loop whose leak
check reports zero. Part C: cap two tenants with `SetPerProcessMemoryFraction` so neither starves.
The task: [exercises/16-leak-check/README.md](../../exercises/16-leak-check/README.md).
*/

/*md:zh-CN
## 16 · 泄漏检查，以及一张卡上的两个租户（§2.4）

A 部分：在分配器上写出本章的泄漏检查套路。B 部分：写一个泄漏检查结果为零的训练循环。C 部分：用 `SetPerProcessMemoryFraction` 给两个共用一张卡的租户设上限，谁也饿不死谁。完整题目见 [exercises/16-leak-check/README.md](../../exercises/16-leak-check/README.md)。
*/

/*nb:raw
%%writefile ../../workbook/exercises/16-leak-check/leak.go
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
func LeakCheck(a *allocator.Allocator, f func() error) (leaked, peak int64, err error) {
	panic("not implemented")
}

// TrainLoop runs steps training steps on dev and returns each step's loss. The
// model is one weight w = Randn(dev, seed 1, float32, [64, 64]); step s draws
// x = Randn(dev, seed 100+s, float32, [32, 64]) and its loss is the sum of all
// elements of relu(x @ w). Every tensor it makes is released before it returns:
// the leak check reports zero.
func TrainLoop(dev tensor.Device, steps int) ([]float64, error) {
	panic("not implemented")
}

// CapTenants caps two tenants that share one card, each with its own allocator,
// with set_per_process_memory_fraction, so that neither can starve the other:
// whatever one of them allocates, the other can still get at least 384 MiB of
// the 1 GiB card the tests use (896 MiB of which are free: the rest is the CUDA
// context).
func CapTenants(a, b *allocator.Allocator) error {
	panic("not implemented")
}
*/

/*nb:raw exercise-check
!cd ../.. && go run ./cmd/memlab exercises check 16 --student workbook/exercises/16-leak-check
*/

/*md
## 17 · An in-place block, without the version-counter error (§4.1)

Make `relu((x + b) * s) + x` in place where it is safe: one allocation for inference, two while
a tape watches `x` (no version-counter error), and measure what it saves.
The task: [exercises/17-inplace-block/README.md](../../exercises/17-inplace-block/README.md).
*/

/*md:zh-CN
## 17 · 原地操作的模块，且不触发版本计数器错误（§4.1）

在安全的地方把 `relu((x + b) * s) + x` 改成原地操作（in-place）：推理时只分配一次；有计算图（tape）记录 `x` 时最多分配两次，且不能触发版本计数器（version counter）错误；最后量一量省下了多少。完整题目见 [exercises/17-inplace-block/README.md](../../exercises/17-inplace-block/README.md)。
*/

/*nb:raw
%%writefile ../../workbook/exercises/17-inplace-block/block.go
package inplace

import (
	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/tensor"
)

// Block computes what NaiveBlock computes, relu((x + b) * s) + x, for inference:
// no tape watches x. It allocates at most one new tensor (the result) and leaves
// x unchanged.
func Block(x, b *tensor.Tensor, s float64) (*tensor.Tensor, error) {
	panic("not implemented")
}

// BlockTrain computes the same while a tape (autograd) watches x: the tape's
// saved tensors must still be intact afterwards (no version-counter error in
// Backward), x is unchanged, and the block allocates at most two tensors.
func BlockTrain(x, b *tensor.Tensor, s float64) (*tensor.Tensor, error) {
	panic("not implemented")
}

// Saving measures what Block saves: it runs NaiveBlock and then Block on the
// same inputs, each from a fresh peak (reset_peak_memory_stats), and returns how
// far memory_allocated rose above its starting value during each. Both results
// are released before it returns.
func Saving(a *allocator.Allocator, x, b *tensor.Tensor, s float64) (naive, mine int64, err error) {
	panic("not implemented")
}
*/

/*nb:raw exercise-check
!cd ../.. && go run ./cmd/memlab exercises check 17 --student workbook/exercises/17-inplace-block
*/

/*md
## 18 · Serving from a pool of your own (§4.3)

A pool of tensors allocated once: serve 200 requests with zero allocator mallocs, and refuse
misuse. The task: [exercises/18-my-pool/README.md](../../exercises/18-my-pool/README.md).
*/

/*md:zh-CN
## 18 · 用自己的显存池提供服务（§4.3）

一个只分配一次的张量池：处理 200 个请求，期间分配器一次 malloc 都不发生，并且拒绝误用。完整题目见 [exercises/18-my-pool/README.md](../../exercises/18-my-pool/README.md)。
*/

/*nb:raw
%%writefile ../../workbook/exercises/18-my-pool/pool.go
package mypool

import "memlab.dev/memlab/tensor"

// Pool hands out float32 tensors of one shape from device memory it allocated
// once, up front: serving from it never asks the allocator for memory.
type Pool struct {
	// Add the fields you need.
}

// NewPool allocates n buffers of the given shape on dev (n ≥ 1, every
// dimension ≥ 1) and returns the pool.
func NewPool(dev tensor.Device, n int, shape ...int) (*Pool, error) {
	panic("not implemented")
}

// Get hands out a buffer no one else holds; ErrExhausted if there is none.
// Its contents are whatever the last user left.
func (p *Pool) Get() (*tensor.Tensor, error) {
	panic("not implemented")
}

// Put gives back a buffer Get handed out; ErrNotFromPool for anything else,
// including a buffer already given back.
func (p *Pool) Put(t *tensor.Tensor) error {
	panic("not implemented")
}

// Close releases the pool's memory; ErrInUse (and nothing released) while
// buffers are still handed out.
func (p *Pool) Close() error {
	panic("not implemented")
}
*/

/*nb:raw exercise-check
!cd ../.. && go run ./cmd/memlab exercises check 18 --student workbook/exercises/18-my-pool
*/

/*md
## 19 · Lowering a forward pass's peak (§4.4)

One feed-forward layer at no more than 60 % of the naive version's peak, with views and in-place
ops, then into a reused output buffer with no allocation at all.
The task: [exercises/19-lower-the-peak/README.md](../../exercises/19-lower-the-peak/README.md).
*/

/*md:zh-CN
## 19 · 压低一次前向计算的峰值（§4.4）

用视图（view）和原地操作，把一个前馈层的峰值压到朴素写法的 60% 以内；再把结果写进一块反复使用的输出缓冲区，一次分配都没有。完整题目见 [exercises/19-lower-the-peak/README.md](../../exercises/19-lower-the-peak/README.md)。
*/

/*nb:raw
%%writefile ../../workbook/exercises/19-lower-the-peak/forward.go
package peak

import "memlab.dev/memlab/tensor"

// Forward computes what NaiveForward computes, gelu(x @ w + bias) * 0.5 as
// [batch, seq, hidden], with a peak (memory allocated above the start while it
// runs) at most 60 % of NaiveForward's. x is unchanged.
func Forward(x, w, bias *tensor.Tensor) (*tensor.Tensor, error) {
	panic("not implemented")
}

// ForwardInto computes the same into out, a [batch, seq, hidden] float32
// tensor the caller allocated once and reuses for every batch: it allocates
// nothing at all.
func ForwardInto(out, x, w, bias *tensor.Tensor) error {
	panic("not implemented")
}
*/

/*nb:raw exercise-check
!cd ../.. && go run ./cmd/memlab exercises check 19 --student workbook/exercises/19-lower-the-peak
*/
