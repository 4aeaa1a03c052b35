// Command bigsnapshot makes a big memory snapshot from a real one by repeating its
// history, for measuring memlab whatif on snapshots of the size long jobs write
// (hundreds of MB to GBs). Each repetition but the last is followed by the frees
// that return the allocator to where the history began (every block the history
// still holds is freed, every segment it made is released), so that the next
// repetition can replay the same addresses; time stamps move on by the history's
// span each time. The last repetition is left as recorded, so the snapshot's
// segments still describe its end. Each repetition has its own stacks (its Python
// lines moved on), unless -same-stacks; the file is written as PyTorch's pickler
// writes one (snapshot.Snapshot.Write). -read FILE only reads a snapshot, as
// memlab does, to time that beside pickle.load.
//
//	go run ./scripts/bigsnapshot -from reference/workloads-2.11/gpt2_generate__default.pickle -size 80MiB -o /tmp/big.pickle
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"memlab.dev/memlab/snapshot"
	"memlab.dev/memlab/units"
)

func main() {
	from := flag.String("from", "reference/workloads-2.11/gpt2_generate__default.pickle", "the real snapshot whose history is repeated")
	size := flag.String("size", "80MiB", "the size to reach, about (the file is a whole number of repetitions)")
	out := flag.String("o", "", "the snapshot to write (must not exist)")
	same := flag.Bool("same-stacks", false, "repeat the stacks as recorded (denser: every repetition's frames are references to the first's)")
	read := flag.String("read", "", "only read this snapshot as memlab does (snapshot.ReadFile) and print its trace entries: memlab's reading, timed beside pickle.load")
	times := flag.Int("times", 1, "with -read: read it this many times in one process, printing each read's wall time")
	inMemory := flag.Bool("in-memory", false, "with -read: read the file into memory and decode it there (snapshot.Read) instead of from a mapping")
	cpuProfile := flag.String("cpuprofile", "", "with -read: write a CPU profile of the reads to this file")
	flag.Parse()
	if *read != "" {
		if err := readTimes(*read, *times, *inMemory, *cpuProfile); err != nil {
			fmt.Fprintln(os.Stderr, "bigsnapshot:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*from, *size, *out, !*same); err != nil {
		fmt.Fprintln(os.Stderr, "bigsnapshot:", err)
		os.Exit(1)
	}
}

// readTimes reads the snapshot at path n times as memlab does (snapshot.ReadFile, or
// snapshot.Read of the file read into memory when inMemory), printing its entries and,
// for more than one read, each read's wall time; with a profile path, under the CPU
// profiler.
func readTimes(path string, n int, inMemory bool, profile string) error {
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	for i := 0; i < max(n, 1); i++ {
		start := time.Now()
		var s *snapshot.Snapshot
		var err error
		if inMemory {
			var data []byte
			if data, err = os.ReadFile(path); err == nil {
				s, err = snapshot.Read(bytes.NewReader(data))
			}
		} else {
			s, err = snapshot.ReadFile(path)
		}
		if err != nil {
			return err
		}
		if n > 1 {
			fmt.Printf("read %d: %.3f s\n", i+1, time.Since(start).Seconds())
		}
		if i == 0 {
			fmt.Printf("%s: %d trace entries\n", path, entries(s))
		}
	}
	return nil
}

func run(from, size, out string, distinct bool) error {
	if out == "" {
		return fmt.Errorf("give -o FILE")
	}
	want, err := units.ParseBytes(size)
	if err != nil {
		return err
	}
	fi, err := os.Stat(from)
	if err != nil {
		return err
	}
	s, err := snapshot.ReadFile(from)
	if err != nil {
		return err
	}
	reps := max(1, int(want/uint64(fi.Size())))
	big, err := Repeat(s, reps, distinct)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := big.Write(w); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	st, _ := os.Stat(out)
	fmt.Printf("%s: %d repetitions of %s, %d trace entries, %d bytes\n", out, reps, from, entries(big), st.Size())
	return nil
}

// entries returns the number of trace entries of s, all devices.
func entries(s *snapshot.Snapshot) int {
	n := 0
	for _, t := range s.Traces {
		n += len(t)
	}
	return n
}

// Repeat returns s with each device's history repeated reps times (see the package
// doc), each repetition with its own stacks when distinct is true (see vary).
func Repeat(s *snapshot.Snapshot, reps int, distinct bool) (*snapshot.Snapshot, error) {
	out := *s
	out.Traces = make([][]snapshot.TraceEntry, len(s.Traces))
	for d, tr := range s.Traces {
		if len(tr) == 0 {
			continue
		}
		span := tr[len(tr)-1].TimeUS - tr[0].TimeUS + 1
		cleanup, err := cleanupOf(tr)
		if err != nil {
			return nil, fmt.Errorf("device %d: %w", d, err)
		}
		all := make([]snapshot.TraceEntry, 0, reps*(len(tr)+len(cleanup)))
		for r := range reps {
			shift := int64(r) * span
			stacks := map[*snapshot.Frame][]snapshot.Frame{}
			for _, e := range tr {
				if e.TimeUS != 0 {
					e.TimeUS += shift
				}
				if distinct {
					e.Frames = vary(stacks, e.Frames, r)
				}
				all = append(all, e)
			}
			if r == reps-1 {
				break
			}
			for _, e := range cleanup {
				if e.TimeUS != 0 {
					e.TimeUS = tr[len(tr)-1].TimeUS + shift
				}
				all = append(all, e)
			}
		}
		out.Traces[d] = all
	}
	return &out, nil
}

// vary returns the stack fs of repetition r: each Python frame's line moved on by
// r, so that no two repetitions share a frame or a stack, as the stacks of a long
// real run differ (a history repeated with its stacks would let the reader intern
// what a real file makes it decode). Entries that share a stack share its varied
// one (stacks, by the stack's first frame), as PyTorch's free_requested and
// free_completed share one context.
func vary(stacks map[*snapshot.Frame][]snapshot.Frame, fs []snapshot.Frame, r int) []snapshot.Frame {
	if len(fs) == 0 || r == 0 {
		return fs
	}
	if v, ok := stacks[&fs[0]]; ok && len(v) == len(fs) {
		return v
	}
	v := make([]snapshot.Frame, len(fs))
	for i, f := range fs {
		if f.Line > 0 {
			f.Line += r
		}
		v[i] = f
	}
	stacks[&fs[0]] = v
	return v
}

// cleanupOf returns the entries that free what the history tr holds at its end:
// pending frees completed, blocks freed, segments released.
func cleanupOf(tr []snapshot.TraceEntry) ([]snapshot.TraceEntry, error) {
	type blk struct {
		e       snapshot.TraceEntry
		pending bool
	}
	live := map[uint64]*blk{}
	var order []uint64
	segs := map[uint64]snapshot.TraceEntry{}
	var segOrder []uint64
	for _, e := range tr {
		switch e.Action {
		case snapshot.ActionAlloc:
			live[e.Addr] = &blk{e: e}
			order = append(order, e.Addr)
		case snapshot.ActionFreeRequested:
			if b, ok := live[e.Addr]; ok {
				b.pending = true
			}
		case snapshot.ActionFreeCompleted:
			delete(live, e.Addr)
		case snapshot.ActionSegmentAlloc:
			segs[e.Addr] = e
			segOrder = append(segOrder, e.Addr)
		case snapshot.ActionSegmentFree:
			delete(segs, e.Addr)
		case snapshot.ActionSegmentMap, snapshot.ActionSegmentUnmap:
			return nil, fmt.Errorf("expandable segments (%s) are not repeated: take a snapshot of another setting", e.Action)
		}
	}
	var out []snapshot.TraceEntry
	for _, a := range order {
		b, ok := live[a]
		if !ok {
			continue
		}
		delete(live, a)
		if !b.pending {
			out = append(out, snapshot.TraceEntry{Action: snapshot.ActionFreeRequested, Addr: a, Size: b.e.Size, Stream: b.e.Stream, TimeUS: 1})
		}
		out = append(out, snapshot.TraceEntry{Action: snapshot.ActionFreeCompleted, Addr: a, Size: b.e.Size, Stream: b.e.Stream, TimeUS: 1})
	}
	for _, a := range segOrder {
		if e, ok := segs[a]; ok {
			delete(segs, a)
			out = append(out, snapshot.TraceEntry{Action: snapshot.ActionSegmentFree, Addr: a, Size: e.Size, Stream: e.Stream, TimeUS: 1})
		}
	}
	return out, nil
}
