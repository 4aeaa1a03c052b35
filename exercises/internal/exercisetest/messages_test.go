package exercisetest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// msgCall matches msg("en", "zh") and Msg("en", "zh") in the exercises' tests.
var msgCall = regexp.MustCompile(`\b[mM]sg\(("(?:[^"\\]|\\.)*"), ("(?:[^"\\]|\\.)*")\)`)

// verb matches a fmt verb, with an optional explicit argument index.
var verb = regexp.MustCompile(`%(?:\[(\d+)\])?[-+# 0]*\d*(?:\.\d+)?([a-zA-Z%])`)

// verbs lists a format's verbs in argument order (explicit indexes applied),
// %% aside.
func verbs(format string) []string {
	var out []string
	next := 1
	byArg := map[int]string{}
	for _, m := range verb.FindAllStringSubmatch(format, -1) {
		if m[2] == "%" {
			continue
		}
		if m[1] != "" {
			next, _ = strconv.Atoi(m[1])
		}
		byArg[next] = m[2]
		next++
	}
	for i := 1; i <= len(byArg); i++ {
		out = append(out, byArg[i])
	}
	return out
}

// TestMessagesInBothLanguages checks every two-language failure message of
// the exercises' tests: the Chinese has Chinese in it and takes the same
// arguments, of the same kinds, as the English.
func TestMessagesInBothLanguages(t *testing.T) {
	files, err := filepath.Glob("../../[0-9][0-9]-*/*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no exercise tests found (%v)", err)
	}
	pairs := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgCall.FindAllStringSubmatch(string(data), -1) {
			en, err1 := strconv.Unquote(m[1])
			zh, err2 := strconv.Unquote(m[2])
			if err1 != nil || err2 != nil {
				t.Errorf("%s: cannot read %s", f, m[0])
				continue
			}
			pairs++
			if !strings.ContainsFunc(zh, func(r rune) bool { return r >= 0x4e00 && r <= 0x9fff }) {
				t.Errorf("%s: the Chinese of %q has no Chinese: %q", f, en, zh)
			}
			if ve, vz := verbs(en), verbs(zh); !slices.Equal(ve, vz) {
				t.Errorf("%s: %q takes %v, its Chinese %q takes %v", f, en, ve, zh, vz)
			}
		}
	}
	if pairs < 400 {
		t.Errorf("%d two-language messages in the exercises' tests, want every failure message (over 400)", pairs)
	}
}

func TestVerbs(t *testing.T) {
	if got := verbs("%[2]s 中 %[1]d，%%，%[3]q %v"); !slices.Equal(got, []string{"d", "s", "q", "v"}) {
		t.Errorf("verbs: %v", got)
	}
}
