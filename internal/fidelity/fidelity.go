// Package fidelity is what memlab's randomized differential tests against
// PyTorch share (issue 22): reading a suite's ground truth (gzip'd JSON lines
// recorded by scripts/record/fidelity_*.py on a GPU machine) and holding a
// suite's comparison to its list of known mismatches.
//
// Each suite's test replays every recorded case through memlab, calls
// Tally.Case with the case's key and what differed (nothing when it agreed),
// and ends with Tally.Check: a case that differs and is not listed fails the
// test with its reproducer, and so does a listed case that now agrees (the list
// must shrink with the fixes). A suite whose data is missing fails; it never
// skips.
package fidelity

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"memlab.dev/memlab/reference"
)

// Header is the first line of every suite's file.
type Header struct {
	Kind   string `json:"kind"`
	Suite  string `json:"suite"`
	Torch  string `json:"torch"`
	Device string `json:"device"`
	Seed   int64  `json:"seed"`
}

// Read opens a suite's gzip'd JSON-lines file and decodes its header and every
// following line into a value of type T.
func Read[T any](path string) (Header, []T, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, nil, fmt.Errorf("fidelity: %w (the ground truth ships with the repository; scripts/record/fidelity.sh records it on a GPU machine)", err)
	}
	defer f.Close()
	return Decode[T](f, path)
}

// Decode is Read from an open reader; name labels errors.
func Decode[T any](r io.Reader, name string) (Header, []T, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return Header{}, nil, fmt.Errorf("fidelity: %s: %w", name, err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var h Header
	var out []T
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if line == 1 {
			if err := json.Unmarshal(b, &h); err != nil || h.Kind != "header" {
				return Header{}, nil, fmt.Errorf("fidelity: %s: line 1 is not a header: %.80s", name, b)
			}
			continue
		}
		var v T
		if err := json.Unmarshal(b, &v); err != nil {
			return Header{}, nil, fmt.Errorf("fidelity: %s: line %d: %w", name, line, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return Header{}, nil, fmt.Errorf("fidelity: %s: %w", name, err)
	}
	if line == 0 {
		return Header{}, nil, fmt.Errorf("fidelity: %s: empty", name)
	}
	if h.Torch == "" {
		return Header{}, nil, fmt.Errorf("fidelity: %s: the header names no PyTorch version", name)
	}
	return h, out, nil
}

// Tally counts a suite's cases and holds the ones that differ.
type Tally struct {
	Suite string
	// Known maps the key of a case known to differ to why it does.
	Known map[string]string
	// MaxReports bounds how many unlisted mismatches are printed in full (10
	// when 0; $MEMLAB_FIDELITY_REPORTS overrides it).
	MaxReports int

	cases, agree int
	unlisted     []string
	knownSeen    map[string]bool
	notes        []string
}

// Note logs a line of measurements beside the summary; Check requires
// BENCHMARKS.md to quote it, as it does the summary.
func (t *Tally) Note(tb testing.TB, format string, args ...any) {
	tb.Helper()
	line := fmt.Sprintf("fidelity %s: ", t.Suite) + fmt.Sprintf(format, args...)
	t.notes = append(t.notes, line)
	tb.Log(line)
}

// Case records one case: diff is empty when memlab agreed with PyTorch,
// otherwise what differed followed by a reproducer.
func (t *Tally) Case(key, diff string) {
	t.cases++
	if t.knownSeen == nil {
		t.knownSeen = map[string]bool{}
	}
	if _, listed := t.Known[key]; listed {
		t.knownSeen[key] = diff != ""
		if diff != "" {
			return
		}
		t.unlisted = append(t.unlisted, fmt.Sprintf("%s: listed as a known mismatch but now agrees with PyTorch: take it off the list", key))
		return
	}
	if diff == "" {
		t.agree++
		return
	}
	t.unlisted = append(t.unlisted, key+": "+diff)
}

// Cases returns the number of cases seen and how many agreed exactly.
func (t *Tally) Cases() (cases, agree int) { return t.cases, t.agree }

// Summary is one line: the suite, its case count, its agreement and the
// PyTorch version.
func (t *Tally) Summary(torch string) string {
	return fmt.Sprintf("fidelity %s: %d cases, %d agree with PyTorch %s, %d known mismatches, %d unexpected",
		t.Suite, t.cases, t.agree, torch, len(t.Known), len(t.unlisted))
}

// Check logs the summary and fails tb for every unexpected mismatch (the
// first MaxReports in full), every listed case that now agrees and every
// listed case the data no longer has, and when there were no cases at all.
//
// The summary and the notes must appear word for word in the repository's
// BENCHMARKS.md (its fidelity section), so that the figures there are the ones
// this test prints.
func (t *Tally) Check(tb testing.TB, torch string) {
	tb.Helper()
	tb.Log(t.Summary(torch))
	if root, err := reference.Root(); err != nil {
		tb.Error(err)
	} else if doc, err := os.ReadFile(filepath.Join(root, "BENCHMARKS.md")); err != nil {
		tb.Errorf("fidelity %s: %v", t.Suite, err)
	} else {
		for _, line := range append([]string{t.Summary(torch)}, t.notes...) {
			if !strings.Contains(string(doc), line) {
				tb.Errorf("BENCHMARKS.md does not quote %q: update its fidelity section", line)
			}
		}
	}
	if t.cases == 0 {
		tb.Errorf("fidelity %s: no cases: the ground truth is empty", t.Suite)
	}
	max := t.MaxReports
	if n, err := strconv.Atoi(os.Getenv("MEMLAB_FIDELITY_REPORTS")); err == nil && n > 0 {
		max = n
	}
	if max <= 0 {
		max = 10
	}
	for i, u := range t.unlisted {
		if i == max {
			tb.Errorf("fidelity %s: … and %d more", t.Suite, len(t.unlisted)-max)
			break
		}
		tb.Errorf("fidelity %s: %s", t.Suite, u)
	}
	var gone []string
	for k := range t.Known {
		if _, ok := t.knownSeen[k]; !ok {
			gone = append(gone, k)
		}
	}
	sort.Strings(gone)
	if len(gone) > 0 {
		tb.Errorf("fidelity %s: known mismatches not in the data (take them off the list): %s", t.Suite, strings.Join(gone, "; "))
	}
}
