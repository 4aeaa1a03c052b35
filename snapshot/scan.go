package snapshot

import (
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"
)

// countDicts walks the opcodes of the pickle in data without decoding it and
// returns how many dicts it makes (EMPTY_DICT and DICT) and how many values it
// memoizes (MEMOIZE), so that the entries of a streaming decode and its memo are
// each one array of the right size rather than one grown by copying (Python's
// pickler memoizes every dict and list: a big history's memo is several values
// per entry). It returns 0, 0 for anything it does not recognise (the decode then
// grows its arrays) and calls release (when not nil) with every range it has
// walked, as the decoder does. The dicts are bounded by what the input can hold: a
// trace entry takes at least minEntryBytes of pickle; a MEMOIZE is one byte.
//
// A pickle of protocol 4 or later, as PyTorch writes them, comes in frames of
// about 64 KiB that no opcode crosses; its frames are walked on every core
// (countFramed), which gives the same counts as one walk from the start.
func countDicts(data []byte, release func(from, upTo int)) (dicts, memos int) {
	if runtime.GOMAXPROCS(0) > 1 && len(data) >= 2*releaseEvery {
		if frames, stop, ok := splitFrames(data); ok && len(frames) > 1 {
			if dicts, memos, ok := countFramed(data, frames, stop, releaseEvery, release); ok {
				return dicts, memos
			}
		}
	}
	return countWalk(data, release)
}

// countWalk is countDicts in one walk from the start of data, calling release
// every releaseEvery bytes.
func countWalk(data []byte, release func(from, upTo int)) (dicts, memos int) {
	next, released := releaseEvery, 0
	if release != nil {
		defer func() { release(released, len(data)) }()
	}
	var c opCount
	for p := 0; p < len(data); {
		until := len(data)
		if release != nil {
			if p >= next {
				release(released, p)
				released, next = p, p+releaseEvery
			}
			until = min(next, len(data))
		}
		q, stop := c.walk(data, p, until, len(data))
		if q < 0 {
			return 0, 0
		}
		if stop {
			return min(c.dicts, len(data)/minEntryBytes), c.memos
		}
		p = q
	}
	return 0, 0
}

// opCount counts the dicts and memoized values of the opcodes it is shown.
type opCount struct{ dicts, memos int }

// op reads the opcode at data[p], which must end by end, counts it, and returns
// where the next one starts (-1 for an opcode it does not know or one that runs
// past end) and whether it is STOP.
func (c *opCount) op(data []byte, p, end int) (next int, stop bool) {
	op := data[p]
	p++
	arg := 0 // bytes of argument after the opcode
	switch op {
	case opEmptyDict, opDict:
		c.dicts++
	case opMemoize:
		c.memos++
	case opStop:
		return p, true
	case opMark, opPop, opPopMark, opDup, opNone, opAppend, opList, opEmptyList,
		opSetItem, opTuple, opEmptyTuple, opSetItems, opAppends, opTuple1, opTuple2,
		opTuple3, opNewTrue, opNewFalse, opEmptySet, opAddItems, opFrozenSet,
		opReduce, opBuild, opObj, opNewObj, opNewObjEx, opStackGlobal,
		opBinPersID, opNextBuffer, opReadonlyBuffer:
	case opBinInt1, opBinGet, opBinPut, opProto, opExt1:
		arg = 1
	case opBinInt2, opExt2:
		arg = 2
	case opBinInt, opLongBinGet, opLongBinPut, opExt4:
		arg = 4
	case opBinFloat, opFrame:
		arg = 8
	case opShortBinString, opShortBinBytes, opShortBinUni, opLong1:
		if p >= end {
			return -1, false
		}
		arg = 1 + int(data[p])
	case opBinString, opBinUnicode, opBinBytes, opLong4:
		if p+4 > end {
			return -1, false
		}
		arg = 4 + int(binary.LittleEndian.Uint32(data[p:]))
	case opBinUnicode8, opBinBytes8, opByteArray8:
		if p+8 > end {
			return -1, false
		}
		m := binary.LittleEndian.Uint64(data[p:])
		if m > uint64(end) {
			return -1, false
		}
		arg = 8 + int(m)
	case opFloat, opInt, opLong, opString, opUnicode, opPersID, opGet, opPut, opGlobal, opInst:
		lines := 1
		if op == opGlobal || op == opInst {
			lines = 2
		}
		for ; lines > 0; lines-- {
			for p < end && data[p] != '\n' {
				p++
			}
			p++
		}
		if p > end {
			return -1, false
		}
		return p, false
	default:
		return -1, false
	}
	if arg > end-p {
		return -1, false
	}
	return p + arg, false
}

// walk counts the opcodes that start in data[p:until], each of which must end by
// end (until <= end <= len(data)), and returns where the next one starts (-1 for an
// opcode it does not know or one that runs past end) and whether it stopped at a
// STOP: then next is just after it. It gives what calling op on each opcode in turn
// gives, from tables instead of a switch: the walks before a decode see every
// opcode of the pickle, and most take a fixed number of bytes.
func (c *opCount) walk(data []byte, p, until, end int) (next int, stop bool) {
	next, stop, dicts, memos := walkOps(data, p, until, end)
	c.dicts += dicts
	c.memos += memos
	return next, stop
}

// walkOps is walk, returning the dicts and memoized values it counted.
func walkOps(data []byte, p, until, end int) (next int, stop bool, dicts, memos int) {
	for p < until {
		op := data[p]
		w := opWalk[op]
		t := opTally[op]
		dicts += int(t & 1)
		memos += int(t >> 1)
		if w <= walkFixedMax {
			if w == 0 {
				return -1, false, dicts, memos
			}
			p += int(w)
			continue
		}
		switch w {
		case walkLen1:
			if p+1 >= end {
				return -1, false, dicts, memos
			}
			p += 2 + int(data[p+1])
		case walkLen4:
			if p+5 > end {
				return -1, false, dicts, memos
			}
			p += 5 + int(binary.LittleEndian.Uint32(data[p+1:]))
		case walkStop:
			return p + 1, true, dicts, memos
		default: // walkLen8, the text opcodes
			var c opCount
			q, _ := c.op(data, p, end)
			if q < 0 {
				return -1, false, dicts, memos
			}
			p = q
		}
	}
	if p > end {
		return -1, false, dicts, memos
	}
	return p, false, dicts, memos
}

// What walk does with each opcode (opWalk): 1 to walkFixedMax is the whole
// opcode's length, arguments included; 0 is not an opcode.
const (
	walkFixedMax = 9
	walkLen1     = iota + walkFixedMax // a 1-byte length and that many bytes
	walkLen4                           // a 4-byte length and that many bytes
	walkStop                           // STOP
	walkOther                          // left to op: 8-byte lengths, text arguments
)

// opWalk and opTally are walk's tables: how each opcode is laid out, and what it
// counts (1: a dict, 2: a memoized value, 0: nothing).
var opWalk, opTally = func() (w, t [256]uint8) {
	for op := range 256 {
		var c opCount
		// Which opcodes op knows, and the length of the fixed ones: ask it.
		buf := make([]byte, 16)
		buf[0] = byte(op)
		switch byte(op) {
		case opStop:
			w[op] = walkStop
		case opShortBinString, opShortBinBytes, opShortBinUni, opLong1:
			w[op] = walkLen1
		case opBinString, opBinUnicode, opBinBytes, opLong4:
			w[op] = walkLen4
		case opBinUnicode8, opBinBytes8, opByteArray8,
			opFloat, opInt, opLong, opString, opUnicode, opPersID, opGet, opPut, opGlobal, opInst:
			w[op] = walkOther
		default:
			if q, _ := c.op(buf, 0, len(buf)); q > 0 {
				w[op] = uint8(q)
			}
		}
		switch {
		case c.dicts > 0:
			t[op] = 1
		case c.memos > 0:
			t[op] = 2
		}
	}
	return w, t
}()

// span is a range of a pickle, [from, to).
type span struct{ from, to int }

// splitFrames finds the frames of a framed pickle by walking from frame header
// to frame header, and the opcodes between them one at a time (CPython writes a
// large string's header and bytes outside any frame). It returns the frames'
// contents in order and the position just after the STOP that ends the pickle;
// ok is false when the pickle is not framed that way: an opcode it does not
// know, a frame that runs past the end, or no STOP at the end of the last frame.
// The opcodes outside frames are not counted: countFramed counts the gaps. A pickle
// of more than one frame per minFrameBytes (and 16) is not split either: CPython's frames are
// 64 KiB, and the list of a hostile input's tiny frames would take more memory than
// its counts save.
func splitFrames(data []byte) (frames []span, stop int, ok bool) {
	var c opCount
	most := len(data)/minFrameBytes + 16
	for p := 0; p < len(data); {
		if data[p] == opFrame {
			if p+9 > len(data) || len(frames) == most {
				return nil, 0, false
			}
			n := binary.LittleEndian.Uint64(data[p+1:])
			if n > uint64(len(data)-p-9) {
				return nil, 0, false
			}
			frames = append(frames, span{p + 9, p + 9 + int(n)})
			p += 9 + int(n)
			continue
		}
		q, isStop := c.op(data, p, len(data))
		if q < 0 || isStop {
			// STOP outside a frame: only a pickle of one frame or none ends so.
			return nil, 0, false
		}
		p = q
	}
	if len(frames) == 0 {
		return nil, 0, false
	}
	last := frames[len(frames)-1]
	return frames, last.to, last.to > last.from && data[last.to-1] == opStop
}

// countFramed counts the opcodes of a framed pickle (splitFrames) on every core:
// the frames in runs of about runBytes, each run released once walked, and the
// opcodes between frames. ok is false when a frame does not hold whole opcodes,
// or the one STOP is not the last opcode of the last frame: then one walk from the
// start (countWalk) is what gives the counts.
func countFramed(data []byte, frames []span, stop, runBytes int, release func(from, upTo int)) (dicts, memos int, ok bool) {
	// Runs of consecutive frames, each reaching from its first frame's header to
	// the next run's: the opcodes between frames belong to the run before them.
	type run struct {
		first, last int // frames
		from, to    int // bytes
	}
	var runs []run
	for i := 0; i < len(frames); {
		r := run{first: i, from: 0}
		if i > 0 {
			r.from = frames[i].from - 9
		}
		for i < len(frames) && (i == r.first || frames[i].to-r.from <= runBytes) {
			i++
		}
		r.last = i - 1
		r.to = len(data)
		if i < len(frames) {
			r.to = frames[i].from - 9
		}
		runs = append(runs, r)
	}
	var (
		next    atomic.Int64
		failed  atomic.Bool
		stops   atomic.Int64
		mu      sync.Mutex
		total   opCount
		wg      sync.WaitGroup
		workers = min(runtime.GOMAXPROCS(0), len(runs))
	)
	for range workers {
		wg.Go(func() {
			var c opCount
			for !failed.Load() {
				i := int(next.Add(1)) - 1
				if i >= len(runs) {
					break
				}
				r := runs[i]
				ok, sawStop := countRun(&c, data, frames, r.first, r.last, r.from, min(r.to, stop), stop)
				if !ok {
					failed.Store(true)
					break
				}
				if sawStop {
					stops.Add(1)
				}
				if release != nil {
					release(r.from, r.to)
				}
			}
			mu.Lock()
			total.dicts += c.dicts
			total.memos += c.memos
			mu.Unlock()
		})
	}
	wg.Wait()
	if failed.Load() || stops.Load() != 1 {
		return 0, 0, false
	}
	return min(total.dicts, len(data)/minEntryBytes), total.memos, true
}

// countRun counts the opcodes of frames first..last, and of the bytes between
// them and up to end, that are not frame headers; from is where the run starts
// (the first frame's header, or 0). It reports false when an opcode crosses a
// frame's end or a STOP comes anywhere but just before stop, and whether the STOP
// just before stop is among the run's opcodes.
func countRun(c *opCount, data []byte, frames []span, first, last, from, end, stop int) (ok, sawStop bool) {
	p := from
	for i := first; i <= last+1; i++ {
		gapEnd := end
		if i <= last {
			gapEnd = frames[i].from - 9
		}
		// The opcodes before frame i (PROTO before the first; a large string's
		// header and bytes between two).
		if p < gapEnd {
			q, isStop := c.walk(data, p, gapEnd, gapEnd)
			if q < 0 || isStop {
				return false, false
			}
			p = q
		}
		if i > last {
			break
		}
		f := frames[i]
		for p = f.from; p < f.to; {
			q, isStop := c.walk(data, p, f.to, f.to)
			if q < 0 || isStop && q != stop {
				return false, false
			}
			sawStop = sawStop || isStop
			p = q
		}
	}
	return true, sawStop
}

// minFrameBytes is the average frame size below which splitFrames gives up.
const minFrameBytes = 4 << 10

// minEntryBytes is the fewest bytes of pickle a trace entry the streaming decode
// keeps can take: EMPTY_DICT, MARK, three keys and their values (action, size,
// addr or device_free) as memo references of two bytes, SETITEMS.
const minEntryBytes = 15
