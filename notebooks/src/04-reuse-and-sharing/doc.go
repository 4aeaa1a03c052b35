// Package nb04 is notebook 04, "Reuse and sharing" (chapter 4 of the course):
// in-place operations, views, memory pools and a small transformer that uses
// all three. Its [0-9]*.go files are the notebook's cells; scripts/mknotebooks
// renders them into notebooks/{en,zh-CN}/04-reuse-and-sharing.ipynb, `go test` runs
// them, and `memlab lab` runs them without Jupyter.
package nb04
