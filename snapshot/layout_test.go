package snapshot

import (
	"bytes"
	"reflect"
	"runtime"
	"testing"

	"memlab.dev/memlab/reference"
)

// pytorchLayout returns a pickle of a real workload's trace repeated to n
// entries, each repetition with its own stacks (its Python lines moved on, as
// scripts/bigsnapshot does), written as PyTorch's pickler writes a snapshot
// (Write: every dict and list memoized, a free_completed referring to its
// free_requested's frames list): the layout of a big real snapshot, whose memo
// the decoder must keep, and whose stacks it cannot intern away.
func pytorchLayout(t testing.TB, n int) []byte {
	t.Helper()
	path, err := reference.File(reference.Workloads211, "gpt2_generate__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	src := s.Traces[0]
	span := src[len(src)-1].TimeUS - src[0].TimeUS + 1
	big := make([]TraceEntry, 0, n)
	for rep := 0; len(big) < n; rep++ {
		varied := map[*Frame][]Frame{}
		for _, e := range src[:min(len(src), n-len(big))] {
			e.TimeUS += int64(rep) * span
			if len(e.Frames) > 0 && rep > 0 {
				v, ok := varied[&e.Frames[0]]
				if !ok {
					v = append([]Frame(nil), e.Frames...)
					for i := range v {
						if v[i].Line > 0 {
							v[i].Line += rep
						}
					}
					varied[&e.Frames[0]] = v
				}
				e.Frames = v
			}
			big = append(big, e)
		}
	}
	s.Traces[0] = big
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReadPyTorchLayout bounds what reading a big snapshot in PyTorch's layout
// allocates, by counts that no collector timing or machine load changes (issue
// 28: resident at most 3× the file): the streaming decode keeps it (it does not
// give way to the plain one), it gives what the plain decode gives, it makes a
// handful of allocations per thousand entries (the tables grow in chunks, the
// memo is sized by a first count, a frames list met again is a lookup), and the
// bytes it allocates per entry are the converted entry and little more (125 with
// the 72-byte entry, and the entry itself at most 72 bytes; 173 with the 120-byte
// entry; 342 before, when the memo grew by copying, a memoized frames list was
// kept whole and met again through a map, and the chunks of sealed dicts were
// garbage rather than taken again). A free_completed shares its
// free_requested's frames, as the pickle says.
func TestReadPyTorchLayout(t *testing.T) {
	const n = 200000
	data := pytorchLayout(t, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, err := decodeStreaming(data, nil)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("the streaming decode gave way: %v", err)
	}
	tr := got.Traces[0]
	if len(tr) != n {
		t.Fatalf("%d entries, want %d", len(tr), n)
	}
	allocs := float64(after.Mallocs-before.Mallocs) / n * 1000
	perEntry := float64(after.TotalAlloc-before.TotalAlloc) / n
	t.Logf("%d entries, %d bytes of pickle (%.0f per entry): %.1f allocations per 1000 entries, %.0f bytes allocated per entry (the entry itself: %d)",
		n, len(data), float64(len(data))/n, allocs, perEntry, reflect.TypeFor[TraceEntry]().Size())
	if allocs > 20 {
		t.Errorf("%.1f allocations per 1000 entries, want at most 20", allocs)
	}
	if perEntry > 150 {
		t.Errorf("%.0f bytes allocated per entry, want at most 150", perEntry)
	}
	if size := reflect.TypeFor[TraceEntry]().Size(); size > 72 {
		t.Errorf("a TraceEntry is %d bytes, want at most 72 (a million-entry history holds a million)", size)
	}
	stacks := map[*Frame]bool{}
	metas := map[*EntryMeta]bool{}
	pending := map[uint64]*Frame{}
	shared := 0
	for i := range tr {
		e := &tr[i]
		if e.Meta != nil {
			metas[e.Meta] = true
		}
		if len(e.Frames) == 0 {
			continue
		}
		stacks[&e.Frames[0]] = true
		switch e.Action {
		case ActionFreeRequested:
			pending[e.Addr] = &e.Frames[0]
		case ActionFreeCompleted:
			if p, ok := pending[e.Addr]; ok {
				if p != &e.Frames[0] {
					t.Fatalf("entry %d: free_completed does not share its free_requested's frames", i)
				}
				shared++
			}
		}
	}
	// Every entry says compile_context "N/A": they share one EntryMeta.
	if len(metas) != 1 || tr[0].CompileContext() != "N/A" {
		t.Errorf("%d distinct EntryMetas (compile_context %q), want the one all entries share", len(metas), tr[0].CompileContext())
	}
	if shared == 0 || len(stacks) < 200000/40000*50 {
		t.Errorf("%d free pairs sharing frames, %d distinct stacks: the layout is not the one meant", shared, len(stacks))
	}
	plain, err := decodePlain(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, plain) {
		t.Error("the streaming decode differs from the plain one")
	}
}

// BenchmarkReadPyTorchLayout reads a million entries in PyTorch's layout with
// distinct stacks (see pytorchLayout); events/s reported.
func BenchmarkReadPyTorchLayout(b *testing.B) {
	const n = 1000000
	data := pytorchLayout(b, n)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decode(data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
