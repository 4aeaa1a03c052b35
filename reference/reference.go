// Package reference locates the PyTorch ground truth that ships with the
// repository: allocator traces and summaries recorded with PyTorch 2.11 on an
// NVIDIA H200 (torch-2.11/) and real programs' memory snapshots with PyTorch's
// own figures (workloads-2.11/, modern-2.11/, misses-2.11/, programs-2.11/), and the
// randomized differential suites' cases (fidelity-2.11/). Each folder's README
// says how it was made.
//
// The files are found at run time, not embedded: from the directory of this
// source file (the checkout a notebook or test was built from), else by walking
// up from the working directory to the repository's go.mod, else from
// $MEMLAB_ROOT. A missing file is an error, never an empty result, so tests that
// compare with PyTorch fail when the data is gone.
package reference

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// Module is the module path whose go.mod marks the repository root.
const Module = "memlab.dev/memlab"

// Folders of ground truth under the repository's reference/ directory.
const (
	// Torch211 holds allocation traces replayed through PyTorch 2.11's allocator
	// (*.jsonl.gz), their memory_summary() (*.summary.txt) and two snapshots.
	Torch211 = "torch-2.11"
	// Workloads211 holds real programs' snapshots (*.pickle) and PyTorch's
	// figures for each allocator setting (*.facts.json).
	Workloads211 = "workloads-2.11"
	// Fidelity211 holds the randomized differential suites' ground truth
	// (issue 22): random cases and PyTorch 2.11's answers, one gzip'd JSON-lines
	// file a suite (layouts, settings, allocator, kernels).
	Fidelity211 = "fidelity-2.11"
	// Modern211 holds programs using torch.compile, CUDA graphs, a MemPool and
	// FSDP2 (issue 20), in Workloads211's file shapes, their facts also
	// listing every segment's pool id.
	Modern211 = "modern-2.11"
	// Misses211 holds single-stream programs whose what-if replay differs
	// from PyTorch in a figure, in Workloads211's file shapes.
	Misses211 = "misses-2.11"
	// Ranks211 holds per-rank snapshots of multi-GPU programs (FSDP2, DDP;
	// issue 31), one snapshot and one facts file per rank and setting
	// (PROGRAM__SETTING.rankR.pickle), recorded with world size 1 so far.
	Ranks211 = "ranks-2.11"
	// Programs211 holds single-stream training and serving programs of the
	// kinds practitioners run today (issue 28: Hugging Face fine-tuning with
	// gradient checkpointing, bucketed batches, LoRA, channels_last AMP,
	// continuous batching, torch.compile with dynamic shapes, activation
	// offloading), in Workloads211's file shapes, every pickle gzipped.
	Programs211 = "programs-2.11"
)

// Root returns the repository root: the directory holding the go.mod of
// module memlab.dev/memlab. It looks, in order, at $MEMLAB_ROOT, the checkout
// this package was compiled from, and the working directory and its parents.
func Root() (string, error) {
	var tried []string
	if env := os.Getenv("MEMLAB_ROOT"); env != "" {
		if isRoot(env) {
			return filepath.Abs(env)
		}
		return "", fmt.Errorf("reference: MEMLAB_ROOT=%q is not a memlab checkout (no go.mod of %s)", env, Module)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dir := filepath.Dir(filepath.Dir(file))
		if isRoot(dir) {
			return dir, nil
		}
		tried = append(tried, dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("reference: %w", err)
	}
	for dir := wd; ; {
		if isRoot(dir) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	tried = append(tried, wd+" and its parents")
	return "", fmt.Errorf("reference: no memlab checkout found (looked at %s); set MEMLAB_ROOT", strings.Join(tried, ", "))
}

// isRoot reports whether dir holds the go.mod of Module.
func isRoot(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 2 && fields[0] == "module" {
			return fields[1] == Module
		}
	}
	return false
}

// Dir returns the absolute path of a ground-truth folder (Torch211 or
// Workloads211), or an error naming where it was looked for.
func Dir(folder string) (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "reference", folder)
	if st, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("reference: PyTorch ground truth missing: %w", err)
	} else if !st.IsDir() {
		return "", fmt.Errorf("reference: %s is not a directory", dir)
	}
	return dir, nil
}

// File returns the absolute path of one ground-truth file, such as
// File(Torch211, "a__default.jsonl.gz"), or an error when it does not exist.
func File(folder, name string) (string, error) {
	dir, err := Dir(folder)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("reference: PyTorch ground truth missing: %w", err)
	}
	return p, nil
}

// Glob returns the ground-truth files of folder that match pattern (as in
// filepath.Match), sorted; matching nothing is an error.
func Glob(folder, pattern string) ([]string, error) {
	dir, err := Dir(folder)
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("reference: no files match %s in %s", pattern, dir)
	}
	return files, nil
}

// Gz is the suffix of a gzip-compressed snapshot: a snapshot P__S.pickle may ship
// as P__S.pickle.gz, the same file gzipped (snapshot.ReadFile reads either).
const Gz = ".gz"

// Pickle returns the absolute path of the snapshot name ("P__S.pickle") in folder,
// whichever of name and name.gz ships; neither, or both (two copies that could
// differ), is an error.
func Pickle(folder, name string) (string, error) {
	dir, err := Dir(folder)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	_, errPlain := os.Stat(p)
	_, errGz := os.Stat(p + Gz)
	switch {
	case errPlain == nil && errGz == nil:
		return "", fmt.Errorf("reference: both %s and %s%s ship; keep one", p, name, Gz)
	case errPlain == nil:
		return p, nil
	case errGz == nil:
		return p + Gz, nil
	}
	return "", fmt.Errorf("reference: PyTorch ground truth missing: %w (nor %s%s)", errPlain, name, Gz)
}

// GlobPickles is Glob for snapshots: the files of folder that match pattern
// ("*__default.pickle") or pattern.gz, sorted by the name they share (a file and
// its gzipped form in one folder is an error, as in Pickle); matching nothing is
// an error.
func GlobPickles(folder, pattern string) ([]string, error) {
	dir, err := Dir(folder)
	if err != nil {
		return nil, err
	}
	plain, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	gz, err := filepath.Glob(filepath.Join(dir, pattern+Gz))
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	seen := map[string]bool{}
	for _, p := range plain {
		seen[p] = true
	}
	files := plain
	for _, p := range gz {
		if seen[strings.TrimSuffix(p, Gz)] {
			return nil, fmt.Errorf("reference: both %s and %s ship; keep one", strings.TrimSuffix(p, Gz), filepath.Base(p))
		}
		files = append(files, p)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("reference: no files match %s or %s%s in %s", pattern, pattern, Gz, dir)
	}
	slices.SortFunc(files, func(a, b string) int { return strings.Compare(TrimPickle(a), TrimPickle(b)) })
	return files, nil
}

// TrimPickle returns path without its snapshot suffix, .pickle or .pickle.gz
// ("dir/P__S.pickle.gz" → "dir/P__S"): the stem its .facts.json and its other
// settings' snapshots share.
func TrimPickle(path string) string {
	return strings.TrimSuffix(strings.TrimSuffix(path, Gz), ".pickle")
}
