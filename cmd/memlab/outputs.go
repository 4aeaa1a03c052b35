package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// output is a file a flag writes: the flag's name and the path ("" or "-": none,
// or standard output).
type output struct{ flag, path string }

// checkOutputs is run before any work: it refuses an output that is one of the
// inputs (compared as files, after resolving links: os.SameFile), that is a folder,
// that is another output, or whose folder does not exist (memlab creates no
// folders), so that a run never overwrites its input and never fails at the end
// for want of a folder.
func checkOutputs(inputs []string, outputs ...output) error {
	type file struct {
		name string
		fi   os.FileInfo
	}
	var seen []file
	for _, in := range inputs {
		if fi, err := os.Stat(in); err == nil {
			seen = append(seen, file{"the input " + in + ": memlab never overwrites its input", fi})
		}
	}
	for _, o := range outputs {
		if o.path == "" || o.path == "-" {
			continue
		}
		dir := filepath.Dir(o.path)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("%s %s: the folder %s does not exist (memlab creates no folders)", o.flag, o.path, dir)
		}
		fi, err := os.Stat(o.path)
		if err != nil {
			continue // a new file
		}
		if fi.IsDir() {
			return fmt.Errorf("%s %s is a folder, not a file", o.flag, o.path)
		}
		for _, f := range seen {
			if os.SameFile(fi, f.fi) {
				return fmt.Errorf("%s %s is %s", o.flag, o.path, f.name)
			}
		}
		seen = append(seen, file{"also written by " + o.flag, fi})
	}
	// two new files under one name
	names := map[string]string{}
	for _, o := range outputs {
		if o.path == "" || o.path == "-" {
			continue
		}
		abs, err := filepath.Abs(o.path)
		if err != nil {
			continue
		}
		if prev, ok := names[abs]; ok {
			return fmt.Errorf("%s and %s both write %s", prev, o.flag, o.path)
		}
		names[abs] = o.flag
	}
	return nil
}
