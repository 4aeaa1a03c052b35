package nb04

//nb:meta {"memlab": {"plot_per_section": true}}

/*md
# 04 · Reuse and sharing

Chapter 4 in experiments: reusing memory instead of allocating it again — in-place
operations and their hazards (4.1), views that share storage and the operations that
quietly copy (4.2), pools: the caching allocator, a fixed-shape `TensorPool` and KV-cache
pools (4.3) — and all three together in a small transformer serving variable-length
requests (4.4).

Every experiment's code is in its cell: tensor calls (`Relu_`, `Add_`, `View`, `Narrow`,
`Release` — Python's `del`), the pools of package [`pool`](../pool/doc.go) and the
transformer of package [`model`](../model/model.go), with the `torch.cuda` memory API
under its Go name (`MemoryAllocated`, `MaxMemoryAllocated`, `ResetPeakMemoryStats`, …).
Each cell opens its own lab (`memlab.MustOpen()`: a GPU if there is one, the simulated
device otherwise) and closes it: GoNB keeps declarations between cells, not state. Every
"Measured:" line is printed by the cell from what it measured, and each experiment ends
with a **Try it**. The same cells run as `go test ./notebooks/...` and, without Jupyter,
as `go run ./cmd/memlab lab -run 04`; section 4.4 on a GPU is
`go run ./cmd/memlab ch4 -device cuda -size large`.
*/
