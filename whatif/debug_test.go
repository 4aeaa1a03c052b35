package whatif

import (
	"fmt"
	"os"
	"testing"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/snapshot"
)

func TestDebugTrace(t *testing.T) {
	p := os.Getenv("WHATIF_DEBUG")
	if p == "" {
		return
	}
	s, err := snapshot.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := allocator.ParseConfig(os.Getenv("WHATIF_CONF"))
	h, err := prepare(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	debugHook = func(o op, a *allocator.Allocator) {
		m := a.MemoryStats()
		fmt.Printf("%d %d id=%d sz=%d s=%d isb=%d peak=%d seg=%d\n", o.event, o.kind, o.id, o.size>>10, o.stream%1000, m["inactive_split_bytes.all.current"]>>10, m["inactive_split_bytes.all.peak"]>>10, m["segment.all.current"])
	}
	defer func() { debugHook = nil }()
	if _, err := replay(h, Setting{Conf: cfg}, Options{}); err != nil {
		t.Fatal(err)
	}
}
