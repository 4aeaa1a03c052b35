package ch2

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/replay"
	"memlab.dev/memlab/tensor"
)

// AllocatedVsReserved allocates a 256 MiB tensor, releases it, allocates one
// of the same size again, releases it, and empties the cache, recording
// allocated, reserved and driver-used memory after each step. Releasing a
// tensor lowers allocated memory only; the second tensor reuses the cached
// segment without a new cudaMalloc; EmptyCache gives the segment back, and
// only then does the driver's count (nvidia-smi's) drop.
func AllocatedVsReserved(l *memlab.Lab) (steps Steps, err error) {
	const n = 256 * MiB
	steps.observe(l, "start", nil)
	x, err := bytesTensor(l, n)
	if err != nil {
		return steps, err
	}
	steps.observe(l, "x = empty(256 MiB)", nil)
	if err := x.Release(); err != nil {
		return steps, err
	}
	steps.observe(l, "del x", nil)
	y, err := bytesTensor(l, n)
	if err != nil {
		return steps, err
	}
	steps.observe(l, "y = empty(256 MiB)", nil)
	if err := y.Release(); err != nil {
		return steps, err
	}
	steps.observe(l, "del y", nil)
	if err := l.EmptyCache(); err != nil {
		return steps, err
	}
	steps.observe(l, "empty_cache()", nil)
	return steps, nil
}

// ChapterOps is the chapter's fragmentation story as a trace: allocate and
// free 1024, 512 and 256 MiB in turn, then allocate 768 MiB, empty the cache,
// free, empty the cache again — the ops of PyTorch's ground truth
// shared/reference/torch-2.11/a__*.jsonl.gz.
var ChapterOps = []replay.Op{
	{Kind: replay.OpAlloc, N: 1024 * MiB}, {Kind: replay.OpFree, N: 0},
	{Kind: replay.OpAlloc, N: 512 * MiB}, {Kind: replay.OpFree, N: 1},
	{Kind: replay.OpAlloc, N: 256 * MiB}, {Kind: replay.OpFree, N: 2},
	{Kind: replay.OpAlloc, N: 768 * MiB}, {Kind: replay.OpEmptyCache},
	{Kind: replay.OpFree, N: 3}, {Kind: replay.OpEmptyCache},
}

// SequenceResult is the outcome of [ChapterSequence].
type SequenceResult struct {
	Conf  string
	Steps Steps
	// At768 is the segment map right after the 768 MiB request.
	At768 []memplot.Segment
	// Reference is PyTorch 2.11's state after each op on an H200 (the ground
	// truth file RefFile), when it was found; RefErr says why not otherwise.
	Reference Steps
	RefFile   string
	RefErr    string
}

// ChapterSequence runs [ChapterOps] with tensors on a lab with allocator
// configuration conf and a 4 GiB budget (enough that nothing is under
// pressure, as on the H200 that recorded the ground truth), and loads
// PyTorch's recorded states for the same ops beside it.
//
// With the default configuration the 768 MiB request does not fail: the 1 GiB
// segment cached since the first op is split, 768 MiB handed out and 256 MiB
// left free in it; reserved memory never exceeds 1 GiB. With
// max_split_size_mb:128 cached blocks of 128 MiB or more are never split, so
// every request makes a new segment and reserved memory climbs to 2.5 GiB
// until empty_cache.
func ChapterSequence(s Setup, conf string) (res SequenceResult, err error) {
	res.Conf = conf
	l, err := s.Open(conf, 4096*MiB)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, l.Close()) }()
	var live []*tensor.Tensor
	labels := opLabels(ChapterOps)
	for i, op := range ChapterOps {
		var opErr error
		label := labels[i]
		switch op.Kind {
		case replay.OpAlloc:
			var t *tensor.Tensor
			t, opErr = bytesTensor(l, op.N)
			live = append(live, t) // an OOM still takes an id, as in the trace
		case replay.OpFree:
			opErr = live[op.N].Release()
			live[op.N] = nil
		case replay.OpEmptyCache:
			opErr = l.EmptyCache()
		default:
			return res, fmt.Errorf("ch2: op %d: unexpected %q", i, op.Kind)
		}
		if opErr != nil && !memlab.IsOutOfMemory(opErr) {
			return res, fmt.Errorf("ch2: op %d (%s): %w", i, label, opErr)
		}
		res.Steps.observe(l, label, opErr)
		if op.Kind == replay.OpAlloc && op.N == 768*MiB {
			res.At768 = memlab.Segments(l.Snapshot())
		}
	}
	if err := tensor.ReleaseAll(live...); err != nil {
		return res, err
	}
	res.Reference, res.RefFile, err = loadReference("a__" + confFileName(conf))
	if err != nil {
		res.RefErr = err.Error()
	}
	return res, nil
}

// opLabels names each op as Python would write it: "a0 = empty(1024 MiB)",
// "del a0", "empty_cache()".
func opLabels(ops []replay.Op) []string {
	var out []string
	id := 0
	for _, op := range ops {
		if op.Kind == replay.OpAlloc {
			out = append(out, fmt.Sprintf("a%d = empty(%d MiB)", id, op.N/MiB))
			id++
			continue
		}
		out = append(out, opLabel(op))
	}
	return out
}

func opLabel(op replay.Op) string {
	switch op.Kind {
	case replay.OpAlloc:
		return fmt.Sprintf("empty(%d MiB)", op.N/MiB)
	case replay.OpFree:
		return fmt.Sprintf("del a%d", op.N)
	case replay.OpEmptyCache:
		return "empty_cache()"
	}
	return op.Kind
}

// confFileName names a configuration as the ground-truth files do:
// "default", "max_split_size_mb_128", "expandable_segments_True".
func confFileName(conf string) string {
	if conf == "" {
		return "default"
	}
	return strings.NewReplacer(":", "_", ",", "__").Replace(conf)
}

// loadReference reads PyTorch's states for a ground-truth trace.
func loadReference(name string) (Steps, string, error) {
	dir, err := ReferenceDir()
	if err != nil {
		return nil, "", err
	}
	path := filepath.Join(dir, name+".jsonl.gz")
	tr, err := replay.ReadFile(path)
	if err != nil {
		return nil, path, err
	}
	var out Steps
	labels := opLabels(tr.Ops)
	for i, st := range tr.States {
		s := Step{Label: labels[i], DriverUsed: -1}
		if st.MemoryAllocated != nil {
			s.Allocated = *st.MemoryAllocated
		}
		if st.MemoryReserved != nil {
			s.Reserved = *st.MemoryReserved
		}
		s.DeviceAllocs = st.Stats["num_device_alloc"]
		if st.OOM {
			s.Err = st.Msg
		}
		out = append(out, s)
	}
	return out, path, nil
}

// MatchesReference reports whether allocated and reserved memory agreed with
// PyTorch's after every op (false when no reference was loaded).
func (r SequenceResult) MatchesReference() bool {
	if len(r.Reference) != len(r.Steps) {
		return false
	}
	for i, st := range r.Steps {
		ref := r.Reference[i]
		if st.Allocated != ref.Allocated || st.Reserved != ref.Reserved || (st.Err != "") != (ref.Err != "") {
			return false
		}
	}
	return true
}

// String prints memlab's and PyTorch's states side by side.
func (r SequenceResult) String() string {
	var b strings.Builder
	conf := r.Conf
	if conf == "" {
		conf = "default config"
	}
	fmt.Fprintf(&b, "chapter sequence, %s\n", conf)
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "op\tallocated\treserved\tcudaMalloc calls\tPyTorch 2.11 allocated\tPyTorch reserved\tOOM\t")
	for i, st := range r.Steps {
		ra, rr := "-", "-"
		if i < len(r.Reference) {
			ra, rr = allocator.FormatSize(r.Reference[i].Allocated), allocator.FormatSize(r.Reference[i].Reserved)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\t%v\t\n", st.Label, allocator.FormatSize(st.Allocated),
			allocator.FormatSize(st.Reserved), st.DeviceAllocs, ra, rr, st.Err != "")
	}
	w.Flush()
	switch {
	case r.RefErr != "":
		fmt.Fprintf(&b, "no PyTorch reference to compare with: %s\n", r.RefErr)
	case r.MatchesReference():
		fmt.Fprintf(&b, "every op matches PyTorch 2.11 on an H200 (%s)\n", filepath.Base(r.RefFile))
	default:
		fmt.Fprintf(&b, "DIFFERS from PyTorch 2.11 (%s)\n", filepath.Base(r.RefFile))
	}
	return b.String()
}

// Plot draws the sequence's memory curve.
func (r SequenceResult) Plot() (*memplot.Figure, error) {
	conf := r.Conf
	if conf == "" {
		conf = "default"
	}
	return r.Steps.Plot("chapter sequence (" + conf + ")")
}

// MaxSplitResult compares the chapter sequence under two configurations.
type MaxSplitResult struct {
	Default, MaxSplit SequenceResult
}

// MaxSplitSize runs [ChapterSequence] with the defaults and with
// max_split_size_mb:128. Cached blocks of 128 MiB and more are then never
// split: each request gets a segment of its own, so without memory pressure
// reserved memory peaks at 2.5 GiB instead of 1 GiB (as PyTorch's ground
// truth shows); under pressure those oversize free segments are the first
// released, which is what the option is for (see [Remedies]).
func MaxSplitSize(s Setup) (res MaxSplitResult, err error) {
	if res.Default, err = ChapterSequence(s, ""); err != nil {
		return res, err
	}
	res.MaxSplit, err = ChapterSequence(s, "max_split_size_mb:128")
	return res, err
}

// String prints both runs.
func (r MaxSplitResult) String() string { return r.Default.String() + "\n" + r.MaxSplit.String() }

// Plot draws reserved memory per op for both configurations.
func (r MaxSplitResult) Plot() (*memplot.Figure, error) {
	reserved := func(st Step) int64 { return st.Reserved }
	f, err := memplot.Lines("2.2 reserved memory over the chapter sequence", "op",
		r.Default.Steps.series("reserved, default", reserved), r.MaxSplit.Steps.series("reserved, max_split_size_mb:128", reserved))
	if err != nil {
		return nil, err
	}
	f.LabelX(r.Default.Steps.Labels()...)
	return f, nil
}
