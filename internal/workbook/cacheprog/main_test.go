package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServe: a body put is found by a later get, in the private folder; an
// entry of the seed (written in the go command's layout) is found too, and
// served from the seed, which is never written; an unknown action misses.
func TestServe(t *testing.T) {
	seed, private := t.TempDir(), t.TempDir()
	seedAction, seedOutput := sha256.Sum256([]byte("seed action")), sha256.Sum256([]byte("seed output"))
	if _, err := put(seed, seedAction[:], seedOutput[:], []byte("from the seed")); err != nil {
		t.Fatal(err)
	}
	before := listing(t, seed)
	action, output := sha256.Sum256([]byte("action")), sha256.Sum256([]byte("output"))
	missing := sha256.Sum256([]byte("missing"))
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	enc.Encode(request{ID: 1, Command: "put", ActionID: action[:], OutputID: output[:], BodySize: 5})
	enc.Encode([]byte("hello"))
	enc.Encode(request{ID: 2, Command: "get", ActionID: action[:]})
	enc.Encode(request{ID: 3, Command: "get", ActionID: seedAction[:]})
	enc.Encode(request{ID: 4, Command: "get", ActionID: missing[:]})
	enc.Encode(request{ID: 5, Command: "close"})
	var out bytes.Buffer
	if err := serve(seed, private, &in, &out); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&out)
	var resps []response
	for {
		var r response
		if err := dec.Decode(&r); err != nil {
			break
		}
		resps = append(resps, r)
	}
	if len(resps) != 6 || len(resps[0].KnownCommands) != 3 {
		t.Fatalf("responses %+v; want the capabilities and 5 answers", resps)
	}
	if p := resps[1].DiskPath; !strings.HasPrefix(p, private) || read(t, p) != "hello" {
		t.Errorf("put: disk path %q; want the body in the private folder", p)
	}
	if r := resps[2]; r.Miss || !bytes.Equal(r.OutputID, output[:]) || r.Size != 5 || read(t, r.DiskPath) != "hello" {
		t.Errorf("get of the put action: %+v; want its output and body", r)
	}
	if r := resps[3]; r.Miss || !strings.HasPrefix(r.DiskPath, seed) || read(t, r.DiskPath) != "from the seed" {
		t.Errorf("get of the seed's action: %+v; want the seed's body", r)
	}
	if !resps[4].Miss {
		t.Errorf("get of an unknown action: %+v; want a miss", resps[4])
	}
	if after := listing(t, seed); after != before {
		t.Errorf("the seed changed:\n%s\nwas:\n%s", after, before)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// listing returns the files under dir with their sizes.
func listing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil {
			b.WriteString(p + " " + info.ModTime().String() + "\n")
		}
		return nil
	})
	return b.String()
}
