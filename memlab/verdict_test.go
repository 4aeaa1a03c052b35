package memlab

import (
	"testing"

	"memlab.dev/memlab/lang"
)

func TestVerdictLineRoundTrip(t *testing.T) {
	for _, ed := range lang.Editions {
		for v := Holds; v <= PartlyHolds; v++ {
			line := VerdictLine(ed, "views take no new memory", v, "%s for five views", "0 bytes")
			claim, got, ok := ParseVerdict(line)
			if !ok || got != v || claim == "" {
				t.Errorf("%s: ParseVerdict(%q) = %q, %v, %v; want %v", ed, line, claim, got, ok, v)
			}
		}
	}
	if _, _, ok := ParseVerdict("Measured: 4.00 MiB after x"); ok {
		t.Error("ParseVerdict took a Measured line for a verdict")
	}
	if _, _, ok := ParseVerdict("Chapter: x | measured: y → maybe"); ok {
		t.Error("ParseVerdict took an unknown verdict word")
	}
}

func TestVerdictLineFormat(t *testing.T) {
	got := VerdictLine(lang.English, "views take no new memory", PartlyHolds, "%s for five views", "0 bytes")
	want := "Chapter: views take no new memory | measured: 0 bytes for five views → partly holds"
	if got != want {
		t.Errorf("English verdict line %q, want %q", got, want)
	}
	got = VerdictLine(lang.Chinese, "an untranslated claim", DoesNotHold, "untranslated %d", 3)
	want = "教材：an untranslated claim ｜ 实测：untranslated 3 → 不成立"
	if got != want {
		t.Errorf("Chinese verdict line %q, want %q", got, want)
	}
	if HoldsIf(true) != Holds || HoldsIf(false) != DoesNotHold {
		t.Error("HoldsIf does not map true to Holds and false to DoesNotHold")
	}
}

func TestHoldsPartlyAndWhen(t *testing.T) {
	for _, c := range []struct {
		bs            []bool
		partly, where Verdict
	}{
		{[]bool{true, true}, Holds, Holds},
		{[]bool{true, false}, PartlyHolds, Depends},
		{[]bool{false, true, false}, PartlyHolds, Depends},
		{[]bool{false, false}, DoesNotHold, DoesNotHold},
	} {
		if got := HoldsPartly(c.bs...); got != c.partly {
			t.Errorf("HoldsPartly(%v) = %v, want %v", c.bs, got.In(lang.English), c.partly.In(lang.English))
		}
		if got := HoldsWhen(c.bs...); got != c.where {
			t.Errorf("HoldsWhen(%v) = %v, want %v", c.bs, got.In(lang.English), c.where.In(lang.English))
		}
	}
}
