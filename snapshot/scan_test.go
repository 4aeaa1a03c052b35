package snapshot

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"memlab.dev/memlab/internal/gunzip"
	"memlab.dev/memlab/reference"
)

// plainPickle returns the bytes of the pickle at path, gunzipped (gunzipAll, as
// ReadFile does) when it is gzip-compressed.
func plainPickle(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !gunzip.Magic(data) {
		return data
	}
	plain, err := gunzipAll(bytes.NewReader(data), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return plain
}

// TestCountFramedAgrees counts the PyTorch-written pickles of three reference
// folders frame by frame, in runs of several sizes, and checks the counts against
// one walk from the start: PyTorch's pickles are framed, so the walk on every core
// must take them.
func TestCountFramedAgrees(t *testing.T) {
	var paths []string
	for _, folder := range []string{reference.Workloads211, reference.Programs211, reference.Modern211} {
		p, err := reference.GlobPickles(folder, "*.pickle")
		if err != nil || len(p) == 0 {
			t.Fatalf("%s: %d pickles, %v", folder, len(p), err)
		}
		paths = append(paths, p...)
	}
	for _, path := range paths {
		data := plainPickle(t, path)
		wantDicts, wantMemos := countWalk(data, nil)
		if wantDicts == 0 {
			t.Fatalf("%s: one walk counts no dicts", path)
		}
		frames, stop, ok := splitFrames(data)
		if !ok || len(frames) == 0 {
			t.Fatalf("%s (%d bytes): %d frames, ok %v: PyTorch writes pickles in frames", filepath.Base(path), len(data), len(frames), ok)
		}
		for _, runBytes := range []int{1, 64 << 10, 1 << 20, releaseEvery} {
			var (
				mu       sync.Mutex // release is called on every core
				released []span
			)
			release := func(from, upTo int) {
				mu.Lock()
				released = append(released, span{from, upTo})
				mu.Unlock()
			}
			if runBytes == 1 {
				release = nil // also without a release hook
			}
			dicts, memos, ok := countFramed(data, frames, stop, runBytes, release)
			if !ok || dicts != wantDicts || memos != wantMemos {
				t.Errorf("%s, runs of %d bytes: %d dicts, %d memos (ok %v); one walk: %d, %d", filepath.Base(path), runBytes, dicts, memos, ok, wantDicts, wantMemos)
			}
			if release != nil && coveredBytes(released) != len(data) {
				t.Errorf("%s, runs of %d bytes: released %d of %d bytes", filepath.Base(path), runBytes, coveredBytes(released), len(data))
			}
		}
	}
}

// coveredBytes is how many bytes the spans cover, each counted once.
func coveredBytes(spans []span) int {
	slices.SortFunc(spans, func(a, b span) int { return a.from - b.from })
	n, end := 0, 0
	for _, s := range spans {
		from := max(s.from, end)
		if s.to > from {
			n += s.to - from
			end = s.to
		}
	}
	return n
}

// framed wraps each of parts in a FRAME, after PROTO 4.
func framed(parts ...[]byte) []byte {
	out := []byte{opProto, 4}
	for _, p := range parts {
		out = append(out, opFrame)
		out = binary.LittleEndian.AppendUint64(out, uint64(len(p)))
		out = append(out, p...)
	}
	return out
}

// TestCountFramedGivesWay checks that pickles whose frames do not hold whole
// opcodes, or whose STOP is not at the end of the last frame, are not counted
// frame by frame, and that countDicts still gives one walk's counts for them.
func TestCountFramedGivesWay(t *testing.T) {
	dict := []byte{opEmptyDict, opMemoize}
	cases := map[string][]byte{
		// BINUNICODE of 4 bytes whose bytes lie in the next frame
		"an opcode across two frames":     framed(append(append([]byte{}, dict...), opShortBinUni, 4, 'a'), []byte{'b', 'c', 'd', opPop, opStop}),
		"a STOP in the first frame":       framed(append(append([]byte{}, dict...), opStop), append(append([]byte{}, dict...), opStop)),
		"no STOP":                         framed(dict, dict),
		"a last byte '.' inside a string": framed(dict, []byte{opShortBinUni, 1, '.'}),
	}
	for name, data := range cases {
		frames, stop, ok := splitFrames(data)
		if ok {
			if _, _, ok := countFramed(data, frames, stop, 1, nil); ok {
				t.Errorf("%s: counted frame by frame", name)
			}
		}
		wd, wm := countWalk(data, nil)
		if d, m := countDicts(data, nil); d != wd || m != wm {
			t.Errorf("%s: countDicts %d, %d; one walk %d, %d", name, d, m, wd, wm)
		}
	}
	// A pickle of many tiny frames is not split: the frames' list would outweigh it.
	var tiny [][]byte
	for range 2 * minFrameBytes {
		tiny = append(tiny, []byte{opNone, opPop})
	}
	tiny = append(tiny, []byte{opNone, opStop})
	if frames, _, ok := splitFrames(framed(tiny...)); ok {
		t.Errorf("%d frames of 2 bytes: split into %d", len(tiny), len(frames))
	}
	// And a well-framed one is counted frame by frame.
	good := framed(dict, append(append([]byte{}, dict...), opPop, opStop))
	frames, stop, ok := splitFrames(good)
	if !ok {
		t.Fatal("a well-framed pickle: not split")
	}
	wd, wm := countWalk(good, nil)
	if d, m, ok := countFramed(good, frames, stop, 1, nil); !ok || d != wd || m != wm || m != 2 {
		t.Errorf("a well-framed pickle: %d dicts, %d memos, ok %v; one walk %d, %d", d, m, ok, wd, wm)
	}
}

// FuzzCountFramed checks, on any bytes, that counting frame by frame, whenever it
// does not give way, gives one walk's counts.
func FuzzCountFramed(f *testing.F) {
	f.Add(framed([]byte{opEmptyDict, opMemoize}, []byte{opEmptyDict, opMemoize, opPop, opStop}))
	f.Add(framed([]byte{opShortBinUni, 2, 'a'}, []byte{'b', opStop}))
	f.Fuzz(func(t *testing.T, data []byte) {
		frames, stop, ok := splitFrames(data)
		if !ok {
			return
		}
		for _, runBytes := range []int{1, 16} {
			if d, m, ok := countFramed(data, frames, stop, runBytes, nil); ok {
				if wd, wm := countWalk(data, nil); d != wd || m != wm {
					t.Fatalf("runs of %d bytes: %d dicts, %d memos; one walk %d, %d", runBytes, d, m, wd, wm)
				}
			}
		}
	})
}

// walkByOp is what walk gives, by calling op on each opcode in turn.
func walkByOp(data []byte, p, until, end int) (c opCount, next int, stop bool) {
	for p < until {
		q, isStop := c.op(data, p, end)
		if q < 0 || isStop {
			return c, q, isStop
		}
		p = q
	}
	return c, p, false
}

// checkWalk checks walk against walkByOp on data, from p up to until with
// arguments bounded by end.
func checkWalk(t *testing.T, data []byte, p, until, end int) {
	t.Helper()
	want, wantNext, wantStop := walkByOp(data, p, until, end)
	var got opCount
	next, stop := got.walk(data, p, until, end)
	if next != wantNext || stop != wantStop || (next >= 0 && got != want) {
		t.Fatalf("walk(%d, %d, %d) of % x: next %d, stop %v, counts %+v; op by op: %d, %v, %+v",
			p, until, end, data[:min(len(data), 64)], next, stop, got, wantNext, wantStop, want)
	}
}

// TestWalkAgreesWithOp checks the table-driven walk against op, opcode by opcode,
// on real pickles (whole, and cut at every few bytes) and on every opcode with
// every argument length that fits or runs past the end.
func TestWalkAgreesWithOp(t *testing.T) {
	paths, err := reference.GlobPickles(reference.Workloads211, "*.pickle")
	if err != nil || len(paths) == 0 {
		t.Fatalf("%d pickles, %v", len(paths), err)
	}
	data := plainPickle(t, paths[0])
	checkWalk(t, data, 0, len(data), len(data))
	for end := 0; end < min(len(data), 1<<14); end += 7 {
		checkWalk(t, data, 0, end, end)
		checkWalk(t, data, 0, end/2, end)
	}
	for op := range 256 {
		for _, arg := range [][]byte{nil, {0}, {3, 'a', 'b', 'c'}, {200}, {4, 0, 0, 0, 'a', 'b', 'c', 'd'},
			{0xff, 0xff, 0xff, 0xff}, {1, 0, 0, 0, 0, 0, 0, 0, 'x'}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
			[]byte("12\n"), []byte("a\nb\n"), []byte("a\n")} {
			data := append([]byte{byte(op)}, arg...)
			for end := 1; end <= len(data); end++ {
				checkWalk(t, data, 0, end, end)
				checkWalk(t, append(slices.Clip(data), opStop), 0, end, end)
			}
		}
	}
}

// FuzzWalk checks walk against op on any bytes.
func FuzzWalk(f *testing.F) {
	f.Add([]byte{opEmptyDict, opMemoize, opShortBinUni, 1, 'a', opBinInt, 1, 2, 3, 4, opStop}, 3)
	f.Add([]byte{opBinUnicode8, 1, 0, 0, 0, 0, 0, 0, 0, 'a', opInt, '1', '\n', opStop}, 0)
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		checkWalk(t, data, 0, len(data), len(data))
		if cut >= 0 && cut <= len(data) {
			checkWalk(t, data, 0, cut, len(data))
			checkWalk(t, data, 0, cut, cut)
		}
	})
}
