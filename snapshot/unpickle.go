package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
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

// The plain Python values the decoder builds. Dicts keep their pairs in order; lists
// and dicts are pointers so that memo references share them (as Python does) and the
// converter can cache per object.
type (
	pyDict  struct{ kv []any } // k0, v0, k1, v1, …
	pyList  struct{ items []any }
	pyTuple []any
	pySet   struct {
		items  []any
		frozen bool
	}
	pyBytes []byte
)

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

// maxProtocol is the highest pickle protocol CPython writes (3.8–3.14).
const maxProtocol = 5

// decoder is a pickle machine restricted to plain values. It never allocates more
// than the input can back: every length is checked against the bytes that remain.
type decoder struct {
	data    []byte
	pos     int // next byte to read
	op      int // offset of the opcode being executed
	code    byte
	stack   []any
	marks   []int
	memo    []any
	memoMap map[uint64]any // sparse BINPUT/PUT indices
}

// unpickle decodes one pickle holding plain values.
func unpickle(data []byte) (any, error) {
	if len(data) == 0 {
		return nil, errors.New("snapshot: pickle: empty input")
	}
	d := &decoder{data: data, stack: make([]any, 0, 64)}
	return d.run()
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
	b := d.data[d.pos : d.pos+int(n)]
	d.pos += int(n)
	return b, nil
}

// line returns the bytes up to the next newline (protocol 0 arguments).
func (d *decoder) line() ([]byte, error) {
	for i := d.pos; i < len(d.data); i++ {
		if d.data[i] == '\n' {
			b := d.data[d.pos:i]
			d.pos = i + 1
			return b, nil
		}
	}
	return nil, d.fail("argument not terminated by a newline (truncated)")
}

func (d *decoder) u8(what string) (uint64, error) {
	b, err := d.take(1, what)
	if err != nil {
		return 0, err
	}
	return uint64(b[0]), nil
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

func (d *decoder) push(v any) { d.stack = append(d.stack, v) }

func (d *decoder) pop() (any, error) {
	n := len(d.stack)
	if n == 0 || (len(d.marks) > 0 && d.marks[len(d.marks)-1] == n) {
		return nil, d.fail("needs a value but the stack is empty")
	}
	v := d.stack[n-1]
	d.stack = d.stack[:n-1]
	return v, nil
}

func (d *decoder) top() (any, error) {
	n := len(d.stack)
	if n == 0 || (len(d.marks) > 0 && d.marks[len(d.marks)-1] == n) {
		return nil, d.fail("needs a value but the stack is empty")
	}
	return d.stack[n-1], nil
}

// popMark returns the values pushed since the last MARK and removes them and the mark.
// The slice aliases the stack and is valid until the next push.
func (d *decoder) popMark() ([]any, error) {
	if len(d.marks) == 0 {
		return nil, d.fail("no MARK to pop to")
	}
	m := d.marks[len(d.marks)-1]
	d.marks = d.marks[:len(d.marks)-1]
	items := d.stack[m:]
	d.stack = d.stack[:m]
	return items, nil
}

func (d *decoder) memoPut(idx uint64, v any) {
	switch {
	case idx < uint64(len(d.memo)):
		d.memo[idx] = v
	case idx == uint64(len(d.memo)):
		d.memo = append(d.memo, v)
	default:
		if d.memoMap == nil {
			d.memoMap = map[uint64]any{}
		}
		d.memoMap[idx] = v
	}
}

func (d *decoder) memoGet(idx uint64) error {
	if idx < uint64(len(d.memo)) {
		d.push(d.memo[idx])
		return nil
	}
	if v, ok := d.memoMap[idx]; ok {
		d.push(v)
		return nil
	}
	return d.fail("memo index %d was never stored", idx)
}

func (d *decoder) run() (any, error) {
	for d.pos < len(d.data) {
		d.op = d.pos
		d.code = d.data[d.pos]
		d.pos++
		if err := d.step(); err != nil {
			if err == errStop {
				return d.result()
			}
			return nil, err
		}
	}
	if d.pos == 0 {
		return nil, errors.New("snapshot: pickle: empty input")
	}
	return nil, fmt.Errorf("snapshot: pickle: input ends at offset %d without a STOP opcode (truncated)", len(d.data))
}

var errStop = errors.New("stop")

func (d *decoder) result() (any, error) {
	if len(d.marks) > 0 {
		return nil, d.fail("%d MARKs left open at STOP", len(d.marks))
	}
	if len(d.stack) != 1 {
		return nil, d.fail("the stack holds %d values at STOP, want 1", len(d.stack))
	}
	if d.pos != len(d.data) {
		return nil, d.fail("%d bytes follow the STOP opcode", len(d.data)-d.pos)
	}
	return d.stack[0], nil
}

func (d *decoder) step() error {
	switch op := d.code; op {
	case opProto:
		v, err := d.u8("protocol number")
		if err != nil {
			return err
		}
		if v > maxProtocol {
			return d.fail("protocol %d is not supported (0–%d)", v, maxProtocol)
		}
	case opFrame:
		// FRAME announces the size of the next frame; the data is read as it comes.
		if _, err := d.take(8, "frame length"); err != nil {
			return err
		}
	case opStop:
		return errStop
	case opMark:
		d.marks = append(d.marks, len(d.stack))
	case opPop:
		if len(d.stack) > 0 && len(d.marks) > 0 && d.marks[len(d.marks)-1] == len(d.stack) {
			d.marks = d.marks[:len(d.marks)-1] // POP of a MARK, as CPython does
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
		d.push(v)

	// None, booleans, numbers
	case opNone:
		d.push(nil)
	case opNewTrue:
		d.push(true)
	case opNewFalse:
		d.push(false)
	case opBinInt1:
		v, err := d.u8("BININT1 argument")
		if err != nil {
			return err
		}
		d.push(int64(v))
	case opBinInt2:
		b, err := d.take(2, "BININT2 argument")
		if err != nil {
			return err
		}
		d.push(int64(binary.LittleEndian.Uint16(b)))
	case opBinInt:
		v, err := d.u32("BININT argument")
		if err != nil {
			return err
		}
		d.push(int64(int32(uint32(v))))
	case opLong1:
		n, err := d.u8("LONG1 length")
		if err != nil {
			return err
		}
		return d.long(n)
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
		return d.textInt(string(b))
	case opBinFloat:
		b, err := d.take(8, "BINFLOAT argument")
		if err != nil {
			return err
		}
		d.push(math.Float64frombits(binary.BigEndian.Uint64(b)))
	case opFloat:
		b, err := d.line()
		if err != nil {
			return err
		}
		f, perr := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
		if perr != nil {
			return d.fail("%q is not a float", b)
		}
		d.push(f)

	// strings and bytes
	case opShortBinUni:
		n, err := d.u8("SHORT_BINUNICODE length")
		if err != nil {
			return err
		}
		return d.str(n, "SHORT_BINUNICODE data")
	case opBinUnicode:
		n, err := d.u32("BINUNICODE length")
		if err != nil {
			return err
		}
		return d.str(n, "BINUNICODE data")
	case opBinUnicode8:
		n, err := d.u64("BINUNICODE8 length")
		if err != nil {
			return err
		}
		return d.str(n, "BINUNICODE8 data")
	case opShortBinBytes, opShortBinString:
		n, err := d.u8("length")
		if err != nil {
			return err
		}
		return d.bytes(n, op == opShortBinString)
	case opBinBytes, opBinString:
		n, err := d.u32("length")
		if err != nil {
			return err
		}
		if op == opBinString && int32(uint32(n)) < 0 {
			return d.fail("negative BINSTRING length")
		}
		return d.bytes(n, op == opBinString)
	case opBinBytes8, opByteArray8:
		n, err := d.u64("length")
		if err != nil {
			return err
		}
		return d.bytes(n, false)
	case opString:
		b, err := d.line()
		if err != nil {
			return err
		}
		s, uerr := unquotePy(b)
		if uerr != nil {
			return d.fail("%v", uerr)
		}
		d.push(s)
	case opUnicode:
		b, err := d.line()
		if err != nil {
			return err
		}
		d.push(rawUnicodeEscape(b))

	// containers
	case opEmptyDict:
		d.push(&pyDict{})
	case opEmptyList:
		d.push(&pyList{})
	case opEmptyTuple:
		d.push(pyTuple(nil))
	case opEmptySet:
		d.push(&pySet{})
	case opDict:
		items, err := d.popMark()
		if err != nil {
			return err
		}
		if len(items)%2 != 0 {
			return d.fail("odd number of values (%d) for key/value pairs", len(items))
		}
		d.push(&pyDict{kv: append([]any(nil), items...)})
	case opList:
		items, err := d.popMark()
		if err != nil {
			return err
		}
		d.push(&pyList{items: append([]any(nil), items...)})
	case opTuple:
		items, err := d.popMark()
		if err != nil {
			return err
		}
		d.push(pyTuple(append([]any(nil), items...)))
	case opTuple1, opTuple2, opTuple3:
		n := int(op-opTuple1) + 1
		floor := 0
		if len(d.marks) > 0 {
			floor = d.marks[len(d.marks)-1]
		}
		if len(d.stack)-floor < n {
			return d.fail("needs %d values, the stack holds %d", n, len(d.stack)-floor)
		}
		t := pyTuple(append([]any(nil), d.stack[len(d.stack)-n:]...))
		d.stack = d.stack[:len(d.stack)-n]
		d.push(t)
	case opFrozenSet:
		items, err := d.popMark()
		if err != nil {
			return err
		}
		d.push(&pySet{items: append([]any(nil), items...), frozen: true})
	case opAppend:
		v, err := d.pop()
		if err != nil {
			return err
		}
		return d.appendTo([]any{v})
	case opAppends:
		items, err := d.popMark()
		if err != nil {
			return err
		}
		return d.appendTo(items)
	case opSetItem:
		v, err := d.pop()
		if err != nil {
			return err
		}
		k, err := d.pop()
		if err != nil {
			return err
		}
		return d.setItems([]any{k, v})
	case opSetItems:
		items, err := d.popMark()
		if err != nil {
			return err
		}
		if len(items)%2 != 0 {
			return d.fail("odd number of values (%d) for key/value pairs", len(items))
		}
		return d.setItems(items)
	case opAddItems:
		items, err := d.popMark()
		if err != nil {
			return err
		}
		t, err := d.top()
		if err != nil {
			return err
		}
		s, ok := t.(*pySet)
		if !ok || s.frozen {
			return d.fail("adds items to a %s, want a set", pyType(t))
		}
		s.items = append(s.items, items...)

	// memo
	case opMemoize:
		v, err := d.top()
		if err != nil {
			return err
		}
		d.memoPut(uint64(len(d.memo)+len(d.memoMap)), v)
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
	case opBinGet, opLongBinGet, opGet:
		var idx uint64
		var err error
		switch op {
		case opBinGet:
			idx, err = d.u8("BINGET index")
		case opLongBinGet:
			idx, err = d.u32("LONG_BINGET index")
		default:
			idx, err = d.textIndex()
		}
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
		return d.refuse(fmt.Sprintf("it would import the Python object %s.%s", mod, name))
	case opStackGlobal:
		if n := len(d.stack); n >= 2 {
			mod, ok1 := d.stack[n-2].(string)
			name, ok2 := d.stack[n-1].(string)
			if ok1 && ok2 {
				return d.refuse(fmt.Sprintf("it would import the Python object %s.%s", mod, name))
			}
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

func (d *decoder) str(n uint64, what string) error {
	b, err := d.take(n, what)
	if err != nil {
		return err
	}
	d.push(string(b))
	return nil
}

// bytes pushes a bytes value. Python 2 str (BINSTRING) is read as Python 3 does by
// default for plain data: ASCII as str; anything else as bytes.
func (d *decoder) bytes(n uint64, py2str bool) error {
	b, err := d.take(n, "data")
	if err != nil {
		return err
	}
	if py2str {
		d.push(string(b))
		return nil
	}
	d.push(pyBytes(append([]byte(nil), b...)))
	return nil
}

// long pushes a little-endian two's-complement integer of n bytes: int64 when it
// fits, uint64 for larger positive values that fit, else *big.Int.
func (d *decoder) long(n uint64) error {
	raw, err := d.take(n, "integer")
	if err != nil {
		return err
	}
	if len(raw) == 0 {
		d.push(int64(0))
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
		d.push(int64(u))
		return nil
	}
	if !neg && len(raw) == 9 && raw[8] == 0 {
		d.push(binary.LittleEndian.Uint64(raw))
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
	d.push(normInt(v))
	return nil
}

// normInt returns v as int64 or uint64 when it fits.
func normInt(v *big.Int) any {
	if v.IsInt64() {
		return v.Int64()
	}
	if v.IsUint64() {
		return v.Uint64()
	}
	return v
}

// textInt handles protocol 0's INT and LONG ("I01\n" is True, "I00\n" False).
func (d *decoder) textInt(s string) error {
	if d.code == opInt {
		switch s {
		case "00":
			d.push(false)
			return nil
		case "01":
			d.push(true)
			return nil
		}
	}
	s = strings.TrimSuffix(strings.TrimSpace(s), "L")
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		d.push(v)
		return nil
	}
	if len(s) > 10000 {
		return d.fail("integer of %d digits is too long", len(s))
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return d.fail("%q is not an integer", s)
	}
	d.push(normInt(v))
	return nil
}

func (d *decoder) textIndex() (uint64, error) {
	b, err := d.line()
	if err != nil {
		return 0, err
	}
	v, perr := strconv.ParseUint(string(b), 10, 32)
	if perr != nil {
		return 0, d.fail("memo index %q is not a number", b)
	}
	return v, nil
}

func (d *decoder) appendTo(items []any) error {
	t, err := d.top()
	if err != nil {
		return err
	}
	l, ok := t.(*pyList)
	if !ok {
		return d.fail("appends to a %s, want a list", pyType(t))
	}
	if l.items == nil {
		l.items = make([]any, 0, len(items))
	}
	l.items = append(l.items, items...)
	return nil
}

func (d *decoder) setItems(items []any) error {
	t, err := d.top()
	if err != nil {
		return err
	}
	dict, ok := t.(*pyDict)
	if !ok {
		return d.fail("sets items of a %s, want a dict", pyType(t))
	}
	for i := 0; i < len(items); i += 2 {
		if !hashable(items[i]) {
			return d.fail("dict key of type %s is not hashable", pyType(items[i]))
		}
	}
	if dict.kv == nil {
		dict.kv = make([]any, 0, len(items))
	}
	// A repeated key replaces the earlier value, as in Python.
	for i := 0; i < len(items); i += 2 {
		if j := dict.index(items[i]); j >= 0 {
			dict.kv[j+1] = items[i+1]
			continue
		}
		dict.kv = append(dict.kv, items[i], items[i+1])
	}
	return nil
}

// index returns the position of key k in d.kv, or -1. Keys are compared as Python
// would for the plain types (strings, integers, booleans, None, bytes, tuples).
func (d *pyDict) index(k any) int {
	for i := 0; i < len(d.kv); i += 2 {
		if pyEqual(d.kv[i], k) {
			return i
		}
	}
	return -1
}

// get returns the value under the string key k.
func (d *pyDict) get(k string) (any, bool) {
	for i := 0; i < len(d.kv); i += 2 {
		if s, ok := d.kv[i].(string); ok && s == k {
			return d.kv[i+1], true
		}
	}
	return nil, false
}

func hashable(v any) bool {
	switch x := v.(type) {
	case *pyList, *pyDict:
		return false
	case *pySet:
		return x.frozen
	case pyTuple:
		for _, e := range x {
			if !hashable(e) {
				return false
			}
		}
	}
	return true
}

// pyEqual compares two hashable keys. Numbers compare by value across int64, uint64,
// *big.Int, float64 and bool, as Python's == does.
func pyEqual(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case pyBytes:
		y, ok := b.(pyBytes)
		return ok && string(x) == string(y)
	case nil:
		return b == nil
	case pyTuple:
		y, ok := b.(pyTuple)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !pyEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case *pySet:
		return a == b
	}
	xa, oka := toBig(a)
	xb, okb := toBig(b)
	if oka && okb {
		return xa.Cmp(xb) == 0
	}
	fa, oka := a.(float64)
	fb, okb := b.(float64)
	if oka && okb {
		return fa == fb
	}
	if oka || okb { // one float, one integer
		if oka {
			fa, fb = fb, fa
			a, b = b, a
		}
		if xi, ok := toBig(a); ok {
			f, acc := new(big.Float).SetInt(xi).Float64()
			return acc == big.Exact && f == fb
		}
	}
	return false
}

func toBig(v any) (*big.Int, bool) {
	switch x := v.(type) {
	case int64:
		return big.NewInt(x), true
	case uint64:
		return new(big.Int).SetUint64(x), true
	case *big.Int:
		return x, true
	case bool:
		if x {
			return big.NewInt(1), true
		}
		return big.NewInt(0), true
	}
	return nil, false
}

// pyType is the Python type name of a decoded value, for error messages.
func pyType(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int64, uint64, *big.Int:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case pyBytes:
		return "bytes"
	case *pyDict:
		return "dict"
	case *pyList:
		return "list"
	case pyTuple:
		return "tuple"
	case *pySet:
		return "set"
	}
	return fmt.Sprintf("%T", v)
}

// unquotePy decodes protocol 0's STRING argument: a Python 2 str literal in single
// or double quotes with backslash escapes.
func unquotePy(b []byte) (string, error) {
	s := string(b)
	if len(s) < 2 || (s[0] != '\'' && s[0] != '"') || s[len(s)-1] != s[0] {
		return "", fmt.Errorf("STRING argument %.40q is not quoted", s)
	}
	s = s[1 : len(s)-1]
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			out.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'n':
			out.WriteByte('\n')
		case 't':
			out.WriteByte('\t')
		case 'r':
			out.WriteByte('\r')
		case 'a':
			out.WriteByte('\a')
		case 'b':
			out.WriteByte('\b')
		case 'f':
			out.WriteByte('\f')
		case 'v':
			out.WriteByte('\v')
		case '\\', '\'', '"':
			out.WriteByte(e)
		case '\n':
		case 'x':
			if i+2 >= len(s) {
				return "", fmt.Errorf("STRING argument has a truncated \\x escape")
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return "", fmt.Errorf("STRING argument has a bad \\x escape")
			}
			out.WriteByte(byte(v))
			i += 2
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 16)
			out.WriteByte(byte(v))
			i = j - 1
		default:
			out.WriteByte('\\')
			out.WriteByte(e)
		}
	}
	return out.String(), nil
}

// rawUnicodeEscape decodes protocol 0's UNICODE argument (raw-unicode-escape:
// latin-1 bytes with \uXXXX and \UXXXXXXXX escapes).
func rawUnicodeEscape(b []byte) string {
	var out strings.Builder
	for i := 0; i < len(b); i++ {
		if b[i] == '\\' && i+1 < len(b) && (b[i+1] == 'u' || b[i+1] == 'U') {
			n := 4
			if b[i+1] == 'U' {
				n = 8
			}
			if i+2+n <= len(b) {
				if v, err := strconv.ParseUint(string(b[i+2:i+2+n]), 16, 32); err == nil && v <= 0x10FFFF {
					out.WriteRune(rune(v))
					i += 1 + n
					continue
				}
			}
		}
		out.WriteRune(rune(b[i]))
	}
	return out.String()
}
