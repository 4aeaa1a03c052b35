package replay

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The stream ops read and write their list form, refuse malformed arguments,
// and replay as PyTorch runs them: a block used on another stream is pending
// after its free and back in its stream's cache at the next allocation.
func TestStreamOps(t *testing.T) {
	ops := []Op{{Kind: OpAllocStream, N: 4 << 20, Stream: 1}, {Kind: OpRecordStream, N: 0, Stream: 2}}
	b, err := json.Marshal(ops)
	if err != nil || string(b) != `[["as",4194304,1],["rs",0,2]]` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
	var back []Op
	if err := json.Unmarshal(b, &back); err != nil || back[0] != ops[0] || back[1] != ops[1] {
		t.Fatalf("Unmarshal = %+v, %v", back, err)
	}
	for _, bad := range []string{`[["as",1]]`, `[["rs",0]]`, `[["as",1,-1]]`, `[["rs",null,1]]`, `[["as",1,2,3]]`} {
		if _, err := Read(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "takes two") {
			t.Errorf("%s: %v, want an error saying it takes two integers", bad, err)
		}
	}
	tr, err := Read(bytes.NewReader([]byte(`[["as",4194304,1],["rs",0,2],["f",0],["rs",0,2],["a",512]]`)))
	if err != nil {
		t.Fatal(err)
	}
	var states []State
	if _, err := Run(tr, Options{States: func(s State) { states = append(states, s) }}); err != nil {
		t.Fatal(err)
	}
	blockStates := func(s State) (out []string) {
		for _, seg := range s.Segments {
			for _, b := range seg.Blocks {
				out = append(out, b.State)
			}
		}
		return out
	}
	if got := blockStates(states[2]); len(got) == 0 || got[0] != "P" {
		t.Errorf("after the free: blocks %v, want the freed block pending (P)", got)
	}
	if !states[3].Noop {
		t.Errorf("record_stream of a freed allocation is not a no-op: %+v", states[3])
	}
	if got := blockStates(states[4]); strings.Contains(strings.Join(got, ""), "P") {
		t.Errorf("after the next allocation: blocks %v, want the pending free completed", got)
	}
}
