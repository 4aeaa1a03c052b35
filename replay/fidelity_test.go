package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/internal/fidelity"
	"memlab.dev/memlab/reference"
)

// fidelityTrace is one random trace of scripts/record/fidelity_alloc.py: the
// lines replay reads (header, baseline, one state per op, footer) and
// PyTorch's final memory_summary().
type fidelityTrace struct {
	ID      int               `json:"id"`
	Conf    string            `json:"conf"`
	Lines   []json.RawMessage `json:"lines"`
	Summary string            `json:"summary"`
	Error   string            `json:"error"`
}

// knownAllocatorMismatches lists the recorded traces (by "trace N") where
// memlab's allocator differs from PyTorch's, with the reason.
var knownAllocatorMismatches = map[string]string{}

// TestRandomTracesMatchPyTorch replays every random trace PyTorch 2.11 ran
// under random settings and caps (reference/fidelity-2.11/allocator.jsonl.gz)
// and requires every op's state and the final memory_summary() to match, as
// TestReferenceTraces does. A mismatch prints the settings, the cap and the
// trace up to the first op that differs.
func TestRandomTracesMatchPyTorch(t *testing.T) {
	path, err := reference.File(reference.Fidelity211, "allocator.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	h, traces, err := fidelity.Read[fidelityTrace](path)
	if err != nil {
		t.Fatal(err)
	}
	tally := fidelity.Tally{Suite: "allocator", Known: knownAllocatorMismatches, MaxReports: 5}
	ops, ooms, recordStreams, pending := 0, 0, 0, 0
	for _, ft := range traces {
		key := fmt.Sprintf("trace %d", ft.ID)
		if ft.Error != "" {
			t.Errorf("%s (%q): PyTorch's run failed: %s", key, ft.Conf, ft.Error)
			continue
		}
		var b bytes.Buffer
		for _, l := range ft.Lines {
			b.Write(l)
			b.WriteByte('\n')
		}
		tr, err := Read(&b)
		if err != nil {
			t.Errorf("%s: %v", key, err)
			continue
		}
		tr.Name, tr.Summary = key, ft.Summary
		ops += len(tr.Ops)
		for k, s := range tr.States {
			if s.OOM {
				ooms++
			}
			if tr.Ops[k].Kind == OpRecordStream {
				recordStreams++
			}
			for _, seg := range s.Segments {
				if slices.ContainsFunc(seg.Blocks, func(b BlockState) bool { return b.State == "P" }) {
					pending++
					break
				}
			}
		}
		res, err := Check(tr, Options{})
		if err != nil {
			tally.Case(key, err.Error())
			continue
		}
		if res.OK() {
			tally.Case(key, "")
			continue
		}
		n := res.Diff.Op + 1
		if n <= 0 || n > len(tr.Ops) {
			n = len(tr.Ops)
		}
		prefix, _ := json.Marshal(tr.Ops[:n])
		cap := "none"
		if tr.Header.CapGiB != nil {
			cap = fmt.Sprintf("%v GiB", *tr.Header.CapGiB)
		}
		tally.Case(key, fmt.Sprintf("%d of %d ops matched; first difference:\n%s\n reproducer: PYTORCH_CUDA_ALLOC_CONF=%q, cap %s, trace prefix %s",
			res.Matched, res.Ops, indent(res.Diff.String()), tr.Header.Conf, cap, prefix))
	}
	tally.Note(t, "%d traces, %d ops, %d of them out-of-memory errors, %d record_stream, %d states with a free waiting on another stream", len(traces), ops, ooms, recordStreams, pending)
	tally.Check(t, h.Torch)
}

func indent(s string) string { return "   " + strings.ReplaceAll(s, "\n", "\n   ") }
