package snapshot

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
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
		if e.Action == allocator.ActionEmptyCache {
			continue
		}
		te := TraceEntry{Action: string(e.Action), Size: e.Size, Stream: e.Stream, TimeUS: e.Time.UnixMicro(), Frames: frames(e.Frames)}
		if e.Action == allocator.ActionOOM {
			te.DeviceFree = int64(e.Addr)
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
// booleans and None are used.
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
	w   *bufio.Writer
	err error
	buf [9]byte
}

func (p *pickler) raw(bs ...byte) {
	if p.err == nil {
		_, p.err = p.w.Write(bs)
	}
}

// The container helpers write EMPTY_DICT/EMPTY_LIST, then MARK … SETITEMS/APPENDS
// around the items (omitted when there are none).
func (p *pickler) dict(n int, items func()) {
	p.raw('}')
	if n > 0 {
		p.raw('(')
		items()
		p.raw('u')
	}
}

func (p *pickler) list(n int, items func()) {
	p.raw(']')
	if n > 0 {
		p.raw('(')
		items()
		p.raw('e')
	}
}

func (p *pickler) key(k string) { p.str(k) }

func (p *pickler) str(x string) {
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

func (p *pickler) frames(fs []Frame) {
	p.list(len(fs), func() {
		for _, f := range fs {
			p.dict(3, func() {
				p.key("name")
				p.str(f.Name)
				p.key("filename")
				p.str(f.Filename)
				p.key("line")
				p.int(int64(f.Line))
			})
		}
	})
}

func (p *pickler) snapshot(s *Snapshot) {
	n := 3
	if s.HasSettings {
		n++
	}
	p.dict(n, func() {
		p.key("segments")
		p.list(len(s.Segments), func() {
			for i := range s.Segments {
				p.segment(&s.Segments[i])
			}
		})
		p.key("device_traces")
		p.list(len(s.Traces), func() {
			for _, t := range s.Traces {
				p.list(len(t), func() {
					for i := range t {
						p.entry(&t[i])
					}
				})
			}
		})
		if s.HasSettings {
			p.key("allocator_settings")
			p.settings(&s.Settings)
		}
		p.key("external_annotations")
		p.list(len(s.Annotations), func() {
			for _, a := range s.Annotations {
				p.dict(4, func() {
					p.key("stage")
					p.str(a.Stage)
					p.key("name")
					p.str(a.Name)
					p.key("device")
					p.int(int64(a.Device))
					p.key("time_us")
					p.int(a.TimeUS)
				})
			}
		})
	})
}

func (p *pickler) segment(seg *Segment) {
	p.dict(12, func() {
		p.key("device")
		p.int(int64(seg.Device))
		p.key("address")
		p.uint(seg.Address)
		p.key("total_size")
		p.int(seg.TotalSize)
		p.key("allocated_size")
		p.int(seg.AllocatedSize)
		p.key("active_size")
		p.int(seg.ActiveSize)
		p.key("requested_size")
		p.int(seg.RequestedSize)
		p.key("stream")
		p.uint(seg.Stream)
		p.key("segment_type")
		p.str(seg.SegmentType)
		p.key("segment_pool_id")
		p.raw('(')
		p.uint(seg.PoolID[0])
		p.uint(seg.PoolID[1])
		p.raw('t')
		p.key("is_expandable")
		p.bool(seg.Expandable)
		p.key("frames")
		p.frames(seg.Frames)
		p.key("blocks")
		p.list(len(seg.Blocks), func() {
			for _, b := range seg.Blocks {
				p.dict(5, func() {
					p.key("address")
					p.uint(b.Address)
					p.key("size")
					p.int(b.Size)
					p.key("requested_size")
					p.int(b.RequestedSize)
					p.key("state")
					p.str(b.State)
					p.key("frames")
					p.frames(b.Frames)
				})
			}
		})
	})
}

func (p *pickler) entry(e *TraceEntry) {
	p.dict(6, func() {
		p.key("action")
		p.str(e.Action)
		if e.Action == ActionOOM {
			p.key("device_free")
			p.int(e.DeviceFree)
		} else {
			p.key("addr")
			p.uint(e.Addr)
		}
		p.key("size")
		p.int(e.Size)
		p.key("stream")
		p.uint(e.Stream)
		p.key("time_us")
		p.int(e.TimeUS)
		if e.CompileContext != "" {
			p.key("compile_context")
			p.str(e.CompileContext)
		}
		if e.UserMetadata != "" {
			p.key("user_metadata")
			p.str(e.UserMetadata)
		}
		p.key("frames")
		p.frames(e.Frames)
	})
}

func (p *pickler) settings(st *Settings) {
	p.dict(9, func() {
		p.key("PYTORCH_CUDA_ALLOC_CONF")
		p.str(st.Conf)
		p.key("max_split_size")
		p.int(st.MaxSplitSize)
		p.key("garbage_collection_threshold")
		p.float(st.GarbageCollectionThreshold)
		p.key("expandable_segments")
		p.bool(st.ExpandableSegments)
		p.key("pinned_num_register_threads")
		p.int(int64(st.PinnedNumRegisterThreads))
		p.key("release_lock_on_cudamalloc")
		p.bool(st.ReleaseLockOnCudaMalloc)
		p.key("pinned_use_cuda_host_register")
		p.bool(st.PinnedUseCudaHostRegister)
		p.key("graph_capture_record_stream_reuse")
		p.bool(st.GraphCaptureRecordStreamReuse)
		p.key("roundup_power2_divisions")
		p.dict(len(st.RoundupPower2Divisions), func() {
			for i, d := range st.RoundupPower2Divisions {
				p.str(strconv.Itoa(1 << i))
				p.int(int64(d))
			}
		})
	})
}
