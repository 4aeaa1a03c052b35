package snapshot

import "encoding/binary"

// countDicts walks the opcodes of the pickle in data without decoding it and
// returns how many dicts it makes (EMPTY_DICT and DICT) and how many values it
// memoizes (MEMOIZE), so that the entries of a streaming decode and its memo are
// each one array of the right size rather than one grown by copying (Python's
// pickler memoizes every dict and list: a big history's memo is several values
// per entry). It returns 0, 0 for anything it does not recognise (the decode then
// grows its arrays) and calls release (when not nil) every releaseEvery bytes, as
// the decoder does. The dicts are bounded by what the input can hold: a trace
// entry takes at least minEntryBytes of pickle; a MEMOIZE is one byte.
func countDicts(data []byte, release func(from, upTo int)) (dicts, memos int) {
	n := 0
	next, released := releaseEvery, 0
	if release != nil {
		defer func() { release(released, len(data)) }()
	}
	for p := 0; p < len(data); {
		if release != nil && p >= next {
			release(released, p)
			released, next = p, p+releaseEvery
		}
		op := data[p]
		p++
		arg := 0 // bytes of argument after the opcode
		switch op {
		case opEmptyDict, opDict:
			n++
		case opMemoize:
			memos++
		case opStop:
			return min(n, len(data)/minEntryBytes), memos
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
			if p >= len(data) {
				return 0, 0
			}
			arg = 1 + int(data[p])
		case opBinString, opBinUnicode, opBinBytes, opLong4:
			if p+4 > len(data) {
				return 0, 0
			}
			arg = 4 + int(binary.LittleEndian.Uint32(data[p:]))
		case opBinUnicode8, opBinBytes8, opByteArray8:
			if p+8 > len(data) {
				return 0, 0
			}
			m := binary.LittleEndian.Uint64(data[p:])
			if m > uint64(len(data)) {
				return 0, 0
			}
			arg = 8 + int(m)
		case opFloat, opInt, opLong, opString, opUnicode, opPersID, opGet, opPut, opGlobal, opInst:
			lines := 1
			if op == opGlobal || op == opInst {
				lines = 2
			}
			for ; lines > 0; lines-- {
				for p < len(data) && data[p] != '\n' {
					p++
				}
				p++
			}
		default:
			return 0, 0
		}
		if arg > len(data)-p {
			return 0, 0
		}
		p += arg
	}
	return 0, 0
}

// minEntryBytes is the fewest bytes of pickle a trace entry the streaming decode
// keeps can take: EMPTY_DICT, MARK, three keys and their values (action, size,
// addr or device_free) as memo references of two bytes, SETITEMS.
const minEntryBytes = 15
