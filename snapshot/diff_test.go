package snapshot

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The differential test of the decoder against CPython's pickle: a seeded random
// corpus of valid pickles (pickle.dumps of random plain values under protocols 0–5,
// some through pickletools.optimize, which leaves sparse memo indices), of mutations
// of them (truncated, bytes flipped, inserted, deleted, repeated; memo indices
// moved), and of hand-made memo edge cases (testdata/pyoracle.py: MEMOIZE after
// sparse PUTs, PUT/GET/BINPUT/LONG_BINPUT, shared and recursive containers, shared
// tuples as keys, duplicate keys and set elements, …). Python generates the corpus
// and its answers at test time; the test fails, not skips, without python3.
//
// Both must give the same value, or both refuse the pickle. The decoder is stricter
// than Python on purpose in the cases diffStricter lists (each is its own rule, in
// its own error), and only there may it refuse what Python reads.
//
// MEMLAB_DIFF_SEED and MEMLAB_DIFF_N change the corpus (default seed 1, 1500 values);
// MEMLAB_DIFF_ALL=1 logs every mismatch, not only the first three with reproducers.

// diffStricter are the decoder's rules that refuse pickles Python reads, by the
// words of their errors.
var diffStricter = []string{
	"refused: a memory snapshot holds only plain values", // imports, calls, objects
	"values at STOP, want 1",                             // values left on the stack
	"MARKs left open at STOP",
	"memlab reads integers of at most", // integers of more than maxIntBytes / maxIntDigits
	"is a tuple of more than",          // keys of more than maxKeyItems values
	"is a tuple nested more than",      // keys nested more than maxDepth
	// An opcode that straddles the end of a FRAME: Python's own pickle.py refuses
	// it ("pickle exhausted before end of frame"); _pickle.c, reading a file, drops
	// the rest of the frame and reads on from its end.
	"straddles a FRAME's end",
}

type pyAnswer struct {
	Name      string          `json:"name"`
	Data      string          `json:"data"`
	OK        bool            `json:"ok"`
	Value     json.RawMessage `json:"value"`
	Error     string          `json:"error"`
	NoVerdict bool            `json:"noverdict"`
}

func TestDifferentialPython(t *testing.T) {
	seed, n := os.Getenv("MEMLAB_DIFF_SEED"), os.Getenv("MEMLAB_DIFF_N")
	if seed == "" {
		seed = "1"
	}
	if n == "" {
		n = "1500"
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is needed for the differential test against CPython's pickle: %v", err)
	}
	cmd := exec.Command(py, filepath.Join("testdata", "pyoracle.py"), "corpus", seed, n)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<28)
	counts := map[string]int{}
	failures := 0
	for sc.Scan() {
		var a pyAnswer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("pyoracle.py: %v", err)
		}
		data, err := base64.StdEncoding.DecodeString(a.Data)
		if err != nil {
			t.Fatal(err)
		}
		verdict, detail := diffCompare(data, &a)
		counts[verdict]++
		if verdict == "MISMATCH" {
			failures++
			if os.Getenv("MEMLAB_DIFF_ALL") != "" {
				t.Logf("%s: %.200s", a.Name, detail)
			}
			if failures <= 3 {
				t.Errorf("%s: memlab and CPython differ: %s\n%s", a.Name, detail, diffReproducer(t, py, data))
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("pyoracle.py: %v\n%s", err, stderr.String())
	}
	total := 0
	for _, c := range counts {
		total += c
	}
	t.Logf("seed %s: %d pickles: %v", seed, total, counts)
	if counts["same value"] < total/4 || counts["both reject"] < total/10 {
		t.Errorf("the corpus is lopsided: %v", counts)
	}
	if failures > 0 {
		t.Errorf("%d of %d pickles differ", failures, total)
	}
}

// diffCompare decodes data and compares with Python's answer: the verdict ("same
// value", "both reject", "stricter: RULE", "no verdict" or "MISMATCH") and, for a
// mismatch, what differs.
func diffCompare(data []byte, a *pyAnswer) (string, string) {
	if a.NoVerdict {
		return "no verdict", ""
	}
	tr, err := unpickle(data)
	switch {
	case err != nil && !a.OK:
		return "both reject", ""
	case err != nil:
		for _, rule := range diffStricter {
			if strings.Contains(err.Error(), rule) {
				return "stricter: " + rule, ""
			}
		}
		return "MISMATCH", fmt.Sprintf("memlab refuses (%v), Python reads %.300s", err, a.Value)
	case !a.OK:
		return "MISMATCH", fmt.Sprintf("Python refuses (%s), memlab reads %.300s", a.Error, diffJSON(tr))
	}
	var want, got any
	if err := json.Unmarshal(a.Value, &want); err != nil {
		return "MISMATCH", err.Error()
	}
	g := diffJSON(tr)
	if g == "" {
		return "no verdict", ""
	}
	if err := json.Unmarshal([]byte(g), &got); err != nil {
		return "MISMATCH", err.Error()
	}
	if !reflect.DeepEqual(got, want) {
		w := string(a.Value)
		i := 0
		for i < len(g) && i < len(w) && g[i] == w[i] {
			i++
		}
		from := max(0, i-80)
		return "MISMATCH", fmt.Sprintf("values differ at character %d of their canonical forms:\nmemlab …%.200s\nPython …%.200s", i, g[from:], w[from:])
	}
	return "same value", ""
}

// diffJSON is the canonical form of the decoded root (pyoracle.py's canon), or ""
// when it has more than 200000 nodes.
func diffJSON(tr *tree) string {
	nodes := 0
	var c func(v value, path []value) (any, error)
	c = func(v value, path []value) (any, error) {
		nodes++
		if nodes > 200000 {
			return nil, errors.New("too large")
		}
		switch v.k {
		case kNone:
			return []any{"N"}, nil
		case kBool:
			return []any{"b", v.n}, nil
		case kInt:
			return []any{"i", strconv.FormatInt(int64(tr.bits(v)), 10)}, nil
		case kUint:
			return []any{"i", strconv.FormatUint(tr.bits(v), 10)}, nil
		case kBig:
			return []any{"i", tr.bigs[v.n].String()}, nil
		case kFloat:
			if math.IsNaN(math.Float64frombits(tr.bits(v))) {
				return []any{"f", "nan"}, nil
			}
			return []any{"f", fmt.Sprintf("%016x", tr.bits(v))}, nil
		case kStr:
			return []any{"s", hex.EncodeToString([]byte(tr.strs[v.n]))}, nil
		case kBytes:
			return []any{"y", hex.EncodeToString(tr.bytes[v.n])}, nil
		}
		if i := slices.Index(path, v); i >= 0 {
			return []any{"r", len(path) - i}, nil
		}
		path = append(path, v)
		var items []any
		if v.k == kDict {
			kv := tr.dict(v).kv
			for i := 0; i < len(kv); i += 2 {
				k, err := c(kv[i], path)
				if err != nil {
					return nil, err
				}
				x, err := c(kv[i+1], path)
				if err != nil {
					return nil, err
				}
				items = append(items, []any{k, x})
			}
			if items == nil {
				items = []any{}
			}
			return []any{"d", items}, nil
		}
		for _, it := range tr.items(v) {
			x, err := c(it, path)
			if err != nil {
				return nil, err
			}
			items = append(items, x)
		}
		tag := map[kind]string{kList: "l", kTuple: "t", kSet: "S", kFrozenSet: "F"}[v.k]
		if v.k == kSet || v.k == kFrozenSet {
			slices.SortFunc(items, func(a, b any) int {
				x, _ := json.Marshal(a)
				y, _ := json.Marshal(b)
				return bytes.Compare(x, y)
			})
		}
		if items == nil {
			items = []any{}
		}
		return []any{tag, items}, nil
	}
	v, err := c(tr.root, nil)
	if err != nil {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// diffReproducer shrinks a pickle on which memlab and Python differ (dropping runs of
// bytes while they still differ, asking Python each time) and renders the smallest
// as a Go string and Python's disassembly of it.
func diffReproducer(t *testing.T, py string, data []byte) string {
	cmd := exec.Command(py, filepath.Join("testdata", "pyoracle.py"), "oracle")
	in, err := cmd.StdinPipe()
	if err != nil {
		return err.Error()
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		return err.Error()
	}
	if err := cmd.Start(); err != nil {
		return err.Error()
	}
	defer func() { in.Close(); io.Copy(io.Discard, outp); cmd.Wait() }()
	rd := bufio.NewReader(outp)
	ask := func(d []byte) (*pyAnswer, error) {
		if _, err := fmt.Fprintln(in, base64.StdEncoding.EncodeToString(d)); err != nil {
			return nil, err
		}
		line, err := rd.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		var a pyAnswer
		return &a, json.Unmarshal(line, &a)
	}
	differs := func(d []byte) bool {
		a, err := ask(d)
		if err != nil {
			return false
		}
		v, _ := diffCompare(d, a)
		return v == "MISMATCH"
	}
	best := data
	for chunk := len(best) / 2; chunk >= 1; chunk /= 2 {
		for i := 0; i+chunk <= len(best); {
			try := append(append([]byte(nil), best[:i]...), best[i+chunk:]...)
			if len(try) > 0 && differs(try) {
				best = try
				continue
			}
			i += chunk
		}
	}
	a, err := ask(best)
	if err != nil {
		return err.Error()
	}
	_, detail := diffCompare(best, a)
	var dbuf bytes.Buffer
	dc := exec.Command(py, "-c", "import pickletools,sys; pickletools.dis(sys.stdin.buffer.read())")
	dc.Stdin = bytes.NewReader(best)
	dc.Stdout, dc.Stderr = &dbuf, &dbuf
	dc.Run()
	return fmt.Sprintf("minimal reproducer (%d of %d bytes): %q\n%s\npickletools.dis:\n%s", len(best), len(data), best, detail, dbuf.String())
}
