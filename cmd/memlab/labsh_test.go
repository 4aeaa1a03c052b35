package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"memlab.dev/memlab/lang"
)

// TestLabShPort: scripts/lab.sh start refuses a LAB_PORT that is not a port at
// once, with a clear message (before installing anything), instead of printing a
// dead URL or a Python traceback.
func TestLabShPort(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "lab.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"0", "abc", "65536", "-1", "80 80"} {
		cmd := exec.Command("bash", script, "start")
		cmd.Env = append(cmd.Environ(), "LAB_PORT="+p)
		out, err := cmd.CombinedOutput()
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != 2 || !strings.Contains(string(out), "LAB_PORT="+p+": want a port number from 1 to 65535") {
			t.Errorf("LAB_PORT=%q: exit %d (%v), output %q", p, code, err, out)
		}
		if strings.Contains(string(out), "Traceback") || strings.Contains(string(out), "installing") {
			t.Errorf("LAB_PORT=%q: %q", p, out)
		}
	}
}

// TestLabShMessagesTranslated: every message scripts/lab.sh prints (say and
// tr_fmt formats) has its Chinese in lang/zh-CN/lab.txt, with its verbs in
// the English order (bash's printf has no %[n]s), so the make lab terminal of
// the zh-CN edition speaks Chinese throughout.
func TestLabShMessagesTranslated(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("..", "..", "scripts", "lab.sh"))
	if err != nil {
		t.Fatal(err)
	}
	formats := regexp.MustCompile(`(?m)(?:\bsay|\btr_fmt) "([^"$]*)"`).FindAllStringSubmatch(string(script), -1)
	if len(formats) < 20 {
		t.Fatalf("found %d say formats in scripts/lab.sh; the pattern no longer matches its messages", len(formats))
	}
	for _, f := range formats {
		if !lang.Has(lang.Chinese, f[1]) {
			t.Errorf("scripts/lab.sh: %q has no zh: line in lang/zh-CN/lab.txt", f[1])
			continue
		}
		if zh := lang.TextIn(lang.Chinese, f[1]); strings.Contains(zh, "%[") {
			t.Errorf("lang/zh-CN/lab.txt: %q reorders its verbs, which bash's printf cannot", zh)
		}
	}
}

// TestLabPinsMatch: JupyterLab and its zh-CN language pack are pinned as a
// pair of the same minor version (a pack older than JupyterLab leaves strings in
// English), the same in requirements-lab.in, the hashed requirements-lab.txt
// and scripts/lab.sh's JUPYTERLAB_VERSION.
func TestLabPinsMatch(t *testing.T) {
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join("..", "..", "scripts", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	pin := func(text, pkg string) string {
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(pkg) + `==(\S+)`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no %s== pin", pkg)
		}
		return m[1]
	}
	in, txt := read("requirements-lab.in"), read("requirements-lab.txt")
	lab, pack := pin(in, "jupyterlab"), pin(in, "jupyterlab-language-pack-zh-CN")
	if got := pin(txt, "jupyterlab"); got != lab {
		t.Errorf("requirements-lab.txt pins jupyterlab %s, requirements-lab.in %s: regenerate it", got, lab)
	}
	if got := pin(txt, "jupyterlab-language-pack-zh-cn"); got != pack {
		t.Errorf("requirements-lab.txt pins the language pack %s, requirements-lab.in %s: regenerate it", got, pack)
	}
	minor := func(v string) string {
		parts := strings.SplitN(v, ".", 3)
		if len(parts) < 2 {
			return v
		}
		return parts[0] + "." + strings.TrimSuffix(strings.SplitN(parts[1], "post", 2)[0], ".")
	}
	if minor(lab) != minor(pack) {
		t.Errorf("JupyterLab %s with language pack %s: pin a pair of the same minor version", lab, pack)
	}
	if m := regexp.MustCompile(`(?m)^JUPYTERLAB_VERSION=(\S+)`).FindStringSubmatch(read("lab.sh")); m == nil || m[1] != lab {
		t.Errorf("scripts/lab.sh JUPYTERLAB_VERSION %v, requirements-lab.in %s", m, lab)
	}
}
