// Package nb00 is notebook 00, "Set-up check and a five-minute tour", written
// as Go: the files named [0-9]*.go are its cells in order (see package nb02
// and scripts/mknotebooks); `go test` runs every cell and `memlab lab` runs
// them without Jupyter.
package nb00
