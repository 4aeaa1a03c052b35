package nb02

//nb:meta {"memlab": {"plot_per_section": true}}

/*md
# 02 · Memory mechanics

Chapter 2 in experiments: how a tensor sits in device memory (2.1), how PyTorch's
caching allocator hands memory out and keeps it (2.2), how that memory fragments and
what helps (2.3), and the `torch.cuda` functions that show all of it (2.4).

Every experiment's code is in its cell: tensor calls (`tensor.Empty`, `View`, `Narrow`,
`Release` — Python's `del`) and the `torch.cuda` memory API under its Go name
(`MemoryAllocated`, `EmptyCache`, …). Change a number and run the cell again; each
experiment ends with a **Try it** that says what to change and what to expect.

**How cells run.** GoNB compiles each cell into a fresh Go program: declarations
(imports, functions, types) persist from cell to cell, runtime state does not, so every
experiment opens its own lab (`memlab.MustOpen()`: a GPU if there is one, otherwise the
simulated device) and closes it at the end. Lines after `%%` are the body of `main`.
`memlab.Must` and `memlab.Check` stop a cell at the first error; `memlab.Show` draws a
figure. Every "Measured:" line is printed by the cell from what it measured; the same
cells run as `go test ./notebooks/...` and, without Jupyter, as `go run ./cmd/memlab lab`.
*/
