//go:build unix

package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"memlab.dev/memlab/internal/testfiles"
	"memlab.dev/memlab/reference"
)

// TestWhatifNonRegularFile: /dev/zero and a FIFO that never ends stop with a clean
// error (exit 1) at their first byte or at --max-snapshot-size, not at the end of
// memory; a FIFO holding a snapshot replays.
func TestWhatifNonRegularFile(t *testing.T) {
	snap, err := reference.File(reference.Workloads211, "bert_encode__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	good := testfiles.FIFO(t, "good.fifo", func(w io.Writer) { w.Write(data) })
	endless := testfiles.FIFO(t, "endless.fifo", func(w io.Writer) { io.Copy(w, testfiles.Endless()) })
	runCLICases(t, "whatif", []cliCase{
		{"/dev/zero", []string{testfiles.DevZero(t)}, 1, "", "not a pickle"},
		{"a FIFO with a snapshot", []string{good}, 0, "238.00 MiB", ""},
		{"an endless FIFO", []string{endless, "--max-snapshot-size", "16MiB"}, 1, "", "larger than 16777216 bytes decompressed"},
	})
}

// TestReplayGzipBombAddressSpace: `memlab replay --trace` of gzip bombs, run in a
// child process under `ulimit -v 4194304` (4 GiB of address space), ends with a
// clean error naming the bound: 300 MB of one string, and 240 MB of tiny ops (more
// than replay.MaxOps, refused before they are decoded; they once took more than
// 4 GiB to decode).
func TestReplayGzipBombAddressSpace(t *testing.T) {
	if path := os.Getenv("MEMLAB_BOMB"); path != "" {
		os.Exit(run([]string{"replay", "--trace", path}, os.Stdout, os.Stderr))
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Fatalf("no sh to set the limit: %v", err)
	}
	dir := t.TempDir()
	bomb := func(name string, head, unit, tail string, n int) string {
		var b bytes.Buffer
		w, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
		w.Write([]byte(head))
		chunk := bytes.Repeat([]byte(unit), (1<<20)/len(unit))
		for range n {
			w.Write(chunk)
		}
		w.Write([]byte(tail))
		w.Close()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		path, want string
	}{
		{bomb("string.jsonl.gz", `{"kind":"header","x":"`, "0", "\"}\n", 300), "larger than 268435456 bytes decompressed"},
		{bomb("ops.jsonl.gz", `{"kind":"header","total_memory":1000000,"ops":[`, `["a",1],`, "[\"a\",1]]}\n", 240), "more than 4000000 ops"},
	} {
		cmd := exec.Command("sh", "-c", `ulimit -v 4194304 && exec "$0" -test.run='^TestReplayGzipBombAddressSpace$'`, os.Args[0])
		cmd.Env = append(os.Environ(), "MEMLAB_BOMB="+c.path)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), c.want) {
			t.Errorf("%s under 4 GiB of address space: %v, want exit 1 and %q:\n%s", filepath.Base(c.path), err, c.want, out)
		}
	}
}
