// Package nb05 is notebook 05, "What if" (for practitioners): a real PyTorch
// memory snapshot replayed under other allocator settings with package whatif.
// Its [0-9]*.go files are the notebook's cells; scripts/mknotebooks renders
// them into notebooks/{en,zh-CN}/05-what-if.ipynb, `go test` runs them, and `memlab lab`
// runs them without Jupyter.
package nb05
