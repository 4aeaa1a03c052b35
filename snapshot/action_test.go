package snapshot

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestActionNames: every action reads back from PyTorch's name (ParseAction, JSON),
// and a value that names none is an error, not a number or an empty name.
func TestActionNames(t *testing.T) {
	all := []Action{ActionAlloc, ActionFreeRequested, ActionFreeCompleted, ActionSegmentAlloc,
		ActionSegmentFree, ActionSegmentMap, ActionSegmentUnmap, ActionOOM, ActionSnapshot}
	for _, a := range all {
		back, ok := ParseAction(a.String())
		if !ok || back != a {
			t.Errorf("ParseAction(%q) = %v, %v; want %v", a.String(), back, ok, a)
		}
		b, err := json.Marshal(a)
		if err != nil || string(b) != `"`+a.String()+`"` {
			t.Errorf("json of %v: %s, %v", a, b, err)
		}
		var u Action
		if err := json.Unmarshal(b, &u); err != nil || u != a {
			t.Errorf("json %s read back as %v, %v", b, u, err)
		}
	}
	if ActionAlloc.String() != "alloc" || ActionOOM.String() != "oom" {
		t.Errorf("names: %s, %s", ActionAlloc, ActionOOM)
	}
	if s := Action(200).String(); s != "Action(200)" {
		t.Errorf("Action(200).String() = %q", s)
	}
	if _, err := json.Marshal(Action(0)); err == nil {
		t.Error("Action(0) marshalled without an error")
	}
	var u Action
	if err := json.Unmarshal([]byte(`"teleport"`), &u); err == nil || !strings.Contains(err.Error(), "teleport") {
		t.Errorf("unknown name: %v", err)
	}
	if _, ok := ParseAction("empty_cache"); ok {
		t.Error(`ParseAction("empty_cache") is memlab's own event, not PyTorch's`)
	}
}
