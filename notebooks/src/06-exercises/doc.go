// Package nb06 is notebook 06, "Exercises in the notebook", written as Go:
// the files named [0-9]*.go are its cells in order (see scripts/mknotebooks).
// Most of its cells are GoNB commands (/*nb:raw): a %%writefile cell holds the
// learner's code for an exercise and saves it to the learner's copy under
// workbook/exercises/, and the cell after it checks that copy with the
// exercise's official tests. `go test` runs its one Go cell.
package nb06
