package memlab

import (
	"fmt"
	"strings"

	"github.com/janpfeifer/gonb/gonbui"

	"memlab.dev/memlab/lang"
)

// Verdict is what an experiment made of one of the chapter's claims. A cell
// computes it from what it measured and prints it with [Judge], after the
// experiment: the prose before a cell asks the question, the verdict line
// answers it.
type Verdict int

// The four verdicts a claim can get.
// (Each is declared on its own, so that `go doc -short` lists every one.)

// Holds: the measurement agrees with the claim.
const Holds Verdict = 0

// DoesNotHold: the measurement contradicts the claim.
const DoesNotHold Verdict = 1

// Depends: the claim holds in some of the measured cases and not in others.
const Depends Verdict = 2

// PartlyHolds: part of the claim holds, part does not.
const PartlyHolds Verdict = 3

// verdictWords are the verdicts' words, per edition, in the order of the constants.
var verdictWords = map[string][4]string{
	lang.English: {"holds", "does not hold", "depends", "partly holds"},
	lang.Chinese: {"成立", "不成立", "视情况", "部分成立"},
}

// String is the verdict's word in the workbook's current edition.
func (v Verdict) String() string { return v.In(lang.Current()) }

// In is the verdict's word in edition ("holds", "成立", …).
func (v Verdict) In(edition string) string {
	words, ok := verdictWords[edition]
	if !ok {
		words = verdictWords[lang.English]
	}
	if v < Holds || v > PartlyHolds {
		return fmt.Sprintf("Verdict(%d)", int(v))
	}
	return words[v]
}

// HoldsIf is Holds when cond is true and DoesNotHold otherwise: the verdict of
// a claim that a single measured comparison decides.
func HoldsIf(cond bool) Verdict {
	if cond {
		return Holds
	}
	return DoesNotHold
}

// HoldsPartly is the verdict of a claim made of parts, each decided by one
// measured comparison: Holds when every part holds, DoesNotHold when none
// does, PartlyHolds otherwise.
func HoldsPartly(parts ...bool) Verdict {
	switch n := count(parts); {
	case n == len(parts):
		return Holds
	case n == 0:
		return DoesNotHold
	}
	return PartlyHolds
}

// HoldsWhen is the verdict of a claim measured in several cases: Holds when
// it holds in every case, DoesNotHold when in none, Depends otherwise.
func HoldsWhen(cases ...bool) Verdict {
	switch n := count(cases); {
	case n == len(cases):
		return Holds
	case n == 0:
		return DoesNotHold
	}
	return Depends
}

// count is how many of bs are true.
func count(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// verdictFormat is one edition's verdict line: the claim, what was measured,
// the verdict word.
var verdictFormat = map[string]string{
	lang.English: "Chapter: %s | measured: %s → %s",
	lang.Chinese: "教材：%s ｜ 实测：%s → %s",
}

// Judge prints one verdict line: the chapter's claim, what the cell measured
// (format and args, as [Measured] takes them) and the verdict, in the
// workbook's edition —
//
//	Chapter: views take no new memory | measured: 0 bytes for five views → holds
//	教材：视图不占新的数据区 ｜ 实测：五个视图占用 0 bytes → 成立
//
// claim and format are English string constants that lang's catalog
// translates (scripts/mknotebooks checks that every notebook's Judge calls
// have their translations), so both editions run the same code and print
// their own language. Call it after the experiment, with v computed from the
// measurement.
func Judge(claim string, v Verdict, format string, args ...any) {
	fmt.Fprintln(output(), VerdictLine(lang.Current(), claim, v, format, args...))
}

// VerdictLine is the line [Judge] prints in edition, wrapped to
// [OutputWidth] inside a notebook.
func VerdictLine(edition, claim string, v Verdict, format string, args ...any) string {
	f, ok := verdictFormat[edition]
	if !ok {
		f, edition = verdictFormat[lang.English], lang.English
	}
	measured := fmt.Sprintf(lang.TextIn(edition, strings.TrimRight(format, "\n")), Labels(edition, args)...)
	line := fmt.Sprintf(f, lang.TextIn(edition, claim), measured, v.In(edition))
	if gonbui.IsNotebook {
		line = wrapWords(line, OutputWidth)
	}
	return line
}

// ParseVerdict reads a verdict line that [Judge] printed, in either edition
// (a line wrapped in a notebook joined back first): the claim as printed and
// the verdict. ok is false for any other line. Tests use it to compare the
// verdicts of two runs of a notebook, on the simulator and on a GPU.
func ParseVerdict(line string) (claim string, v Verdict, ok bool) {
	line = strings.TrimSpace(line)
	for ed, parts := range verdictParts {
		rest, found := strings.CutPrefix(line, parts[0])
		if !found {
			continue
		}
		i := strings.Index(rest, parts[1])
		j := strings.LastIndex(rest, parts[2])
		if i < 0 || j < i {
			return "", 0, false
		}
		word := rest[j+len(parts[2]):]
		for k, w := range verdictWords[ed] {
			if w == word {
				return rest[:i], Verdict(k), true
			}
		}
		return "", 0, false
	}
	return "", 0, false
}

// verdictParts are the fixed parts of each edition's verdict line: before the
// claim, between the claim and what was measured, before the verdict word.
var verdictParts = map[string][3]string{
	lang.English: {"Chapter: ", " | measured: ", " → "},
	lang.Chinese: {"教材：", " ｜ 实测：", " → "},
}
