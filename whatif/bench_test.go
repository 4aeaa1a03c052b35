package whatif

import (
	"math/rand/v2"
	"testing"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/snapshot"
)

// synthetic returns a snapshot whose history has about n trace entries: a training-like
// loop of allocations (activations from 512 bytes to 64 MiB, on the default stream and
// one side stream) freed mostly in reverse order, every free completed at once.
func synthetic(n int) *snapshot.Snapshot { return syntheticDeferred(n, 0) }

// syntheticDeferred is synthetic with every every-th free of a side-stream block
// handed to another stream: its free_completed comes a few allocations later, as
// record_stream makes it.
func syntheticDeferred(n, every int) *snapshot.Snapshot {
	rng := rand.New(rand.NewPCG(1, 2))
	var later []snapshot.TraceEntry // deferred completions, due after some allocations
	var dueIn []int
	sideFrees := 0
	tr := make([]snapshot.TraceEntry, 0, n+2)
	var live []snapshot.TraceEntry
	next := uint64(0x7f0000000000)
	sizes := []int64{512, 4096, 65536, 1 << 20, 3 << 20, 8 << 20, 24 << 20, 64 << 20}
	for len(tr) < n {
		if len(live) > 0 && (len(live) > 400 || rng.IntN(2) == 0) {
			k := len(live) - 1
			if rng.IntN(8) == 0 {
				k = rng.IntN(len(live))
			}
			e := live[k]
			live = append(live[:k], live[k+1:]...)
			tr = append(tr, snapshot.TraceEntry{Action: snapshot.ActionFreeRequested, Addr: e.Addr, Size: e.Size, Stream: e.Stream})
			done := snapshot.TraceEntry{Action: snapshot.ActionFreeCompleted, Addr: e.Addr, Size: e.Size, Stream: e.Stream}
			if e.Stream != 0 {
				sideFrees++
			}
			if e.Stream != 0 && every > 0 && sideFrees%every == 0 {
				later, dueIn = append(later, done), append(dueIn, 1+rng.IntN(8))
			} else {
				tr = append(tr, done)
			}
			continue
		}
		// process_events at this allocation completes the deferred frees that are due
		kept := 0
		for j := range later {
			if dueIn[j]--; dueIn[j] <= 0 {
				tr = append(tr, later[j])
			} else {
				later[kept], dueIn[kept] = later[j], dueIn[j]
				kept++
			}
		}
		later, dueIn = later[:kept], dueIn[:kept]
		size := sizes[rng.IntN(len(sizes))] + int64(rng.IntN(1024))*512
		var stream uint64
		if rng.IntN(4) == 0 {
			stream = 0x5000
		}
		e := snapshot.TraceEntry{Action: snapshot.ActionAlloc, Addr: next, Size: size, Stream: stream}
		next += uint64(size+511)/512*512 + 512
		live = append(live, e)
		tr = append(tr, e)
	}
	return &snapshot.Snapshot{Traces: [][]snapshot.TraceEntry{tr}}
}

func benchSettings(b *testing.B) []Setting {
	b.Helper()
	st, err := ParseSettings("", "expandable_segments:True", "max_split_size_mb:128", "max_split_size_mb:256",
		"roundup_power2_divisions:4", "roundup_power2_divisions:8", "max_split_size_mb:64,garbage_collection_threshold:0.6",
		"expandable_segments:True,roundup_power2_divisions:4")
	if err != nil {
		b.Fatal(err)
	}
	st[6].Cap = 8 << 30
	return st
}

// BenchmarkReplay1M8 replays a 1-million-entry history under 8 settings in parallel.
func BenchmarkReplay1M8(b *testing.B) {
	s := synthetic(1_000_000)
	settings := benchSettings(b)
	b.ResetTimer()
	for b.Loop() {
		res, err := Replay(s, settings, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Runs) != 8 {
			b.Fatal(len(res.Runs))
		}
	}
	b.ReportMetric(float64(len(s.Traces[0]))*8*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkReplay1M8CrossStream is BenchmarkReplay1M8 with one side-stream free in
// four waiting for another stream: each setting also replays the timings of its range.
func BenchmarkReplay1M8CrossStream(b *testing.B) {
	s := syntheticDeferred(1_000_000, 4)
	settings := benchSettings(b)
	b.ResetTimer()
	var timings int
	for b.Loop() {
		res, err := Replay(s, settings, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if res.Runs[0].CrossStreamFrees == 0 {
			b.Fatal("no cross-stream frees")
		}
		timings = res.Runs[0].TimingSchedules
	}
	b.ReportMetric(float64(timings), "timings/setting")
	b.ReportMetric(float64(len(s.Traces[0]))*8*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkExpandableOOMs replays 1 million entries under expandable segments and a cap
// that makes most large requests fail: each failure runs the whole retry path
// (release_cached_blocks), which must not cost a walk over every cached block. The
// replay goes on after each failure (Options.ContinueAfterOOM).
func BenchmarkExpandableOOMs(b *testing.B) {
	s := synthetic(1_000_000)
	cfg, err := allocator.ParseConfig("expandable_segments:True")
	if err != nil {
		b.Fatal(err)
	}
	st := []Setting{{Conf: cfg, Cap: 1 << 30}}
	b.ResetTimer()
	var ooms int64
	for b.Loop() {
		res, err := Replay(s, st, Options{ContinueAfterOOM: true})
		if err != nil {
			b.Fatal(err)
		}
		ooms = res.Runs[0].OOMs
	}
	b.ReportMetric(float64(ooms), "OOMs")
	b.ReportMetric(float64(len(s.Traces[0]))*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}
