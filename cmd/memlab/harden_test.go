package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"memlab.dev/memlab/reference"
)

// copyFile copies src into dir and returns the copy's path.
func copyFile(t *testing.T, src, dir string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestNeverOverwritesInput: an output naming an input (directly or through a link)
// is refused before any work, and the input is left as it was.
func TestNeverOverwritesInput(t *testing.T) {
	dir := t.TempDir()
	snapRef, err := reference.File(reference.Workloads211, "multistream_branches__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	snap := copyFile(t, snapRef, dir)
	trace := filepath.Join(dir, "ops.json")
	if err := os.WriteFile(trace, []byte(`[["a",1048576],["f",0],["e"]]`), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(snap, link); err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	for _, p := range []string{snap, trace} {
		before[p], _ = os.ReadFile(p)
	}
	for _, c := range []struct {
		sub  string
		args []string
	}{
		{"whatif", []string{snap, "--json", snap}},
		{"whatif", []string{snap, "--json", link}},
		{"whatif", []string{snap, "--plot", filepath.Join(dir, "..", filepath.Base(dir), filepath.Base(snap)) + ".svg"}}, // not the input: allowed below
		{"replay", []string{"--trace", trace, "--out", trace}},
		{"replay", []string{"--trace", trace, "--summary", trace}},
		{"replay", []string{"--trace", trace, "--viz", trace}},
		{"replay", []string{"--trace", trace, "--out", filepath.Join(dir, "x"), "--summary", filepath.Join(dir, "x")}},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{c.sub}, c.args...), &out, &errb)
		if strings.HasSuffix(c.args[len(c.args)-1], ".svg") {
			if code != 0 {
				t.Errorf("%s %q: exit %d: %s", c.sub, c.args, code, errb.String())
			}
			continue
		}
		if code != 2 || !(strings.Contains(errb.String(), "never overwrites its input") || strings.Contains(errb.String(), "both write")) {
			t.Errorf("%s %q: exit %d, stderr %q; want 2 and a refusal", c.sub, c.args, code, errb.String())
		}
		if out.Len() > 0 {
			t.Errorf("%s %q: worked before refusing: %q", c.sub, c.args, out.String())
		}
	}
	for p, b := range before {
		if now, _ := os.ReadFile(p); !bytes.Equal(now, b) {
			t.Errorf("%s was changed", p)
		}
	}
}

// TestOutputsIntoMissingFolders: --json, --plot, --out, --summary and --viz into a
// folder that does not exist fail before the work, and create no folder.
func TestOutputsIntoMissingFolders(t *testing.T) {
	dir := t.TempDir()
	snap, err := reference.File(reference.Workloads211, "multistream_branches__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "no", "such")
	for _, c := range [][]string{
		{"whatif", snap, "--json", filepath.Join(missing, "x.json")},
		{"whatif", snap, "--plot", filepath.Join(missing, "x.png")},
		{"replay", "--trace", groundTruth, "--out", filepath.Join(missing, "x.jsonl")},
		{"replay", "--trace", groundTruth, "--summary", filepath.Join(missing, "x.txt")},
		{"replay", "--trace", groundTruth, "--viz", filepath.Join(missing, "x.json")},
	} {
		var out, errb bytes.Buffer
		code := run(c, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), "does not exist (memlab creates no folders)") || out.Len() > 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", c, code, out.String(), errb.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "no")); err == nil {
		t.Error("a folder was created")
	}
}

// TestFlagBounds: -h exits 0; -iters is bounded and a negative one is an error.
func TestFlagBounds(t *testing.T) {
	for _, sub := range []string{"whatif", "replay", "bench", "lab", "ch4", "exercises"} {
		var out, errb bytes.Buffer
		if code := run([]string{sub, "-h"}, &out, &errb); code != 0 {
			t.Errorf("%s -h: exit %d", sub, code)
		}
	}
	runCLICases(t, "bench", []cliCase{
		{"huge iters", []string{"-iters", "2000000000"}, 2, "", "want 1 to 10000"},
		{"negative iters", []string{"-iters", "-5"}, 2, "", "-iters -5"},
	})
}

// TestReplayGzipBomb: a small .jsonl.gz that expands beyond --max-trace-size is
// refused with the bound, not read into memory whole.
func TestReplayGzipBomb(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bomb.jsonl.gz")
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(`{"kind":"header","x":"`))
	zeros := bytes.Repeat([]byte("0"), 1<<20)
	for range 16 {
		w.Write(zeros)
	}
	w.Close()
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	runCLICases(t, "replay", []cliCase{
		{"bomb", []string{"--trace", path, "--max-trace-size", "4MiB"}, 1, "", "larger than 4194304 bytes decompressed"},
		{"bad limit", []string{"--trace", path, "--max-trace-size", "lots"}, 2, "", "--max-trace-size"},
	})
}

// TestWhatifRanks: several snapshots (one per rank) give one table each and the
// worst per setting; --json holds every rank and the worst.
func TestWhatifRanks(t *testing.T) {
	var paths []string
	for _, n := range []string{"multistream_branches__default.pickle", "lstm_train__default.pickle"} {
		p, err := reference.File(reference.Workloads211, n)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	js := filepath.Join(t.TempDir(), "ranks.json")
	var out, errb bytes.Buffer
	args := append([]string{"whatif"}, paths...)
	args = append(args, "--conf", "", "--conf", "expandable_segments:True", "--json", js)
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"rank 0: " + paths[0] + ": PyTorch 2.10 or later · device 139.80 GiB (H200) assumed · ", "rank 1: " + paths[1], "worst of 2 ranks"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// a rank that runs out of memory makes the exit status 3
	capped := append(append([]string{"whatif"}, paths...), "--conf", "", "--cap", "64MiB")
	if code := run(capped, &bytes.Buffer{}, &bytes.Buffer{}); code != 3 {
		t.Errorf("ranks under a 64 MiB cap: exit %d, want 3 (an OOM predicted)", code)
	}
	var got struct {
		Ranks []struct {
			File string `json:"file"`
			Runs []struct {
				MaxReserved int64 `json:"max_memory_reserved"`
			} `json:"runs"`
		} `json:"ranks"`
		Worst []struct {
			Conf        string `json:"conf"`
			Rank        int    `json:"rank"`
			MaxReserved int64  `json:"max_memory_reserved"`
		} `json:"worst"`
	}
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Ranks) != 2 || len(got.Worst) != 2 {
		t.Fatalf("%d ranks, %d worst rows", len(got.Ranks), len(got.Worst))
	}
	for i, w := range got.Worst {
		hi := max(got.Ranks[0].Runs[i].MaxReserved, got.Ranks[1].Runs[i].MaxReserved)
		if w.MaxReserved != hi || got.Ranks[w.Rank].Runs[i].MaxReserved != hi {
			t.Errorf("worst %q: rank %d with %d, want the highest %d", w.Conf, w.Rank, w.MaxReserved, hi)
		}
	}
	runCLICases(t, "whatif", []cliCase{
		{"sweep takes one", append(append([]string{}, paths...), "--sweep"), 2, "", "take one snapshot"},
		{"cap needs conf", append(append([]string{}, paths...), "--cap", "1GiB"), 2, "", "need --conf"},
		{"a bad rank is named", append(append([]string{}, paths...), "/nonexistent.pickle"), 1, "", "rank 2 (/nonexistent.pickle)"},
	})
}

// gzipFile writes data gzipped to dir/name and returns its path.
func gzipFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestWhatifGzip: `memlab whatif snap.pickle.gz` prints what the plain file gives
// (its name aside, on stdout and, the table under --json -, on stderr), alone and
// as a rank; a gzip bomb is refused at --max-snapshot-size, naming the flag, with
// or without GOMEMLIMIT; a truncated gzip file is an error naming the file.
func TestWhatifGzip(t *testing.T) {
	snap, err := reference.File(reference.Workloads211, "multistream_branches__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	zipped := gzipFile(t, dir, "snap.pickle.gz", data)
	whatif := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(append([]string{"whatif"}, args...), &out, &errb)
		return code, out.String(), errb.String()
	}
	for _, args := range [][]string{
		{"--conf", "", "--conf", "expandable_segments:True", "--cap", "1GiB"},
		{"--conf", "", "--json", "-"},
	} {
		pc, pout, perr := whatif(append([]string{snap}, args...)...)
		zc, zout, zerr := whatif(append([]string{zipped}, args...)...)
		if pc != zc || strings.ReplaceAll(zout, zipped, snap) != pout || strings.ReplaceAll(zerr, zipped, snap) != perr {
			t.Errorf("%q: the .pickle.gz gives exit %d\n%s%s\nthe plain file exit %d\n%s%s", args, zc, zout, zerr, pc, pout, perr)
		}
	}
	pc, pout, _ := whatif(snap, snap, "--conf", "")
	zc, zout, _ := whatif(snap, zipped, "--conf", "")
	if pc != 0 || zc != 0 || strings.ReplaceAll(zout, zipped, snap) != pout {
		t.Errorf("as a rank: the .pickle.gz gives exit %d\n%s\nthe plain file exit %d\n%s", zc, zout, pc, pout)
	}

	bomb := gzipFile(t, dir, "bomb.pickle.gz", append([]byte("\x80\x04"), make([]byte, 8<<20)...))
	truncated := filepath.Join(dir, "cut.pickle.gz")
	whole, _ := os.ReadFile(zipped)
	if err := os.WriteFile(truncated, whole[:len(whole)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []cliCase{
		{"bomb", []string{bomb, "--max-snapshot-size", "4MiB"}, 1, "", "larger than 4194304 bytes decompressed"},
		{"bomb names the flag", []string{bomb, "--max-snapshot-size", "4MiB"}, 1, "", "--max-snapshot-size"},
		{"bomb as a rank", []string{snap, bomb, "--conf", "", "--max-snapshot-size", "4MiB"}, 1, "", "larger than 4194304 bytes decompressed"},
		{"bomb under the bound is a bad pickle", []string{bomb}, 1, "", bomb},
		{"truncated", []string{truncated}, 1, "", "truncated"},
		{"bad bound", []string{zipped, "--max-snapshot-size", "lots"}, 2, "", "--max-snapshot-size"},
		{"zero bound", []string{zipped, "--max-snapshot-size", "0"}, 2, "", "--max-snapshot-size"},
		{"bound beyond what memlab reads", []string{zipped, "--max-snapshot-size", "5GiB"}, 2, "", "at most 4GiB"},
	}
	runCLICases(t, "whatif", cases)
	t.Setenv("GOMEMLIMIT", "off") // the read, not memoryLimit, refuses it
	runCLICases(t, "whatif", cases[:3])
}

// TestMemoryLimitGzip: the soft memory limit of a gzip-compressed snapshot is
// sized by the bytes it decompresses to (counted, not its trailer's claim):
// limitPerPickleByte × its pickle, as a plain file of that pickle's size gets (the pickle is decoded
// from a temporary file, not held in memory: issue 28).
func TestMemoryLimitGzip(t *testing.T) {
	dir := t.TempDir()
	const n = 64 << 20
	zipped := gzipFile(t, dir, "big.pickle.gz", make([]byte, n))
	// A lying trailer: ISIZE 1 (the CRC then fails, but only after counting).
	raw, _ := os.ReadFile(zipped)
	copy(raw[len(raw)-4:], []byte{1, 0, 0, 0})
	liar := filepath.Join(dir, "liar.pickle.gz")
	if err := os.WriteFile(liar, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "big.pickle")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(plain, n); err != nil { // sparse: no disk
		t.Fatal(err)
	}
	if lim, ok, err := memoryLimit([]string{plain}, 0); err != nil || !ok || lim != n*limitPerPickleByte {
		t.Errorf("plain: limit %d, %v, %v; want %d", lim, ok, err, n*limitPerPickleByte)
	}
	if lim, ok, err := memoryLimit([]string{zipped}, 0); err != nil || !ok || lim != n*limitPerPickleByte {
		t.Errorf("gzip: limit %d, %v, %v; want %d", lim, ok, err, n*limitPerPickleByte)
	}
	if _, _, err := memoryLimit([]string{liar}, 0); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("lying trailer: %v, want the checksum error", err)
	}
	if _, _, err := memoryLimit([]string{zipped}, n-1); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("over the bound: %v, want an error", err)
	}
}
