package main

import (
	"os"
	"path/filepath"
	"testing"

	"memlab.dev/memlab/internal/nbexec"
)

func TestLabNotebook(t *testing.T) {
	dir := t.TempDir()
	pristine := filepath.Join("..", "..", "notebooks", "en", "00-setup-and-tour.ipynb")
	out := filepath.Join(dir, "executed", "00-setup-and-tour.ipynb")
	b, err := os.ReadFile(pristine)
	if err != nil {
		t.Fatal(err)
	}
	unknown := filepath.Join(dir, "99-unknown.ipynb")
	if err := os.WriteFile(unknown, b, 0o644); err != nil {
		t.Fatal(err)
	}
	runCLICases(t, "lab", []cliCase{
		{"execute notebook 00", []string{"-ipynb", pristine, "-o", out, "-device", "sim", "-commit", "test"}, 0, "wrote " + out + " (device sim:0, memlab simulated GPU (80 GiB), 80.00 GiB, commit test)", ""},
		{"-ipynb without -o", []string{"-ipynb", pristine}, 2, "", "-ipynb and -o go together"},
		{"onto itself", []string{"-ipynb", pristine, "-o", pristine, "-commit", "x"}, 2, "", "would overwrite the notebook it executes"},
		{"a notebook memlab does not know", []string{"-ipynb", unknown, "-o", filepath.Join(dir, "x.ipynb"), "-commit", "x"}, 1, "", "no notebook \"99-unknown\" is built into this memlab"},
		{"no such file", []string{"-ipynb", filepath.Join(dir, "none.ipynb"), "-o", filepath.Join(dir, "o.ipynb")}, 1, "", "no such file"},
		{"a bad device", []string{"-ipynb", pristine, "-o", filepath.Join(dir, "bad.ipynb"), "-device", "tpu", "-commit", "x"}, 1, "", "opening the device"},
	})
	if err := nbexec.CheckFile(pristine, out, out); err != nil {
		t.Errorf("the executed notebook is not a fresh copy of its source: %v", err)
	}
	nb, err := nbexec.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := nb.Executed(); s.Command != "memlab lab -ipynb "+pristine+" -o "+out+" -device sim -commit test" {
		t.Errorf("stamped command %q", s.Command)
	}
}
