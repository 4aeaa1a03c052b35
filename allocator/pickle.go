package allocator

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
)

// WritePickle writes the snapshot as torch.cuda.memory._dump_snapshot() does: the
// _snapshot() dict (segments, device_traces, allocator_settings, external_annotations)
// pickled with protocol 4, readable by pickle.load, by
// `python -m torch.cuda._memory_viz` and by pytorch.org/memory_viz. Only the opcodes
// for dicts, lists, tuples, strings, integers, floats, booleans and None are used.
func (s Snapshot) WritePickle(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := &pickler{w: bw}
	p.byte(0x80, 4) // PROTO 4
	p.value(s.vizDict())
	p.byte('.') // STOP
	if p.err != nil {
		return fmt.Errorf("allocator: writing pickle: %w", p.err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("allocator: writing pickle: %w", err)
	}
	return nil
}

// pdict is a dict with ordered keys; ptuple a tuple.
type (
	pdict []pkv
	pkv   struct {
		k string
		v any
	}
	ptuple []any
)

// vizDict builds the _snapshot() dict with PyTorch's key order.
func (s Snapshot) vizDict() pdict {
	frames := func(fs []Frame) []any {
		out := make([]any, 0, len(fs))
		for _, f := range fs {
			out = append(out, pdict{{"name", f.Function}, {"filename", f.File}, {"line", int64(f.Line)}})
		}
		return out
	}
	segs := make([]any, 0, len(s.Segments))
	for _, seg := range s.Segments {
		blocks := make([]any, 0, len(seg.Blocks))
		for _, b := range seg.Blocks {
			blocks = append(blocks, pdict{
				{"address", b.Address}, {"size", b.Size}, {"requested_size", b.RequestedSize},
				{"state", b.State}, {"frames", frames(b.Frames)},
			})
		}
		segs = append(segs, pdict{
			{"device", int64(s.Device)}, {"address", seg.Address}, {"total_size", seg.TotalSize},
			{"allocated_size", seg.AllocatedSize}, {"active_size", seg.ActiveSize},
			{"requested_size", seg.RequestedSize}, {"stream", seg.Stream}, {"segment_type", seg.Pool},
			{"segment_pool_id", ptuple{int64(0), int64(0)}}, {"is_expandable", seg.Expandable},
			{"frames", []any{}}, {"blocks", blocks},
		})
	}
	traces := make([][]any, s.Device+1)
	for i := range traces {
		traces[i] = []any{}
	}
	for _, e := range s.Trace {
		if e.Action == ActionEmptyCache {
			continue
		}
		addrKey := "addr"
		if e.Action == ActionOOM {
			addrKey = "device_free"
		}
		traces[s.Device] = append(traces[s.Device], pdict{
			{"action", string(e.Action)}, {addrKey, e.Addr}, {"size", e.Size}, {"stream", e.Stream},
			{"time_us", e.Time.UnixMicro()}, {"frames", frames(e.Frames)},
		})
	}
	dt := make([]any, len(traces))
	for i, t := range traces {
		dt[i] = t
	}
	rp := pdict{}
	for i, d := range s.Settings.RoundupPower2Divisions {
		rp = append(rp, pkv{strconv.Itoa(1 << i), int64(d)})
	}
	settings := pdict{
		{"PYTORCH_CUDA_ALLOC_CONF", s.Settings.Conf},
		{"max_split_size", s.Settings.MaxSplitSize},
		{"garbage_collection_threshold", s.Settings.GarbageCollectionThreshold},
		{"expandable_segments", s.Settings.ExpandableSegments},
		{"pinned_num_register_threads", int64(s.Settings.PinnedNumRegisterThreads)},
		{"release_lock_on_cudamalloc", s.Settings.ReleaseLockOnCudaMalloc},
		{"pinned_use_cuda_host_register", s.Settings.PinnedUseCudaHostRegister},
		{"graph_capture_record_stream_reuse", s.Settings.GraphCaptureRecordStreamReuse},
		{"roundup_power2_divisions", rp},
	}
	return pdict{{"segments", segs}, {"device_traces", dt}, {"allocator_settings", settings}, {"external_annotations", []any{}}}
}

type pickler struct {
	w   *bufio.Writer
	err error
	buf [9]byte
}

func (p *pickler) byte(bs ...byte) {
	if p.err == nil {
		_, p.err = p.w.Write(bs)
	}
}

func (p *pickler) value(v any) {
	switch x := v.(type) {
	case nil:
		p.byte('N')
	case bool:
		if x {
			p.byte(0x88)
		} else {
			p.byte(0x89)
		}
	case int64:
		p.int(x)
	case uint64:
		if x <= math.MaxInt64 {
			p.int(int64(x))
		} else {
			p.bigUint(x)
		}
	case float64:
		p.buf[0] = 'G'
		binary.BigEndian.PutUint64(p.buf[1:], math.Float64bits(x))
		p.byte(p.buf[:9]...)
	case string:
		if len(x) < 256 {
			p.byte(0x8c, byte(len(x)))
		} else {
			p.buf[0] = 'X'
			binary.LittleEndian.PutUint32(p.buf[1:], uint32(len(x)))
			p.byte(p.buf[:5]...)
		}
		if p.err == nil {
			_, p.err = p.w.WriteString(x)
		}
	case []any:
		p.byte(']')
		if len(x) > 0 {
			p.byte('(')
			for _, e := range x {
				p.value(e)
			}
			p.byte('e') // APPENDS
		}
	case ptuple:
		p.byte('(')
		for _, e := range x {
			p.value(e)
		}
		p.byte('t') // TUPLE
	case pdict:
		p.byte('}')
		if len(x) > 0 {
			p.byte('(')
			for _, kv := range x {
				p.value(kv.k)
				p.value(kv.v)
			}
			p.byte('u') // SETITEMS
		}
	default:
		if p.err == nil {
			p.err = fmt.Errorf("cannot pickle %T", v)
		}
	}
}

func (p *pickler) int(x int64) {
	switch {
	case x >= 0 && x < 256:
		p.byte('K', byte(x))
	case x >= 0 && x < 65536:
		p.byte('M', byte(x), byte(x>>8))
	case x >= math.MinInt32 && x <= math.MaxInt32:
		p.buf[0] = 'J'
		binary.LittleEndian.PutUint32(p.buf[1:], uint32(int32(x)))
		p.byte(p.buf[:5]...)
	default:
		// LONG1: little-endian two's complement, shortest form.
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(x))
		n := 8
		for n > 1 && ((b[n-1] == 0 && b[n-2]&0x80 == 0) || (b[n-1] == 0xff && b[n-2]&0x80 != 0)) {
			n--
		}
		p.byte(0x8a, byte(n))
		p.byte(b[:n]...)
	}
}

func (p *pickler) bigUint(x uint64) {
	var b [9]byte
	binary.LittleEndian.PutUint64(b[:], x) // b[8] = 0 keeps it positive
	p.byte(0x8a, 9)
	p.byte(b[:9]...)
}
