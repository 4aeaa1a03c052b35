package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"math/big"
	"slices"
	"strconv"
)

// ErrRefused is wrapped by the error Read returns for a pickle opcode that would
// import, call or construct a Python object (GLOBAL, STACK_GLOBAL, REDUCE, BUILD,
// INST, OBJ, NEWOBJ, NEWOBJ_EX, EXT1/2/4, PERSID, BINPERSID) or that refers to
// out-of-band buffers (NEXT_BUFFER, READONLY_BUFFER). A memory snapshot holds only
// plain values, so such a pickle is not one, and nothing in it is ever run.
var ErrRefused = errors.New("refused: a memory snapshot holds only plain values")

// PickleError is a pickle that cannot be decoded: truncated, malformed, or using an
// opcode that is refused ([ErrRefused]) or unknown. Offset is the byte offset of the
// opcode in the input.
type PickleError struct {
	Offset int
	Opcode byte
	Reason string
	Err    error // ErrRefused for refused opcodes, else nil
}

// Error names the opcode, its offset and what was wrong.
func (e *PickleError) Error() string {
	return fmt.Sprintf("snapshot: pickle: opcode %s at offset %d: %s", opName(e.Opcode), e.Offset, e.Reason)
}

// Unwrap returns ErrRefused for refused opcodes.
func (e *PickleError) Unwrap() error { return e.Err }

// The plain Python values the decoder builds are values of 8 bytes: a kind and a
// 32-bit payload (a bool, an int that fits in int32, or an index into one of the
// tree's tables: strings, containers, and the 64 bits of other numbers). Nothing in
// a value is a pointer, so the garbage collector never scans the stack, the memo
// or a container's items, and a million trace entries cost a few allocations in
// all. Lists and dicts are shared by memo references, as in Python.
type kind uint8

const (
	kNone      kind = iota
	kBool           // n is 0 or 1
	kInt            // an int64: n holds it as an int32, or with wide indexes tree.wide
	kUint           // a uint64 above math.MaxInt64, in tree.wide
	kBig            // n indexes tree.bigs (beyond 64 bits)
	kFloat          // a float64's bits, in tree.wide
	kStr            // n indexes tree.strs
	kBytes          // n indexes tree.bytes
	kDict           // n indexes tree.dicts
	kList           // n indexes tree.lists
	kTuple          // n indexes tree.lists
	kSet            // n indexes tree.lists
	kFrozenSet      // n indexes tree.lists
)

type value struct {
	n    uint32 // the payload, or with wide an index into tree.wide
	k    kind
	wide bool
}

// bits returns the 64 bits of an int (as int64), uint or float, and 0 or 1 for a
// bool. Small ints are held in n; the others in tree.wide.
func (t *tree) bits(v value) uint64 {
	switch {
	case v.wide:
		return t.wide[v.n]
	case v.k == kInt:
		return uint64(int64(int32(v.n)))
	}
	return uint64(v.n)
}

type dictObj struct {
	kv []value // k0, v0, k1, v1, …
}

type listObj struct {
	items []value
}

// tree is a decoded pickle: its root value and the tables values index into.
type tree struct {
	root  value
	wide  []uint64 // ints beyond int32, uints and floats
	strs  []string
	bytes [][]byte
	bigs  []*big.Int
	dicts table[dictObj]
	lists table[listObj]
}

// table is an append-only array in chunks, so that growing it never copies.
// A chunk let go (see release in convert.go) goes to spare and is cleared and
// taken again by a later add: a streaming decode's dicts then cost a few chunks,
// not garbage the size of the trace.
type table[T any] struct {
	chunks [][]T
	spare  [][]T
	n      uint32
}

const tableChunk = 1 << 12

func (t *table[T]) add(v T) uint32 {
	if t.n%tableChunk == 0 {
		if k := len(t.spare); k > 0 {
			c := t.spare[k-1]
			t.spare = t.spare[:k-1]
			clear(c)
			t.chunks = append(t.chunks, c)
		} else {
			t.chunks = append(t.chunks, make([]T, tableChunk))
		}
	}
	t.chunks[t.n/tableChunk][t.n%tableChunk] = v
	t.n++
	return t.n - 1
}

func (t *table[T]) at(i uint32) *T { return &t.chunks[i/tableChunk][i%tableChunk] }

func (t *tree) str(v value) string    { return t.strs[v.n] }
func (t *tree) dict(v value) *dictObj { return t.dicts.at(v.n) }

// items returns a list's or tuple's items.
func (t *tree) items(v value) []value { return t.lists.at(v.n).items }

// get returns the value under the string key k of dict d.
func (t *tree) get(d *dictObj, k string) (value, bool) {
	for i := 0; i < len(d.kv); i += 2 {
		if d.kv[i].k == kStr && t.strs[d.kv[i].n] == k {
			return d.kv[i+1], true
		}
	}
	return value{}, false
}

// keyStr returns the dict key as a string ("" for other key types).
func (t *tree) keyStr(v value) string {
	if v.k == kStr {
		return t.strs[v.n]
	}
	return ""
}

// opcodes, as in CPython's Lib/pickle.py.
const (
	opMark           = '('
	opStop           = '.'
	opPop            = '0'
	opPopMark        = '1'
	opDup            = '2'
	opFloat          = 'F'
	opInt            = 'I'
	opBinInt         = 'J'
	opBinInt1        = 'K'
	opLong           = 'L'
	opBinInt2        = 'M'
	opNone           = 'N'
	opPersID         = 'P'
	opBinPersID      = 'Q'
	opReduce         = 'R'
	opString         = 'S'
	opBinString      = 'T'
	opShortBinString = 'U'
	opUnicode        = 'V'
	opBinUnicode     = 'X'
	opAppend         = 'a'
	opBuild          = 'b'
	opGlobal         = 'c'
	opDict           = 'd'
	opEmptyDict      = '}'
	opAppends        = 'e'
	opGet            = 'g'
	opBinGet         = 'h'
	opInst           = 'i'
	opLongBinGet     = 'j'
	opList           = 'l'
	opEmptyList      = ']'
	opObj            = 'o'
	opPut            = 'p'
	opBinPut         = 'q'
	opLongBinPut     = 'r'
	opSetItem        = 's'
	opTuple          = 't'
	opEmptyTuple     = ')'
	opSetItems       = 'u'
	opBinFloat       = 'G'
	opProto          = 0x80
	opNewObj         = 0x81
	opExt1           = 0x82
	opExt2           = 0x83
	opExt4           = 0x84
	opTuple1         = 0x85
	opTuple2         = 0x86
	opTuple3         = 0x87
	opNewTrue        = 0x88
	opNewFalse       = 0x89
	opLong1          = 0x8a
	opLong4          = 0x8b
	opBinBytes       = 'B'
	opShortBinBytes  = 'C'
	opShortBinUni    = 0x8c
	opBinUnicode8    = 0x8d
	opBinBytes8      = 0x8e
	opEmptySet       = 0x8f
	opAddItems       = 0x90
	opFrozenSet      = 0x91
	opNewObjEx       = 0x92
	opStackGlobal    = 0x93
	opMemoize        = 0x94
	opFrame          = 0x95
	opByteArray8     = 0x96
	opNextBuffer     = 0x97
	opReadonlyBuffer = 0x98
)

var opNames = map[byte]string{
	opMark: "MARK", opStop: "STOP", opPop: "POP", opPopMark: "POP_MARK", opDup: "DUP",
	opFloat: "FLOAT", opInt: "INT", opBinInt: "BININT", opBinInt1: "BININT1", opLong: "LONG",
	opBinInt2: "BININT2", opNone: "NONE", opPersID: "PERSID", opBinPersID: "BINPERSID",
	opReduce: "REDUCE", opString: "STRING", opBinString: "BINSTRING",
	opShortBinString: "SHORT_BINSTRING", opUnicode: "UNICODE", opBinUnicode: "BINUNICODE",
	opAppend: "APPEND", opBuild: "BUILD", opGlobal: "GLOBAL", opDict: "DICT",
	opEmptyDict: "EMPTY_DICT", opAppends: "APPENDS", opGet: "GET", opBinGet: "BINGET",
	opInst: "INST", opLongBinGet: "LONG_BINGET", opList: "LIST", opEmptyList: "EMPTY_LIST",
	opObj: "OBJ", opPut: "PUT", opBinPut: "BINPUT", opLongBinPut: "LONG_BINPUT",
	opSetItem: "SETITEM", opTuple: "TUPLE", opEmptyTuple: "EMPTY_TUPLE", opSetItems: "SETITEMS",
	opBinFloat: "BINFLOAT", opProto: "PROTO", opNewObj: "NEWOBJ", opExt1: "EXT1", opExt2: "EXT2",
	opExt4: "EXT4", opTuple1: "TUPLE1", opTuple2: "TUPLE2", opTuple3: "TUPLE3",
	opNewTrue: "NEWTRUE", opNewFalse: "NEWFALSE", opLong1: "LONG1", opLong4: "LONG4",
	opBinBytes: "BINBYTES", opShortBinBytes: "SHORT_BINBYTES", opShortBinUni: "SHORT_BINUNICODE",
	opBinUnicode8: "BINUNICODE8", opBinBytes8: "BINBYTES8", opEmptySet: "EMPTY_SET",
	opAddItems: "ADDITEMS", opFrozenSet: "FROZENSET", opNewObjEx: "NEWOBJ_EX",
	opStackGlobal: "STACK_GLOBAL", opMemoize: "MEMOIZE", opFrame: "FRAME",
	opByteArray8: "BYTEARRAY8", opNextBuffer: "NEXT_BUFFER", opReadonlyBuffer: "READONLY_BUFFER",
}

// opName renders an opcode as NAME (0xNN), or "unknown (0xNN)".
func opName(op byte) string {
	if n, ok := opNames[op]; ok {
		return fmt.Sprintf("%s (%#02x)", n, op)
	}
	return fmt.Sprintf("unknown (%#02x)", op)
}

// maxInput bounds the input so that every object's index fits in 32 bits (each
// object takes at least one byte of input).
const maxInput = 1 << 32

// maxProtocol is the highest pickle protocol CPython writes (3.8–3.14).
const maxProtocol = 5

// decoder is a pickle machine restricted to plain values. It never allocates more
// than the input can back: every length is checked against the bytes that remain.
type decoder struct {
	tree
	data  []byte
	pos   int // next byte to read
	op    int // offset of the opcode being executed
	code  byte
	stack []value
	marks []int
	// markWide holds, per open MARK, the length of the wide table when it was
	// pushed, and poppedWide that of the last MARK popped (see trimWide).
	markWide   []int
	poppedWide int
	// wideKeep is 1 + the highest wide-table index stored in the memo or
	// duplicated (DUP): values at or above it are referenced once.
	wideKeep int
	memo     []value
	memoMap  map[uint64]value          // sparse BINPUT/PUT indices
	arena    []value                   // carved into containers' first batches of items
	bigDicts map[uint32]map[string]int // hash index of large dicts: key → position in kv
	nans     int
	frameEnd int // the end of the current FRAME (0: outside frames)
	// shared holds the items of lists met so far, by the hash of their values, so
	// that lists with the same items (the frames lists of one call stack, recorded
	// a million times) share one slice. List items are only ever appended to, and a
	// shared slice has no room beyond its length, so an append copies it.
	shared  map[uint64][]value
	seed    maphash.Seed
	hashBuf []byte // the bytes of the items intern hashes
	// interned holds the index in strs of short strings met so far (see
	// unicode), at most internCap of them; shortCache holds 1 + the index of a
	// few of them, looked up first by fast (by shortHash): a 2.11 history's
	// entries each hold a new "N/A".
	interned   map[string]uint32
	shortCache [16]uint32
	// lastKeys are the string indices of the last dict's keys found distinct, at
	// even positions (odd positions are unused); keysGen counts the times they
	// changed, so that seal can keep what it found about them (see sameKeys).
	lastKeys []uint32
	keysGen  uint64
	// release, when set, is called every releaseEvery bytes (see unpickleWith).
	release func(from, upTo int)
	// conv, when set, seals trace entries as their dicts are completed (see
	// decodeStreaming); the decoder gives way (errFallback) when a sealed dict is
	// referenced again or a frozen container changed.
	conv *converter
}

// arenaChunk is how many values the arena allocates at a time.
const arenaChunk = 1 << 14

// carve returns a copy of items in the arena, with capacity exactly len(items) so
// that a later append to it moves it out instead of overwriting a neighbour.
func (d *decoder) carve(items []value) []value {
	n := len(items)
	if n > arenaChunk/4 {
		return append([]value(nil), items...)
	}
	if len(d.arena)+n > cap(d.arena) {
		d.arena = make([]value, 0, arenaChunk)
	}
	i := len(d.arena)
	d.arena = append(d.arena, items...)
	return d.arena[i : i+n : i+n]
}

// intern returns a slice with the values of items that no one appends to in place:
// one already made with the same values, or a new one in the arena.
func (d *decoder) intern(items []value) []value {
	if len(items) < 2 || len(items) > 256 {
		return d.carve(items)
	}
	if d.shared == nil {
		d.shared = map[uint64][]value{}
		d.seed = maphash.MakeSeed()
	}
	b := d.hashBuf[:0]
	for _, v := range items {
		b = binary.LittleEndian.AppendUint32(b, v.n)
		w := byte(0)
		if v.wide {
			w = 1
		}
		b = append(b, byte(v.k), w)
	}
	d.hashBuf = b
	key := maphash.Bytes(d.seed, b)
	if prev, ok := d.shared[key]; ok && slices.Equal(prev, items) {
		return prev
	}
	c := d.carve(items)
	d.shared[key] = c
	return c
}

// unpickle decodes one pickle holding plain values.
func unpickle(data []byte) (*tree, error) { return unpickleWith(data, nil, nil) }

// releaseEvery is how far the decoder reads between calls of its release hook: the
// mapped pages it keeps resident (4 MiB, not a share of the file).
const releaseEvery = 4 << 20

// unpickleWith is unpickle, calling release (when not nil) every releaseEvery
// bytes with the range of the input read since the last call, which is not read
// again: every value the decoder keeps is a copy. conv, when not nil, seals trace
// entries as they are read (decodeStreaming).
func unpickleWith(data []byte, release func(from, upTo int), conv *converter) (*tree, error) {
	if len(data) == 0 {
		return nil, errors.New("snapshot: pickle: empty input (not a pickle)")
	}
	if uint64(len(data)) >= maxInput {
		return nil, fmt.Errorf("snapshot: pickle of %d bytes: inputs of 4 GiB or more are not supported", len(data))
	}
	if bytes.HasPrefix(data, []byte("PK\x03\x04")) {
		return nil, errors.New("snapshot: pickle: the input is a zip archive (a torch.save file?), not the pickle torch.cuda.memory._dump_snapshot() writes")
	}
	// The memo and the string table grow as needed: sized from the input, they
	// would hold tens of MB unused for a pickle that memoizes only its strings.
	memo := 1024
	if conv != nil {
		memo = max(memo, conv.memos) // counted: the memo is the size it will be
	}
	d := &decoder{data: data, stack: make([]value, 0, 64), memo: make([]value, 0, memo), release: release, conv: conv}
	if conv != nil {
		conv.tree = &d.tree
	}
	root, err := d.run()
	if err != nil {
		return nil, err
	}
	// The tree is copied out of the decoder so that the input, the memo and the
	// decoder's indexes are garbage once it returns.
	t := d.tree
	t.root = root
	return &t, nil
}

func (d *decoder) fail(format string, args ...any) error {
	return &PickleError{Offset: d.op, Opcode: d.code, Reason: fmt.Sprintf(format, args...)}
}

func (d *decoder) refuse(what string) error {
	return &PickleError{Offset: d.op, Opcode: d.code, Reason: what + "; " + ErrRefused.Error(), Err: ErrRefused}
}

// take returns the next n bytes, or an error naming what was cut short. n comes from
// the input, so it is checked against what remains before anything is allocated.
func (d *decoder) take(n uint64, what string) ([]byte, error) {
	if rem := uint64(len(d.data) - d.pos); n > rem {
		return nil, d.fail("%s of %d bytes, but only %d bytes remain (truncated or corrupt)", what, n, rem)
	}
	if err := d.inFrame(d.pos + int(n)); err != nil {
		return nil, err
	}
	b := d.data[d.pos : d.pos+int(n)]
	d.pos += int(n)
	return b, nil
}

// line returns the bytes up to the next newline (protocol 0 arguments).
func (d *decoder) line() ([]byte, error) {
	for i := d.pos; i < len(d.data); i++ {
		if d.data[i] == '\n' {
			if err := d.inFrame(i + 1); err != nil {
				return nil, err
			}
			b := d.data[d.pos:i]
			d.pos = i + 1
			return b, nil
		}
	}
	return nil, d.fail("argument not terminated by a newline (truncated)")
}

// inFrame checks that a read up to end stays inside the current frame: pickle.load
// refuses an opcode or argument that straddles the end of a FRAME.
func (d *decoder) inFrame(end int) error {
	if d.frameEnd > 0 && end > d.frameEnd {
		return d.fail("reads past the end of its frame at offset %d (an opcode straddles a FRAME's end)", d.frameEnd)
	}
	return nil
}

func (d *decoder) u8(what string) (uint64, error) {
	if d.pos < len(d.data) && (d.frameEnd == 0 || d.pos < d.frameEnd) {
		d.pos++
		return uint64(d.data[d.pos-1]), nil
	}
	_, err := d.take(1, what)
	return 0, err
}

func (d *decoder) u32(what string) (uint64, error) {
	b, err := d.take(4, what)
	if err != nil {
		return 0, err
	}
	return uint64(binary.LittleEndian.Uint32(b)), nil
}

func (d *decoder) u64(what string) (uint64, error) {
	b, err := d.take(8, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

func (d *decoder) push(v value) { d.stack = append(d.stack, v) }

func (d *decoder) pushInt(x int64) {
	if x >= math.MinInt32 && x <= math.MaxInt32 {
		d.stack = append(d.stack, value{n: uint32(int32(x)), k: kInt})
		return
	}
	d.pushWide(kInt, uint64(x))
}

// pushWide pushes a value whose 64 bits go to the wide table.
func (d *decoder) pushWide(k kind, bits uint64) {
	d.wide = append(d.wide, bits)
	d.stack = append(d.stack, value{n: uint32(len(d.wide) - 1), k: k, wide: true})
}

// floor is the stack height below which the current MARK protects values.
func (d *decoder) floor() int {
	if len(d.marks) > 0 {
		return d.marks[len(d.marks)-1]
	}
	return 0
}

func (d *decoder) pop() (value, error) {
	n := len(d.stack)
	if n <= d.floor() {
		return value{}, d.fail("needs a value but the stack is empty")
	}
	v := d.stack[n-1]
	d.stack = d.stack[:n-1]
	return v, nil
}

func (d *decoder) top() (value, error) {
	n := len(d.stack)
	if n <= d.floor() {
		return value{}, d.fail("needs a value but the stack is empty")
	}
	return d.stack[n-1], nil
}

// popMark returns the values pushed since the last MARK and removes them and the mark.
// The slice aliases the stack and is valid until the next push.
func (d *decoder) popMark() ([]value, error) {
	if len(d.marks) == 0 {
		return nil, d.fail("no MARK to pop to")
	}
	m := d.marks[len(d.marks)-1]
	d.marks = d.marks[:len(d.marks)-1]
	d.poppedWide = d.markWide[len(d.markWide)-1]
	d.markWide = d.markWide[:len(d.markWide)-1]
	items := d.stack[m:]
	d.stack = d.stack[:m]
	return items, nil
}

func (d *decoder) newList(k kind, items []value) value {
	return value{n: d.lists.add(listObj{items: items}), k: k}
}

func (d *decoder) newDict(kv []value) value {
	return value{n: d.dicts.add(dictObj{kv: kv}), k: kDict}
}

func (d *decoder) memoPut(idx uint64, v value) {
	if v.wide {
		d.wideKeep = max(d.wideKeep, int(v.n)+1)
	}
	switch {
	case idx < uint64(len(d.memo)):
		d.memo[idx] = v
	case idx == uint64(len(d.memo)):
		// keep the slice and the map disjoint, so that their sizes add up to the
		// memo's number of entries (MEMOIZE's index)
		d.memo = append(d.memo, v)
		delete(d.memoMap, idx)
	default:
		if d.memoMap == nil {
			d.memoMap = map[uint64]value{}
		}
		d.memoMap[idx] = v
	}
}

func (d *decoder) memoGet(idx uint64) error {
	var v value
	if idx < uint64(len(d.memo)) {
		v = d.memo[idx]
	} else if w, ok := d.memoMap[idx]; ok {
		v = w
	} else {
		return d.fail("memo index %d was never stored", idx)
	}
	if d.conv != nil && v.k == kDict && d.conv.sealed(v.n) != 0 {
		return errFallback // a sealed entry referenced a second time
	}
	d.push(v)
	return nil
}

func (d *decoder) run() (value, error) {
	next, released := releaseEvery, 0
	for d.pos < len(d.data) {
		if d.release != nil && d.pos >= next {
			d.release(released, d.pos)
			released, next = d.pos, d.pos+releaseEvery
		}
		if d.frameEnd > 0 && d.pos >= d.frameEnd {
			d.frameEnd = 0
		}
		// The common opcodes, up to the next release or the frame's end, then
		// one opcode of any kind.
		limit := len(d.data)
		if d.frameEnd > 0 {
			limit = d.frameEnd
		}
		until := limit
		if d.release != nil {
			until = min(until, next)
		}
		if fastOpcodes {
			if d.pos = d.fast(d.pos, until, limit); d.pos >= until {
				continue
			}
		}
		d.op = d.pos
		d.code = d.data[d.pos]
		d.pos++
		if err := d.step(); err != nil {
			if err == errStop {
				return d.result()
			}
			return value{}, err
		}
	}
	return value{}, fmt.Errorf("snapshot: pickle: input ends at offset %d without a STOP opcode (truncated)", len(d.data))
}

// fast executes the opcodes from data[p] on that PyTorch's snapshots are mostly
// made of, as step would, up to the first one that starts at or after until, that
// it leaves to step (any other opcode, and any that step would refuse or that
// takes the slow way: a sealed dict referenced, a memo index not in the memo, a
// string not interned) or whose argument runs past limit (the end of the frame
// or of the input); it returns where that one starts. It keeps the stack and the
// input in locals: the opcodes are a few bytes each, and a pickle has tens of
// millions of them.
func (d *decoder) fast(p, until, limit int) int {
	data := d.data[:limit]
	stack, memo, conv := d.stack, d.memo, d.conv
	floor := d.floor()
loop:
	for p < until {
		switch data[p] {
		case opLongBinGet:
			if p+5 > limit {
				break loop
			}
			idx := uint(binary.LittleEndian.Uint32(data[p+1:]))
			if idx >= uint(len(memo)) {
				break loop
			}
			v := memo[idx]
			if v.k == kDict && conv != nil && conv.sealed(v.n) != 0 {
				break loop
			}
			stack = append(stack, v)
			p += 5
		case opBinGet:
			if p+2 > limit {
				break loop
			}
			idx := uint(data[p+1])
			if idx >= uint(len(memo)) {
				break loop
			}
			v := memo[idx]
			if v.k == kDict && conv != nil && conv.sealed(v.n) != 0 {
				break loop
			}
			stack = append(stack, v)
			p += 2
		case opMemoize:
			if len(stack) <= floor || len(d.memoMap) > 0 {
				break loop
			}
			v := stack[len(stack)-1]
			if v.wide {
				d.wideKeep = max(d.wideKeep, int(v.n)+1)
			}
			memo = append(memo, v)
			p++
		case opMark:
			d.marks = append(d.marks, len(stack))
			d.markWide = append(d.markWide, len(d.wide))
			floor = len(stack)
			p++
		case opEmptyDict, opEmptyList:
			// with the MEMOIZE that follows each in Python's pickles
			var v value
			if data[p] == opEmptyDict {
				v = d.newDict(nil)
			} else {
				v = d.newList(kList, nil)
			}
			stack = append(stack, v)
			p++
			if p < until && data[p] == opMemoize && len(d.memoMap) == 0 {
				memo = append(memo, v)
				p++
			}
		case opNone:
			stack = append(stack, value{k: kNone})
			p++
		case opBinInt1:
			if p+2 > limit {
				break loop
			}
			stack = append(stack, value{n: uint32(data[p+1]), k: kInt})
			p += 2
		case opBinInt2:
			if p+3 > limit {
				break loop
			}
			stack = append(stack, value{n: uint32(binary.LittleEndian.Uint16(data[p+1:])), k: kInt})
			p += 3
		case opBinInt:
			if p+5 > limit {
				break loop
			}
			stack = append(stack, value{n: binary.LittleEndian.Uint32(data[p+1:]), k: kInt})
			p += 5
		case opLong1:
			if p+2 > limit {
				break loop
			}
			n := int(data[p+1])
			if n == 0 || n > 8 || p+2+n > limit {
				break loop
			}
			var u uint64
			if all := d.data; p+10 <= len(all) {
				// 8 bytes read at once, sign-extended from the n of them
				sh := uint(64 - 8*n)
				u = uint64(int64(binary.LittleEndian.Uint64(all[p+2:])<<sh) >> sh)
			} else {
				raw := data[p+2 : p+2+n]
				for i := n - 1; i >= 0; i-- {
					u = u<<8 | uint64(raw[i])
				}
				if n < 8 && raw[n-1]&0x80 != 0 {
					u |= ^uint64(0) << (8 * n)
				}
			}
			if x := int64(u); x >= math.MinInt32 && x <= math.MaxInt32 {
				stack = append(stack, value{n: uint32(int32(x)), k: kInt})
			} else {
				d.wide = append(d.wide, u)
				stack = append(stack, value{n: uint32(len(d.wide) - 1), k: kInt, wide: true})
			}
			p += 2 + n
		case opShortBinUni:
			if p+2 > limit {
				break loop
			}
			n := int(data[p+1])
			if n > internMax || p+2+n > limit {
				break loop
			}
			b := data[p+2 : p+2+n]
			h := shortHash(b)
			i := d.shortCache[h]
			if i == 0 || d.strs[i-1] != string(b) {
				j, ok := d.interned[string(b)]
				if !ok {
					break loop
				}
				i = j + 1
				d.shortCache[h] = i
			}
			stack = append(stack, value{n: i - 1, k: kStr})
			p += 2 + n
		default:
			break loop
		}
	}
	d.stack, d.memo = stack, memo
	return p
}

// shortHash picks the slot of decoder.shortCache for a short string.
func shortHash(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	return (len(b) ^ int(b[0]) ^ int(b[len(b)-1])<<1) & 15
}

// fastOpcodes is whether run takes the common opcodes through fast; tests turn
// it off to check that fast does what step does.
var fastOpcodes = true

var errStop = errors.New("stop")

func (d *decoder) result() (value, error) {
	if len(d.marks) > 0 {
		return value{}, d.fail("%d MARKs left open at STOP", len(d.marks))
	}
	if len(d.stack) != 1 {
		return value{}, d.fail("the stack holds %d values at STOP, want 1", len(d.stack))
	}
	if d.pos != len(d.data) {
		return value{}, d.fail("%d bytes follow the STOP opcode", len(d.data)-d.pos)
	}
	return d.stack[0], nil
}

func (d *decoder) step() error {
	switch op := d.code; op {
	// the hot opcodes of PyTorch's snapshots first
	case opBinGet:
		idx, err := d.u8("BINGET index")
		if err != nil {
			return err
		}
		return d.memoGet(idx)
	case opLongBinGet:
		idx, err := d.u32("LONG_BINGET index")
		if err != nil {
			return err
		}
		return d.memoGet(idx)
	case opMemoize:
		v, err := d.top()
		if err != nil {
			return err
		}
		// CPython stores at the memo's number of entries (len(memo)), whatever
		// indices PUT used before.
		d.memoPut(uint64(len(d.memo)+len(d.memoMap)), v)
	case opMark:
		d.marks = append(d.marks, len(d.stack))
		d.markWide = append(d.markWide, len(d.wide))
	case opEmptyDict:
		d.push(d.newDict(nil))
	case opSetItems:
		items, err := d.popMark()
		if err != nil {
			return err
		}
		if len(items)%2 != 0 {
			return d.fail("odd number of values (%d) for key/value pairs", len(items))
		}
		return d.setItems(items, d.poppedWide)
	case opBinInt1:
		v, err := d.u8("BININT1 argument")
		if err != nil {
			return err
		}
		d.pushInt(int64(v))
	case opShortBinUni:
		n, err := d.u8("SHORT_BINUNICODE length")
		if err != nil {
			return err
		}
		return d.unicode(n, "SHORT_BINUNICODE data")
	case opLong1:
		n, err := d.u8("LONG1 length")
		if err != nil {
			return err
		}
		return d.long(n)

	case opProto:
		v, err := d.u8("protocol number")
		if err != nil {
			return err
		}
		if v > maxProtocol {
			return d.fail("protocol %d is not supported (0–%d)", v, maxProtocol)
		}
	case opFrame:
		// FRAME announces the size of the next frame; the data is read as it comes,
		// but must be there, as CPython checks.
		n, err := d.u64("frame length")
		if err != nil {
			return err
		}
		if rem := uint64(len(d.data) - d.pos); n > rem {
			return d.fail("frame of %d bytes, but only %d bytes remain (truncated or corrupt)", n, rem)
		}
		if err := d.inFrame(d.pos + int(n)); err != nil {
			return err
		}
		if d.frameEnd == 0 && n > 0 {
			d.frameEnd = d.pos + int(n)
		}
	case opStop:
		return errStop
	case opPop:
		if len(d.marks) > 0 && d.marks[len(d.marks)-1] == len(d.stack) {
			d.marks = d.marks[:len(d.marks)-1] // POP of a MARK, as CPython does
			d.markWide = d.markWide[:len(d.markWide)-1]
			return nil
		}
		_, err := d.pop()
		return err
	case opPopMark:
		_, err := d.popMark()
		return err
	case opDup:
		v, err := d.top()
		if err != nil {
			return err
		}
		if d.conv != nil {
			if v.k == kDict && d.conv.sealed(v.n) != 0 {
				return errFallback
			}
		}
		if v.wide {
			d.wideKeep = max(d.wideKeep, int(v.n)+1)
		}
		d.push(v)

	// None, booleans, numbers
	case opNone:
		d.push(value{k: kNone})
	case opNewTrue:
		d.push(value{n: 1, k: kBool})
	case opNewFalse:
		d.push(value{k: kBool})
	case opBinInt2:
		b, err := d.take(2, "BININT2 argument")
		if err != nil {
			return err
		}
		d.pushInt(int64(binary.LittleEndian.Uint16(b)))
	case opBinInt:
		v, err := d.u32("BININT argument")
		if err != nil {
			return err
		}
		d.pushInt(int64(int32(uint32(v))))
	case opLong4:
		n, err := d.u32("LONG4 length")
		if err != nil {
			return err
		}
		if int32(uint32(n)) < 0 {
			return d.fail("negative LONG4 length")
		}
		return d.long(n)
	case opInt, opLong:
		b, err := d.line()
		if err != nil {
			return err
		}
		return d.textInt(b)
	case opBinFloat:
		b, err := d.take(8, "BINFLOAT argument")
		if err != nil {
			return err
		}
		d.pushWide(kFloat, binary.BigEndian.Uint64(b))
	case opFloat:
		b, err := d.line()
		if err != nil {
			return err
		}
		f, perr := textFloat(b)
		if perr != nil {
			return d.fail("%v", perr)
		}
		d.pushWide(kFloat, math.Float64bits(f))

	// strings and bytes
	case opBinUnicode:
		n, err := d.u32("BINUNICODE length")
		if err != nil {
			return err
		}
		return d.unicode(n, "BINUNICODE data")
	case opBinUnicode8:
		n, err := d.u64("BINUNICODE8 length")
		if err != nil {
			return err
		}
		return d.unicode(n, "BINUNICODE8 data")
	case opShortBinBytes, opShortBinString:
		n, err := d.u8("length")
		if err != nil {
			return err
		}
		return d.bytesVal(n, op == opShortBinString)
	case opBinBytes, opBinString:
		n, err := d.u32("length")
		if err != nil {
			return err
		}
		if op == opBinString && int32(uint32(n)) < 0 {
			return d.fail("negative BINSTRING length")
		}
		return d.bytesVal(n, op == opBinString)
	case opBinBytes8, opByteArray8:
		n, err := d.u64("length")
		if err != nil {
			return err
		}
		return d.bytesVal(n, false)
	case opString:
		b, err := d.line()
		if err != nil {
			return err
		}
		s, uerr := unquotePy(b)
		if uerr != nil {
			return d.fail("%v", uerr)
		}
		d.pushStr(s)
	case opUnicode:
		b, err := d.line()
		if err != nil {
			return err
		}
		s, uerr := rawUnicodeEscape(b)
		if uerr != nil {
			return d.fail("%v", uerr)
		}
		d.pushStr(s)

	// containers
	case opEmptyList:
		d.push(d.newList(kList, nil))
	case opEmptyTuple:
		d.push(d.newList(kTuple, nil))
	case opEmptySet:
		d.push(d.newList(kSet, nil))
	case opDict:
		items, err := d.popMark()
		if err != nil {
			return err
		}
		if len(items)%2 != 0 {
			return d.fail("odd number of values (%d) for key/value pairs", len(items))
		}
		kv := append([]value(nil), items...)
		d.push(d.newDict(nil))
		return d.setItems(kv, d.poppedWide)
	case opList, opTuple, opFrozenSet:
		items, err := d.popMark()
		if err != nil {
			return err
		}
		k := map[byte]kind{opList: kList, opTuple: kTuple, opFrozenSet: kFrozenSet}[op]
		if k == kFrozenSet {
			v := d.newList(k, nil)
			if err := d.addToSet(d.lists.at(v.n), items); err != nil {
				return err
			}
			d.push(v)
			return nil
		}
		d.push(d.newList(k, append([]value(nil), items...)))
	case opTuple1, opTuple2, opTuple3:
		n := int(op-opTuple1) + 1
		if len(d.stack)-d.floor() < n {
			return d.fail("needs %d values, the stack holds %d", n, len(d.stack)-d.floor())
		}
		t := append([]value(nil), d.stack[len(d.stack)-n:]...)
		d.stack = d.stack[:len(d.stack)-n]
		d.push(d.newList(kTuple, t))
	case opAppend:
		v, err := d.pop()
		if err != nil {
			return err
		}
		return d.appendTo(kList, []value{v})
	case opAppends:
		items, err := d.popMark()
		if err != nil {
			return err
		}
		return d.appendTo(kList, items)
	case opSetItem:
		v, err := d.pop()
		if err != nil {
			return err
		}
		k, err := d.pop()
		if err != nil {
			return err
		}
		return d.setItems([]value{k, v}, -1)
	case opAddItems:
		items, err := d.popMark()
		if err != nil {
			return err
		}
		return d.appendTo(kSet, items)

	// memo
	case opBinPut, opLongBinPut, opPut:
		var idx uint64
		var err error
		switch op {
		case opBinPut:
			idx, err = d.u8("BINPUT index")
		case opLongBinPut:
			idx, err = d.u32("LONG_BINPUT index")
		default:
			idx, err = d.textIndex()
		}
		if err != nil {
			return err
		}
		v, err := d.top()
		if err != nil {
			return err
		}
		d.memoPut(idx, v)
	case opGet:
		idx, err := d.textIndex()
		if err != nil {
			return err
		}
		return d.memoGet(idx)

	// everything that reaches Python objects or code
	case opGlobal, opInst:
		mod, err1 := d.line()
		name, err2 := d.line()
		if err1 != nil || err2 != nil {
			return d.refuse("it would import a Python object")
		}
		return d.refuse(fmt.Sprintf("it would import the Python object %.100s.%.100s", mod, name))
	case opStackGlobal:
		if n := len(d.stack); n >= 2 && d.stack[n-2].k == kStr && d.stack[n-1].k == kStr {
			return d.refuse(fmt.Sprintf("it would import the Python object %.100s.%.100s", d.str(d.stack[n-2]), d.str(d.stack[n-1])))
		}
		return d.refuse("it would import a Python object")
	case opReduce:
		return d.refuse("it would call a Python object")
	case opBuild:
		return d.refuse("it would set a Python object's state")
	case opObj, opNewObj, opNewObjEx:
		return d.refuse("it would construct a Python object")
	case opExt1, opExt2, opExt4:
		return d.refuse("it would import a registered Python object (copyreg extension)")
	case opPersID, opBinPersID:
		return d.refuse("it refers to a persistent object outside the pickle")
	case opNextBuffer, opReadonlyBuffer:
		return d.refuse("it refers to an out-of-band buffer")
	default:
		return d.fail("not a pickle opcode (is this a pickle?)")
	}
	return nil
}

func (d *decoder) pushStr(s string) {
	d.strs = append(d.strs, s)
	d.push(value{n: uint32(len(d.strs) - 1), k: kStr})
}

// Short strings met again are not copied again: a 2.11 history writes a new
// "N/A" string (compile_context) for each of its entries. Strings are values, so
// two equal ones may share an index in strs.
const (
	internMax = 32      // the longest string interned, in bytes
	internCap = 1 << 12 // the most strings interned: a bound on hostile inputs
)

func (d *decoder) unicode(n uint64, what string) error {
	b, err := d.take(n, what)
	if err != nil {
		return err
	}
	if len(b) <= internMax {
		if i, ok := d.interned[string(b)]; ok {
			d.push(value{n: i, k: kStr})
			return nil
		}
	}
	if i := pyUTF8(b); i >= 0 {
		return d.fail("the string is not UTF-8 (byte %#02x at %d)", b[i], i)
	}
	s := string(b)
	d.pushStr(s)
	if len(b) <= internMax && len(d.interned) < internCap {
		if d.interned == nil {
			d.interned = make(map[string]uint32)
		}
		d.interned[s] = uint32(len(d.strs) - 1)
	}
	return nil
}

// bytesVal pushes a bytes value. A Python 2 str (STRING, BINSTRING,
// SHORT_BINSTRING) is read as a str of its bytes.
func (d *decoder) bytesVal(n uint64, py2str bool) error {
	b, err := d.take(n, "data")
	if err != nil {
		return err
	}
	if py2str {
		if err := asciiStr(b); err != nil {
			return d.fail("%v", err)
		}
		d.pushStr(string(b))
		return nil
	}
	d.bytes = append(d.bytes, append([]byte(nil), b...))
	d.push(value{n: uint32(len(d.bytes) - 1), k: kBytes})
	return nil
}

// long pushes a little-endian two's-complement integer of n bytes: kInt when it
// fits in int64, kUint for larger positive values that fit in uint64, else kBig.
func (d *decoder) long(n uint64) error {
	if n > maxIntBytes {
		return d.fail("integer of %d bytes: memlab reads integers of at most %d bytes (%d digits)", n, maxIntBytes, maxIntDigits)
	}
	raw, err := d.take(n, "integer")
	if err != nil {
		return err
	}
	if len(raw) == 0 {
		d.pushInt(0)
		return nil
	}
	neg := raw[len(raw)-1]&0x80 != 0
	if len(raw) <= 8 {
		var u uint64
		for i := len(raw) - 1; i >= 0; i-- {
			u = u<<8 | uint64(raw[i])
		}
		if neg && len(raw) < 8 {
			u |= ^uint64(0) << (8 * len(raw))
		}
		d.pushInt(int64(u))
		return nil
	}
	if !neg && len(raw) == 9 && raw[8] == 0 {
		d.pushWide(kUint, binary.LittleEndian.Uint64(raw))
		return nil
	}
	be := make([]byte, len(raw))
	for i, c := range raw {
		be[len(raw)-1-i] = c
	}
	v := new(big.Int).SetBytes(be)
	if neg {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(raw))))
	}
	d.pushBig(v)
	return nil
}

// maxIntBytes and maxIntDigits bound the integers the decoder reads (LONG1 and
// LONG4 in bytes, INT and LONG in decimal digits): a snapshot's integers fit in
// 64 bits, and an integer of megabytes would cost seconds to convert or print.
const (
	maxIntBytes  = 4096
	maxIntDigits = 10000
)

// pushBig pushes v as kInt or kUint when it fits, else kBig.
func (d *decoder) pushBig(v *big.Int) {
	switch {
	case v.IsInt64():
		d.pushInt(v.Int64())
	case v.IsUint64():
		d.pushWide(kUint, v.Uint64())
	default:
		d.bigs = append(d.bigs, v)
		d.push(value{n: uint32(len(d.bigs) - 1), k: kBig})
	}
}

// appendTo appends items to the list (APPEND, APPENDS) or set (ADDITEMS) on top
// of the stack.
func (d *decoder) appendTo(want kind, items []value) error {
	t, err := d.top()
	if err != nil {
		return err
	}
	if t.k != want {
		return d.fail("adds items to a %s, want a %s", d.typeName(t), kindName[want])
	}
	if d.conv != nil && bitAt(d.conv.frozenLists, t.n) {
		return errFallback // the frames of a sealed entry change after it
	}
	l := d.lists.at(t.n)
	if want == kSet {
		return d.addToSet(l, items)
	}
	if len(l.items) == 0 {
		l.items = d.intern(items)
	} else {
		if len(l.items)+len(items) > cap(l.items) {
			// doubled, not append's 1.25× for big slices: a trace of a million
			// entries comes in APPENDS of 1,000 (Python's batches), and each
			// growth copies it
			l.items = slices.Grow(l.items, max(len(l.items), len(items)))
		}
		l.items = append(l.items, items...)
	}
	return nil
}

// addToSet adds items to a set or frozenset: each must be hashable, and one
// equal to an element already there is dropped, as Python's set.add does.
func (d *decoder) addToSet(l *listObj, items []value) error {
	for _, it := range items {
		if why := d.keyCheck(it); why != "" {
			return d.fail("set element %s", why)
		}
	}
	seen := make(map[string]bool, len(l.items)+len(items))
	for _, e := range l.items {
		seen[d.hashKey(e)] = true
	}
	for _, it := range items {
		if h := d.hashKey(it); !seen[h] {
			seen[h] = true
			l.items = append(l.items, it)
		}
	}
	return nil
}

// setItems sets items (key, value, …) in the dict on top of the stack. markWide
// is the length of the wide table when the items' MARK was pushed (−1: no MARK).
func (d *decoder) setItems(items []value, markWide int) error {
	t, err := d.top()
	if err != nil {
		return err
	}
	if t.k != kDict {
		return d.fail("sets items of a %s, want a dict", d.typeName(t))
	}
	same := d.sameKeys(items) // then the keys are strings: hashable
	for i := 0; i < len(items) && !same; i += 2 {
		if k := items[i].k; k != kTuple && k != kList && k != kDict && k != kSet {
			continue // hashable (keyCheck)
		}
		if why := d.keyCheck(items[i]); why != "" {
			return d.fail("dict key %s", why)
		}
	}
	if d.conv != nil && bitAt(d.conv.frozenDicts, t.n) {
		return errFallback // a sealed entry, or one of its frames, changes after it
	}
	dict := d.dicts.at(t.n)
	if len(dict.kv) == 0 && (same || d.distinctStrKeys(items)) {
		if d.conv != nil && d.conv.seal(t.n, items, d.keysGen) {
			d.trimWide(items, markWide)
			return nil
		}
		dict.kv = d.carve(items)
		return nil
	}
	// A repeated key replaces the earlier value, as in Python. Small dicts are
	// searched; large ones get a hash index, so that a dict of a million keys is
	// not a trillion comparisons.
	for i := 0; i < len(items); i += 2 {
		if len(dict.kv) < 2*smallDict {
			if j := d.index(dict, items[i]); j >= 0 {
				dict.kv[j+1] = items[i+1]
				continue
			}
			dict.kv = append(dict.kv, items[i], items[i+1])
			continue
		}
		idx := d.bigDicts[t.n]
		if idx == nil {
			if d.bigDicts == nil {
				d.bigDicts = map[uint32]map[string]int{}
			}
			idx = make(map[string]int, len(dict.kv))
			for j := 0; j < len(dict.kv); j += 2 {
				idx[d.hashKey(dict.kv[j])] = j
			}
			d.bigDicts[t.n] = idx
		}
		h := d.hashKey(items[i])
		if j, ok := idx[h]; ok {
			dict.kv[j+1] = items[i+1]
			continue
		}
		idx[h] = len(dict.kv)
		dict.kv = append(dict.kv, items[i], items[i+1])
	}
	return nil
}

// trimWide drops the wide values of a sealed entry's items from the end of the
// wide table, when nothing else can refer to them: they are the table's last
// values, made after the items' MARK (so nothing below it on the stack holds
// them), never stored in the memo nor duplicated (wideKeep), and every value from
// the first of them on is one of the items (no container made among the items
// holds one). A snapshot's addresses and time stamps are wide: without this, the
// table would keep 16 bytes for each trace entry.
func (d *decoder) trimWide(items []value, markWide int) {
	if markWide < 0 {
		return
	}
	floor := max(markWide, d.wideKeep)
	var idx [32]int
	n := 0
	for _, v := range items {
		if v.wide && int(v.n) >= floor {
			if n == len(idx) {
				return
			}
			idx[n] = int(v.n)
			n++
		}
	}
	if n == 0 {
		return
	}
	for i := 1; i < n; i++ { // insertion sort: a few values (addr, time_us)
		for j := i; j > 0 && idx[j] < idx[j-1]; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	lo := idx[0]
	for i := 1; i < n; i++ {
		if idx[i] == idx[i-1] {
			return
		}
	}
	if len(d.wide)-lo != n {
		return
	}
	d.wide = d.wide[:lo]
}

// smallDict is the number of keys up to which a dict's keys are searched.
const smallDict = 16

// hashKey returns a string that two keys share exactly when Python's == holds
// between them: integers, booleans and integral floats by value, strings and
// bytes by content, tuples item by item. NaN is never equal to anything.
func (d *decoder) hashKey(v value) string {
	var b []byte
	b = d.appendKey(b, v, 0)
	return string(b)
}

func (d *decoder) appendKey(b []byte, v value, depth int) []byte {
	switch v.k {
	case kStr:
		b = append(b, 's')
		b = binary.AppendUvarint(b, uint64(len(d.strs[v.n])))
		return append(b, d.strs[v.n]...)
	case kBytes:
		b = append(b, 'b')
		b = binary.AppendUvarint(b, uint64(len(d.bytes[v.n])))
		return append(b, d.bytes[v.n]...)
	case kNone:
		return append(b, 'n')
	case kTuple:
		items := d.lists.at(v.n).items
		b = append(b, 't')
		b = binary.AppendUvarint(b, uint64(len(items)))
		if depth > maxDepth {
			return fmt.Appendf(b, "#%d", v.n)
		}
		for _, it := range items {
			b = d.appendKey(b, it, depth+1)
		}
		return b
	case kFloat:
		f := math.Float64frombits(d.bits(v))
		if math.IsNaN(f) {
			d.nans++
			return fmt.Appendf(b, "nan%d", d.nans)
		}
		if f != math.Trunc(f) || math.IsInf(f, 0) {
			return fmt.Appendf(b, "f%x", d.bits(v))
		}
		i, _ := new(big.Float).SetFloat64(f).Int(nil)
		return append(append(b, 'i'), i.String()...)
	case kInt:
		return strconv.AppendInt(append(b, 'i'), int64(d.bits(v)), 10)
	case kBool, kUint:
		return strconv.AppendUint(append(b, 'i'), d.bits(v), 10)
	case kBig:
		return append(append(b, 'i'), d.bigs[v.n].String()...)
	}
	return fmt.Appendf(b, "o%d:%d", v.k, v.n) // frozensets: by identity
}

// sameKeys reports whether the keys of kv are the strings of lastKeys, in order
// (one dict per trace entry, each with the keys of the one before): then they
// are distinct strings.
func (d *decoder) sameKeys(kv []value) bool {
	if len(kv) != len(d.lastKeys) {
		return false
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i].k != kStr || kv[i].n != d.lastKeys[i] {
			return false
		}
	}
	return true
}

// distinctStrKeys reports whether the keys of kv are strings that differ from each
// other (the common case, checked quickly for small dicts), and makes them
// lastKeys when they are.
func (d *decoder) distinctStrKeys(kv []value) bool {
	if len(kv) > 32 {
		return false
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i].k != kStr {
			return false
		}
		for j := 0; j < i; j += 2 {
			if kv[j].n == kv[i].n || d.strs[kv[j].n] == d.strs[kv[i].n] {
				return false
			}
		}
	}
	d.lastKeys = d.lastKeys[:0]
	for i := range kv {
		d.lastKeys = append(d.lastKeys, kv[i&^1].n)
	}
	d.keysGen++
	return true
}

// index returns the position of key k in d.kv, or -1.
func (t *tree) index(d *dictObj, k value) int {
	if k.k == kStr {
		s := t.strs[k.n]
		for i := 0; i < len(d.kv); i += 2 {
			if e := d.kv[i]; e.k == kStr && (e.n == k.n || t.strs[e.n] == s) {
				return i
			}
		}
		return -1
	}
	for i := 0; i < len(d.kv); i += 2 {
		if t.equal(d.kv[i], k, 0) {
			return i
		}
	}
	return -1
}

// maxDepth bounds the recursion over nested tuples (hashing, comparing, errors).
const maxDepth = 64

// maxKeyItems bounds the values a dict key or set element holds, counted through
// its nested tuples as often as each is referenced. Tuples shared by memo
// references can double at each level, so that a pickle of a few hundred bytes
// holds a key of 2^60 items; hashing or comparing it item by item would never end.
const maxKeyItems = 1 << 12

// keyCheck returns "" when v can be a dict key or set element (it is hashable,
// nested at most maxDepth deep and holds at most maxKeyItems values), else why not.
// Once a key passes, hashing and comparing it visit at most maxKeyItems values.
func (t *tree) keyCheck(v value) string {
	if v.k != kTuple {
		if v.k == kList || v.k == kDict || v.k == kSet {
			return fmt.Sprintf("of type %s is not hashable", t.typeName(v))
		}
		return ""
	}
	n := 0
	var walk func(v value, depth int) string
	walk = func(v value, depth int) string {
		n++
		switch {
		case n > maxKeyItems:
			return fmt.Sprintf("is a tuple of more than %d items, counting nested tuples each time they are referenced (tuples shared by memo references?)", maxKeyItems)
		case v.k == kList || v.k == kDict || v.k == kSet:
			return fmt.Sprintf("is a tuple holding a %s, which is not hashable", t.typeName(v))
		case v.k != kTuple:
			return ""
		case depth > maxDepth:
			return fmt.Sprintf("is a tuple nested more than %d deep", maxDepth)
		}
		for _, e := range t.lists.at(v.n).items {
			if why := walk(e, depth+1); why != "" {
				return why
			}
		}
		return ""
	}
	return walk(v, 0)
}

// equal compares two hashable keys as Python's == does for the plain types:
// integers and booleans by value, floats with integers by value, strings, bytes
// and tuples by content.
func (t *tree) equal(a, b value, depth int) bool {
	if a == b { // one object (a memo reference), or one small value
		return true
	}
	switch {
	case a.k == kStr && b.k == kStr:
		return t.strs[a.n] == t.strs[b.n]
	case a.k == kBytes && b.k == kBytes:
		return string(t.bytes[a.n]) == string(t.bytes[b.n])
	case a.k == kTuple && b.k == kTuple:
		x, y := t.lists.at(a.n).items, t.lists.at(b.n).items
		if len(x) != len(y) || depth > maxDepth {
			return false
		}
		for i := range x {
			if !t.equal(x[i], y[i], depth+1) {
				return false
			}
		}
		return true
	case a.k == kFrozenSet || b.k == kFrozenSet:
		return a == b
	}
	fa, oka := t.number(a)
	fb, okb := t.number(b)
	return oka && okb && fa.Cmp(fb) == 0
}

// number returns a numeric key as an exact big.Float.
func (t *tree) number(v value) (*big.Float, bool) {
	switch v.k {
	case kBool, kUint:
		return new(big.Float).SetUint64(t.bits(v)), true
	case kInt:
		return new(big.Float).SetInt64(int64(t.bits(v))), true
	case kBig:
		return new(big.Float).SetInt(t.bigs[v.n]), true
	case kFloat:
		f := math.Float64frombits(t.bits(v))
		if math.IsNaN(f) {
			return nil, false
		}
		return new(big.Float).SetFloat64(f), true
	}
	return nil, false
}

var kindName = map[kind]string{
	kNone: "NoneType", kBool: "bool", kInt: "int", kUint: "int", kBig: "int", kFloat: "float",
	kStr: "str", kBytes: "bytes", kDict: "dict", kList: "list", kTuple: "tuple", kSet: "set",
	kFrozenSet: "frozenset",
}

// typeName is the Python type name of a decoded value, for error messages.
func (t *tree) typeName(v value) string { return kindName[v.k] }
