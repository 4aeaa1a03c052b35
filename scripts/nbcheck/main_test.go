package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	const png = `{"output_type":"display_data","data":{"image/png":"iVBOR"},"metadata":{}}`
	tests := []struct {
		name string
		nb   string
		want []string // substrings, one per expected problem; none means clean
	}{
		{"clean", `{"cells":[{"cell_type":"code","execution_count":1,"source":"x","metadata":{},"outputs":[{"output_type":"stream","name":"stdout","text":["ok\n"]}]}]}`, nil},
		{"error output", `{"cells":[{"cell_type":"code","execution_count":1,"source":"x","metadata":{},"outputs":[{"output_type":"error","ename":"ERROR","evalue":"compile failed\nmore","traceback":[]}]}]}`, []string{"cell 0: error output ERROR: compile failed …"}},
		{"panic on stdout", `{"cells":[{"cell_type":"code","execution_count":1,"source":"x","metadata":{},"outputs":[{"output_type":"stream","name":"stdout","text":"hi\npanic: boom\n"}]}]}`, []string{"panic: boom"}},
		{"error on stderr", `{"cells":[{"cell_type":"code","execution_count":1,"source":"x","metadata":{},"outputs":[{"output_type":"stream","name":"stderr","text":"Error: x\n"}]}]}`, []string{"stderr: Error: x"}},
		{"harmless stderr", `{"cells":[{"cell_type":"code","execution_count":1,"source":"x","metadata":{},"outputs":[{"output_type":"stream","name":"stderr","text":"memlab: no usable GPU (cannot load libcuda.so.1: no such file); using the simulated device\n"}]}]}`, nil},
		{"failed on stderr", `{"cells":[{"cell_type":"code","execution_count":1,"source":"x","metadata":{},"outputs":[{"output_type":"stream","name":"stderr","text":"exit status 2\n"}]}]}`, []string{"stderr: exit status 2"}},
		{"exercise check: a stub's verdict", `{"cells":[{"cell_type":"code","execution_count":1,"source":"!x","metadata":{"tags":["exercise-check"]},"outputs":[{"output_type":"stream","name":"stdout","text":"Block: not implemented yet\nTODO  exercise 17 is not started\n"},{"output_type":"stream","name":"stderr","text":"exit status 1\n"}]}]}`, nil},
		{"exercise check without verdict", `{"cells":[{"cell_type":"code","execution_count":1,"source":"!x","metadata":{"tags":["exercise-check"]},"outputs":[{"output_type":"stream","name":"stderr","text":"go: cannot find main module\n"}]}]}`, []string{`tagged "exercise-check" but shows no verdict`}},
		{"never executed", `{"cells":[{"cell_type":"code","execution_count":null,"source":"x","metadata":{},"outputs":[]}]}`, []string{"never executed"}},
		{"empty cell not executed", `{"cells":[{"cell_type":"code","execution_count":null,"source":"  ","metadata":{},"outputs":[]}]}`, nil},
		{"plot tag without image", `{"cells":[{"cell_type":"code","execution_count":1,"source":"x","metadata":{"tags":["plot"]},"outputs":[]}]}`, []string{`tagged "plot" but shows no image`}},
		{"plot tag with image", `{"cells":[{"cell_type":"code","execution_count":1,"source":"x","metadata":{"tags":["plot"]},"outputs":[` + png + `]}]}`, nil},
		{"section without plot", `{"metadata":{"memlab":{"plot_per_section":true}},"cells":[
			{"cell_type":"markdown","source":"## 2.1 Storage\ntext","metadata":{}},
			{"cell_type":"code","execution_count":1,"source":"x","metadata":{},"outputs":[` + png + `]},
			{"cell_type":"markdown","source":["## 2.2 Cache\n"],"metadata":{}},
			{"cell_type":"code","execution_count":2,"source":"x","metadata":{},"outputs":[]},
			{"cell_type":"markdown","source":["## Exercises\n"],"metadata":{}}]}`, []string{`section "2.2 Cache" shows no plot`}},
		{"html svg counts as plot", `{"metadata":{"memlab":{"plot_per_section":true}},"cells":[
			{"cell_type":"markdown","source":"## A","metadata":{}},
			{"cell_type":"code","execution_count":1,"source":"x","metadata":{},"outputs":[{"output_type":"display_data","data":{"text/html":"<svg></svg>"},"metadata":{}}]}]}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var nb notebook
			if err := json.Unmarshal([]byte(tt.nb), &nb); err != nil {
				t.Fatal(err)
			}
			got := check(&nb)
			if len(got) != len(tt.want) {
				t.Fatalf("check() = %q, want %d problems like %q", got, len(tt.want), tt.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestRunExitCodes(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.ipynb")
	bad := filepath.Join(dir, "bad.ipynb")
	junk := filepath.Join(dir, "junk.ipynb")
	os.WriteFile(good, []byte(`{"cells":[]}`), 0o644)
	os.WriteFile(bad, []byte(`{"cells":[{"cell_type":"code","execution_count":null,"source":"x","metadata":{},"outputs":[]}]}`), 0o644)
	os.WriteFile(junk, []byte(`not json`), 0o644)
	tests := []struct {
		files []string
		code  int
	}{
		{nil, 2},
		{[]string{good}, 0},
		{[]string{good, bad}, 1},
		{[]string{junk}, 1},
		{[]string{filepath.Join(dir, "missing.ipynb")}, 1},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		if got := run(tt.files, &out); got != tt.code {
			t.Errorf("run(%q) = %d, want %d; output:\n%s", tt.files, got, tt.code, out.String())
		}
	}
}
