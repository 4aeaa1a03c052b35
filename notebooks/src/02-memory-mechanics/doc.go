// Package nb02 is notebook 02, "Memory mechanics" (Chapter 2), written as Go:
// the files named [0-9]*.go are the notebook's cells in order (markdown in
// /*md comments, each code cell a //nb:cell function whose body is the cell),
// scripts/mknotebooks renders them into notebooks/{en,zh-CN}/02-memory-mechanics.ipynb,
// `go test` runs every cell and checks what it prints, and `memlab lab` runs
// them without Jupyter. See /MECHANISM.md in the notes, or scripts/mknotebooks.
package nb02
