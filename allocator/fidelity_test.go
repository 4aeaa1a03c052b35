package allocator

import (
	"fmt"
	"strings"
	"testing"

	"memlab.dev/memlab/internal/fidelity"
	"memlab.dev/memlab/reference"
)

// settingsCase is one random PYTORCH_CUDA_ALLOC_CONF string and what PyTorch
// did with it, as scripts/record/fidelity_settings.py recorded it: Env from
// the environment variable (the truth), Set from
// torch.cuda.memory._set_allocator_settings.
type settingsCase struct {
	ID   int            `json:"id"`
	Conf string         `json:"conf"`
	Env  *settingsReply `json:"env"`
	Set  *settingsReply `json:"set"`
}

type settingsReply struct {
	OK       bool           `json:"ok"`
	Settings map[string]any `json:"settings"`
	Error    string         `json:"error"`
	Type     string         `json:"type"`
}

// internal reports whether PyTorch failed in an internal check (an assert, a
// C++ std::sto* conversion) rather than with a message meant for users.
func (r *settingsReply) internal() bool {
	switch {
	case r.OK:
		return false
	case r.Type != "ValueError", strings.Contains(r.Error, "INTERNAL ASSERT"):
		return true
	}
	switch r.Error {
	case "stoull", "stod", "stoi", "stol", "stoul", "stof":
		return true
	}
	return false
}

// knownSettingsMismatches lists recorded strings (by "string N") where
// ParseConfig differs from PyTorch outside the two documented rules below.
var knownSettingsMismatches = map[string]string{}

// TestSettingsStringsMatchPyTorch checks ParseConfig against PyTorch 2.11 on
// random configuration strings from the grammar and near it
// (reference/fidelity-2.11/settings.jsonl.gz). memlab must: accept what
// PyTorch accepts, with the settings PyTorch reported; reject what PyTorch
// rejects, with PyTorch's message. Two documented rules differ by design
// (config.go): where PyTorch fails in an internal check memlab rejects with
// its own message, and where PyTorch reads a value as something else than is
// written ("-1" as the largest size, "128.5" as 128) memlab rejects and says
// so. The test also counts how often _set_allocator_settings answered as the
// variable did.
func TestSettingsStringsMatchPyTorch(t *testing.T) {
	path, err := reference.File(reference.Fidelity211, "settings.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	h, cases, err := fidelity.Read[settingsCase](path)
	if err != nil {
		t.Fatal(err)
	}
	tally := fidelity.Tally{Suite: "settings", Known: knownSettingsMismatches}
	var internal, reread, setSame, setDiff, setVerdict int
	var setDiffs []string
	for _, c := range cases {
		r := c.Env
		if r == nil {
			t.Fatalf("string %d %q: no answer from the environment variable: record on a GPU machine", c.ID, c.Conf)
		}
		if c.Set != nil {
			if c.Set.OK == r.OK {
				setVerdict++
			}
			if c.Set.OK == r.OK && c.Set.Error == r.Error {
				setSame++
			} else {
				setDiff++
				if len(setDiffs) < 3 {
					setDiffs = append(setDiffs, fmt.Sprintf("%q: variable %s, _set_allocator_settings %s", c.Conf, r.verdict(), c.Set.verdict()))
				}
			}
		}
		key := fmt.Sprintf("string %d", c.ID)
		repro := fmt.Sprintf("\n reproducer: PYTORCH_CUDA_ALLOC_CONF=%q python3 -c 'import torch; torch.empty(1, device=\"cuda\")'; allocator.ParseConfig(%q)", c.Conf, c.Conf)
		cfg, err := ParseConfig(c.Conf)
		switch {
		case r.OK && err == nil:
			if r.Settings != nil {
				if e := sameSettings(cfg, r.Settings); e != nil {
					tally.Case(key, e.Error()+repro)
					continue
				}
			}
			tally.Case(key, "")
		case r.OK && strings.Contains(err.Error(), "PyTorch reads it as"):
			reread++
			tally.Case(key, "")
		case r.OK:
			tally.Case(key, fmt.Sprintf("PyTorch accepts it, memlab: %v%s", err, repro))
		case err == nil:
			tally.Case(key, fmt.Sprintf("PyTorch rejects it (%s), memlab accepts it as %s%s", r.verdict(), cfg, repro))
		case r.internal():
			internal++
			tally.Case(key, "")
		case !strings.HasPrefix(err.Error(), "allocator: config") || !strings.Contains(err.Error(), r.Error):
			tally.Case(key, fmt.Sprintf("message\n   PyTorch: %s\n   memlab:  %v%s", r.Error, err, repro))
		default:
			tally.Case(key, "")
		}
	}
	n, agree := tally.Cases()
	tally.Note(t, "%d strings; %d exactly as PyTorch, %d rejected where PyTorch fails an internal check, %d rejected where PyTorch reads another value than is written",
		n, agree-internal-reread, internal, reread)
	tally.Note(t, "torch.cuda.memory._set_allocator_settings accepted and rejected as PYTORCH_CUDA_ALLOC_CONF did for %d of %d strings, with the same message for %d",
		setVerdict, setSame+setDiff, setSame)
	t.Logf("_set_allocator_settings names an unknown key \"in Accelerator allocator config\" and, where a string has two errors, may report the other first; e.g. %s", strings.Join(setDiffs, "; "))
	tally.Check(t, h.Torch)
}

func (r *settingsReply) verdict() string {
	if r.OK {
		return "accepted"
	}
	return r.Type + " " + r.Error
}
