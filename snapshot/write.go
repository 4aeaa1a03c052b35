package snapshot

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"memlab.dev/memlab/allocator"
)

// FromAllocator converts a memlab allocator's snapshot to PyTorch's model: its
// segments on the allocator's device, its history as that device's trace (memlab's
// own "empty_cache" events are left out: PyTorch has no such action), and its
// settings.
func FromAllocator(a allocator.Snapshot) *Snapshot {
	frames := func(fs []allocator.Frame) []Frame {
		if len(fs) == 0 {
			return nil
		}
		out := make([]Frame, len(fs))
		for i, f := range fs {
			out[i] = Frame{Filename: f.File, Line: f.Line, Name: f.Function}
		}
		return out
	}
	s := &Snapshot{Settings: settingsFrom(a.Settings), HasSettings: true}
	s.Segments = make([]Segment, len(a.Segments))
	for i, seg := range a.Segments {
		out := Segment{
			Device: a.Device, Address: seg.Address, TotalSize: seg.TotalSize,
			AllocatedSize: seg.AllocatedSize, ActiveSize: seg.ActiveSize, RequestedSize: seg.RequestedSize,
			Stream: seg.Stream, SegmentType: seg.Pool, Expandable: seg.Expandable, Blocks: make([]Block, len(seg.Blocks)),
		}
		for j, b := range seg.Blocks {
			out.Blocks[j] = Block{Address: b.Address, Size: b.Size, RequestedSize: b.RequestedSize, State: b.State, Frames: frames(b.Frames)}
		}
		s.Segments[i] = out
	}
	s.Traces = make([][]TraceEntry, a.Device+1)
	for i := range s.Traces {
		s.Traces[i] = []TraceEntry{}
	}
	tr := make([]TraceEntry, 0, len(a.Trace))
	for _, e := range a.Trace {
		act, ok := ParseAction(string(e.Action))
		if !ok { // memlab's own empty_cache
			continue
		}
		te := TraceEntry{Action: act, Size: e.Size, Stream: e.Stream, TimeUS: e.Time.UnixMicro(), Frames: frames(e.Frames)}
		if act == ActionOOM {
			te.Meta = &EntryMeta{DeviceFree: int64(e.Addr)}
		} else {
			te.Addr = e.Addr
		}
		tr = append(tr, te)
	}
	s.Traces[a.Device] = tr
	return s
}

// Write writes a memlab allocator's snapshot as torch.cuda.memory._dump_snapshot()
// does (see [FromAllocator] and [Snapshot.Write]).
func Write(w io.Writer, a allocator.Snapshot) error {
	return FromAllocator(a).Write(w)
}

// Write pickles the snapshot with protocol 4 and PyTorch 2.11's key order: a file
// that pickle.load, `python -m torch.cuda._memory_viz` and pytorch.org/memory_viz
// read like one torch.cuda.memory._dump_snapshot() wrote, and that [Read] reads
// back equal. Only the opcodes for dicts, lists, tuples, strings, integers, floats,
// booleans and None are used. As Python's pickler does, every string, dict and list
// is memoized, a string or frame met again is a reference to it, and a
// free_completed entry refers to its free_requested's frames list (PyTorch gives
// both one context), so a big history costs the decoder what PyTorch's does.
func (s *Snapshot) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := &pickler{w: bw}
	p.raw(0x80, 4) // PROTO 4
	p.snapshot(s)
	p.raw('.') // STOP
	if p.err != nil {
		return fmt.Errorf("snapshot: writing pickle: %w", p.err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("snapshot: writing pickle: %w", err)
	}
	return nil
}

type pickler struct {
	w         *bufio.Writer
	err       error
	buf       [9]byte
	memo      map[string]uint32  // strings written so far, by memo index
	frameMemo map[Frame]uint32   // frame dicts written so far, by memo index
	next      uint32             // the next memo index
	freeing   map[uint64]freeing // frames lists of blocks freed but not yet completed, by address
}

// get writes a BINGET or LONG_BINGET of memo index i.
func (p *pickler) get(i uint32) {
	if i < 256 {
		p.raw('h', byte(i))
		return
	}
	p.buf[0] = 'j'
	binary.LittleEndian.PutUint32(p.buf[1:], i)
	p.raw(p.buf[:5]...)
}

// memoize stores the value on top of the stack under the next memo index and
// returns it, or returns false when the indices are exhausted.
func (p *pickler) memoize() (uint32, bool) {
	if p.next == math.MaxUint32 {
		return 0, false
	}
	p.raw(0x94) // MEMOIZE
	p.next++
	return p.next - 1, true
}

// raw writes opcode and argument bytes (byte by byte, so that bs stays on the
// caller's stack).
func (p *pickler) raw(bs ...byte) {
	for _, c := range bs {
		if p.err != nil {
			return
		}
		p.err = p.w.WriteByte(c)
	}
}

// Containers are EMPTY_DICT/EMPTY_LIST, then MARK … SETITEMS/APPENDS around
// their items (left out when there are none).
const (
	dict = '}'
	list = ']'
)

// open starts a container, memoized as Python's pickler memoizes every dict and
// list (EMPTY_DICT, MEMOIZE), and returns its memo index (ok false when the
// indices are exhausted).
func (p *pickler) open(kind byte, n int) (idx uint32, ok bool) {
	p.raw(kind)
	idx, ok = p.memoize()
	if n > 0 {
		p.raw('(')
	}
	return idx, ok
}

// batch is how many items Python's pickler puts between a MARK and its
// APPENDS/SETITEMS; more go in further batches.
const batch = 1000

// nextItem starts item i of a container opened with n items: a new batch every
// batch items, as Python's pickler writes (a reader's stack then holds one batch
// of a trace, not the whole trace).
func (p *pickler) nextItem(kind byte, i int) {
	if i > 0 && i%batch == 0 {
		p.close(kind, i)
		p.raw('(')
	}
}

func (p *pickler) close(kind byte, n int) {
	if n > 0 {
		if kind == dict {
			p.raw('u')
		} else {
			p.raw('e')
		}
	}
}

// str writes a string, memoized: a string written before is a BINGET of it, so
// the names and file names of frames are stored once, as in PyTorch's pickles.
func (p *pickler) str(x string) {
	if i, ok := p.memo[x]; ok {
		p.get(i)
		return
	}
	if len(x) < 256 {
		p.raw(0x8c, byte(len(x))) // SHORT_BINUNICODE
	} else {
		p.buf[0] = 'X' // BINUNICODE
		binary.LittleEndian.PutUint32(p.buf[1:], uint32(len(x)))
		p.raw(p.buf[:5]...)
	}
	if p.err == nil {
		_, p.err = p.w.WriteString(x)
	}
	if i, ok := p.memoize(); ok {
		if p.memo == nil {
			p.memo = map[string]uint32{}
		}
		p.memo[x] = i
	}
}

func (p *pickler) bool(x bool) {
	if x {
		p.raw(0x88)
	} else {
		p.raw(0x89)
	}
}

func (p *pickler) float(x float64) {
	p.buf[0] = 'G'
	binary.BigEndian.PutUint64(p.buf[1:], math.Float64bits(x))
	p.raw(p.buf[:9]...)
}

func (p *pickler) int(x int64) {
	switch {
	case x >= 0 && x < 256:
		p.raw('K', byte(x))
	case x >= 0 && x < 65536:
		p.raw('M', byte(x), byte(x>>8))
	case x >= math.MinInt32 && x <= math.MaxInt32:
		p.buf[0] = 'J'
		binary.LittleEndian.PutUint32(p.buf[1:], uint32(int32(x)))
		p.raw(p.buf[:5]...)
	default:
		// LONG1: little-endian two's complement, shortest form.
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(x))
		n := 8
		for n > 1 && ((b[n-1] == 0 && b[n-2]&0x80 == 0) || (b[n-1] == 0xff && b[n-2]&0x80 != 0)) {
			n--
		}
		p.raw(0x8a, byte(n))
		p.raw(b[:n]...)
	}
}

func (p *pickler) uint(x uint64) {
	if x <= math.MaxInt64 {
		p.int(int64(x))
		return
	}
	var b [9]byte
	binary.LittleEndian.PutUint64(b[:], x) // b[8] = 0 keeps it positive
	p.raw(0x8a, 9)
	p.raw(b[:9]...)
}

// frames writes a list of frame dicts and returns its memo index; a frame written
// before is a reference to its dict, as in PyTorch's pickles.
func (p *pickler) frames(fs []Frame) (uint32, bool) {
	li, lok := p.open(list, len(fs))
	for _, f := range fs {
		if i, ok := p.frameMemo[f]; ok {
			p.get(i)
			continue
		}
		i, ok := p.open(dict, 3)
		p.str("name")
		p.str(f.Name)
		p.str("filename")
		p.str(f.Filename)
		p.str("line")
		if f.Line == UnknownLine {
			p.uint(math.MaxUint64)
		} else {
			p.int(int64(f.Line))
		}
		p.close(dict, 3)
		if ok {
			if p.frameMemo == nil {
				p.frameMemo = map[Frame]uint32{}
			}
			p.frameMemo[f] = i
		}
	}
	p.close(list, len(fs))
	return li, lok
}

func (p *pickler) snapshot(s *Snapshot) {
	p.open(dict, 1)
	p.str("segments")
	p.open(list, len(s.Segments))
	for i := range s.Segments {
		p.nextItem(list, i)
		p.segment(&s.Segments[i])
	}
	p.close(list, len(s.Segments))
	p.str("device_traces")
	p.open(list, len(s.Traces))
	for _, t := range s.Traces {
		p.open(list, len(t))
		for i := range t {
			p.nextItem(list, i)
			p.entry(&t[i])
		}
		p.close(list, len(t))
	}
	p.close(list, len(s.Traces))
	if s.HasSettings {
		p.str("allocator_settings")
		p.settings(&s.Settings)
	}
	p.str("external_annotations")
	p.open(list, len(s.Annotations))
	for i, a := range s.Annotations {
		p.nextItem(list, i)
		p.open(dict, 4)
		p.str("stage")
		p.str(a.Stage)
		p.str("name")
		p.str(a.Name)
		p.str("device")
		p.int(int64(a.Device))
		p.str("time_us")
		p.int(a.TimeUS)
		p.close(dict, 4)
	}
	p.close(list, len(s.Annotations))
	p.close(dict, 1)
}

func (p *pickler) segment(seg *Segment) {
	p.open(dict, 12)
	p.str("device")
	p.int(int64(seg.Device))
	p.str("address")
	p.uint(seg.Address)
	p.str("total_size")
	p.int(seg.TotalSize)
	p.str("allocated_size")
	p.int(seg.AllocatedSize)
	p.str("active_size")
	p.int(seg.ActiveSize)
	p.str("requested_size")
	p.int(seg.RequestedSize)
	p.str("stream")
	p.uint(seg.Stream)
	p.str("segment_type")
	p.str(seg.SegmentType)
	p.str("segment_pool_id")
	p.raw('(')
	p.uint(seg.PoolID[0])
	p.uint(seg.PoolID[1])
	p.raw('t')
	p.str("is_expandable")
	p.bool(seg.Expandable)
	p.str("frames")
	p.frames(seg.Frames)
	p.str("blocks")
	p.open(list, len(seg.Blocks))
	for i := range seg.Blocks {
		p.nextItem(list, i)
		b := &seg.Blocks[i]
		p.open(dict, 5)
		p.str("address")
		p.uint(b.Address)
		p.str("size")
		p.int(b.Size)
		p.str("requested_size")
		p.int(b.RequestedSize)
		p.str("state")
		p.str(b.State)
		p.str("frames")
		p.frames(b.Frames)
		p.close(dict, 5)
	}
	p.close(list, len(seg.Blocks))
	p.close(dict, 12)
}

func (p *pickler) entry(e *TraceEntry) {
	n := 8
	if e.HasPool() {
		n++
	}
	p.open(dict, n)
	p.str("action")
	p.str(e.Action.String())
	if e.Action == ActionOOM {
		p.str("device_free")
		p.int(e.DeviceFree())
	} else {
		p.str("addr")
		p.uint(e.Addr)
	}
	p.str("size")
	p.int(e.Size)
	p.str("stream")
	p.uint(e.Stream)
	p.str("time_us")
	p.int(e.TimeUS)
	p.str("compile_context")
	p.str(e.CompileContext())
	p.str("user_metadata")
	p.str(e.UserMetadata())
	if e.HasPool() {
		pool := e.Pool()
		p.str("pool_id")
		p.raw('(')
		p.uint(pool[0])
		p.uint(pool[1])
		p.raw('t')
	}
	p.str("frames")
	// PyTorch's free_completed shares its free_requested's context: the same
	// frames list, written once and referenced after.
	if f, ok := p.freeing[e.Addr]; ok && e.Action == ActionFreeCompleted && slices.Equal(f.frames, e.Frames) {
		p.get(f.idx)
	} else if i, ok := p.frames(e.Frames); ok && e.Action == ActionFreeRequested && len(e.Frames) > 0 {
		if p.freeing == nil {
			p.freeing = map[uint64]freeing{}
		}
		p.freeing[e.Addr] = freeing{idx: i, frames: e.Frames}
	}
	if e.Action == ActionFreeCompleted {
		delete(p.freeing, e.Addr)
	}
	p.close(dict, n)
}

// freeing is a free_requested entry's frames list, by memo index, until its
// free_completed.
type freeing struct {
	idx    uint32
	frames []Frame
}

func (p *pickler) settings(st *Settings) {
	n := 8
	if st.HasGraphCaptureRecordStreamReuse {
		n++
	}
	p.open(dict, n)
	p.str("PYTORCH_CUDA_ALLOC_CONF")
	p.str(st.Conf)
	p.str("max_split_size")
	p.int(st.MaxSplitSize)
	p.str("garbage_collection_threshold")
	p.float(st.GarbageCollectionThreshold)
	p.str("expandable_segments")
	p.bool(st.ExpandableSegments)
	p.str("pinned_num_register_threads")
	p.int(int64(st.PinnedNumRegisterThreads))
	p.str("release_lock_on_cudamalloc")
	p.bool(st.ReleaseLockOnCudaMalloc)
	p.str("pinned_use_cuda_host_register")
	p.bool(st.PinnedUseCudaHostRegister)
	if st.HasGraphCaptureRecordStreamReuse {
		p.str("graph_capture_record_stream_reuse")
		p.bool(st.GraphCaptureRecordStreamReuse)
	}
	p.str("roundup_power2_divisions")
	p.open(dict, len(st.RoundupPower2Divisions))
	for i, d := range st.RoundupPower2Divisions {
		p.str(strconv.Itoa(1 << i))
		p.int(int64(d))
	}
	p.close(dict, len(st.RoundupPower2Divisions))
	p.close(dict, n)
}
