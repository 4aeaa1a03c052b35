// Command cacheprog is the go command's build cache inside the grader's build
// sandbox (GOCACHEPROG): it answers from a read-only seed, the instructor's Go
// build cache, and keeps what the build adds in a private folder that the grader
// removes afterwards. So a submission's build reuses the official packages the
// instructor already compiled, and adds nothing to the instructor's cache.
//
// Usage (set by the grader): GOCACHEPROG="cacheprog SEED PRIVATE". Both folders
// use the go command's own disk layout (xx/<action>-a entries, xx/<output>-d
// bodies); PRIVATE is written, SEED only read.
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// request and response mirror cmd/go/internal/cacheprog's Request and Response.
type request struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	BodySize int64  `json:",omitempty"`
}

type response struct {
	ID            int64      `json:",omitempty"`
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: cacheprog SEED PRIVATE")
		os.Exit(2)
	}
	if err := serve(os.Args[1], os.Args[2], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "cacheprog: %v\n", err)
		os.Exit(1)
	}
}

// serve answers the go command's requests on in, writing responses to out, until
// it sends "close" or closes in.
func serve(seed, private string, in io.Reader, out io.Writer) error {
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	send := func(r response) error {
		if err := enc.Encode(r); err != nil {
			return err
		}
		return w.Flush()
	}
	if err := send(response{KnownCommands: []string{"get", "put", "close"}}); err != nil {
		return err
	}
	dec := json.NewDecoder(bufio.NewReader(in))
	for {
		var req request
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		var body []byte
		if req.Command == "put" && req.BodySize > 0 {
			if err := dec.Decode(&body); err != nil {
				return fmt.Errorf("reading the body of put %d: %w", req.ID, err)
			}
		}
		resp := response{ID: req.ID}
		switch req.Command {
		case "get":
			if !get(private, req.ActionID, &resp) && !get(seed, req.ActionID, &resp) {
				resp = response{ID: req.ID, Miss: true}
			}
		case "put":
			p, err := put(private, req.ActionID, req.OutputID, body)
			if err != nil {
				resp.Err = err.Error()
			}
			resp.DiskPath = p
		case "close":
			return send(resp)
		default:
			resp.Err = "unknown command " + strconv.Quote(req.Command)
		}
		if err := send(resp); err != nil {
			return err
		}
	}
}

// name returns the path of the cache file of id with the suffix key ("a" or "d").
func name(dir string, id []byte, key string) string {
	return filepath.Join(dir, fmt.Sprintf("%02x", id[0]), hex.EncodeToString(id)+"-"+key)
}

// get looks action up in the disk cache dir and fills r on a hit.
func get(dir string, action []byte, r *response) bool {
	if len(action) != sha256.Size {
		return false
	}
	entry, err := os.ReadFile(name(dir, action, "a"))
	if err != nil {
		return false
	}
	// "v1 <action hex> <output hex> <size, 20 wide> <time, 20 wide>\n"
	f := strings.Fields(string(entry))
	if len(f) != 5 || f[0] != "v1" || f[1] != hex.EncodeToString(action) {
		return false
	}
	outID, err := hex.DecodeString(f[2])
	if err != nil || len(outID) != sha256.Size {
		return false
	}
	size, err1 := strconv.ParseInt(f[3], 10, 64)
	nanos, err2 := strconv.ParseInt(f[4], 10, 64)
	if err1 != nil || err2 != nil || size < 0 {
		return false
	}
	body := name(dir, outID, "d")
	st, err := os.Stat(body)
	if err != nil || !st.Mode().IsRegular() || st.Size() != size {
		return false // a cached executable (a folder) or a damaged entry: build it again
	}
	t := time.Unix(0, nanos)
	r.OutputID, r.Size, r.Time, r.DiskPath = outID, size, &t, body
	return true
}

// put stores body under output and the entry of action in the disk cache dir
// and returns the body's path.
func put(dir string, action, output, body []byte) (string, error) {
	if len(action) != sha256.Size || len(output) != sha256.Size {
		return "", errors.New("put: bad action or output ID")
	}
	p := name(dir, output, "d")
	if err := writeFile(p, body); err != nil {
		return "", err
	}
	entry := fmt.Sprintf("v1 %x %x %20d %20d\n", action, output, len(body), time.Now().UnixNano())
	return p, writeFile(name(dir, action, "a"), []byte(entry))
}

// writeFile writes data to p through a temporary file and a rename.
func writeFile(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp := p + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, p)
}
