//go:build !solution

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
