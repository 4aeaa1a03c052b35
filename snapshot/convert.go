package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
)

// decode unpickles data and converts it to the typed model.
func decode(data []byte) (*Snapshot, error) { return decodeWith(data, nil) }

// decodeWith is decode, calling release (when not nil) now and then with a range
// of the input that is no longer read.
//
// It first decodes as it streams (see converter.seal): each trace entry is converted as
// soon as its dict is complete, so that the decoded form of a trace never sits in
// memory beside the converted one. Whenever that cannot be shown to give what
// decoding first and converting after gives (an entry's dict referenced twice or
// changed after it was complete, or any error at all), the input is decoded again
// the plain way, which is the reference: errors and unusual pickles take that path.
func decodeWith(data []byte, release func(from, upTo int)) (*Snapshot, error) {
	if s, err := decodeStreaming(data, release); err == nil {
		return s, nil
	}
	t, err := unpickleWith(data, release, nil)
	if err != nil {
		return nil, err
	}
	c := converter{tree: t}
	return c.snapshot(t.root)
}

// decodeStreaming decodes data converting trace entries while it reads (sealing
// them). Any error means "decode the plain way".
func decodeStreaming(data []byte, release func(from, upTo int)) (*Snapshot, error) {
	c := &converter{}
	n, memos := countDicts(data, release)
	if n > 0 {
		c.store = make([]TraceEntry, 0, n)
		c.sealedAt = make([]uint32, 0, n)
	}
	c.memos = memos
	t, err := unpickleWith(data, release, c)
	if err != nil {
		return nil, err
	}
	c.tree = t
	s, err := c.snapshot(t.root)
	if err == nil && c.fallback {
		err = errFallback
	}
	return s, err
}

// errFallback stops a streaming decode that cannot be shown to agree with the
// plain one.
var errFallback = errors.New("snapshot: streaming decode gives way to the plain one")

// converter turns decoded values into the typed model. Frames lists and frame dicts
// are shared in PyTorch's pickles (memo references), so their conversions are
// cached per object: a shared list costs once, however often it is referenced.
type converter struct {
	*tree
	stacks map[string]uint32 // index in stackList of the frames lists with these frames' keys (see frameList)
	key    []byte
	// stackList holds each distinct call stack once; listStack holds, per frames
	// list, 1 + the index of its stack (0: not converted yet), so that a list met
	// again (memo references: PyTorch's free_requested and free_completed share
	// one) costs a lookup, and a converted list's items need not be kept.
	stackList [][]Frame
	listStack chunked32
	byItems   map[itemsKey]uint32 // index in stackList of the lists with these items
	// A frame is a triple of its name's and filename's string indices and its
	// line; tripleOf holds, per dict, 1 + the index of its triple (0: not seen).
	triples   []frameTriple
	claimed   []uint64 // bit per dict: converted as an entry (see claim)
	tripleIdx map[frameTriple]uint32
	tripleOf  chunked32
	codes     []uint8                // per string: 1 + its field code, 0 when not looked up yet
	metas     map[metaKey]*EntryMeta // the entries' shared EntryMetas (see meta)
	// lastMeta is the EntryMeta meta gave last, for lastMetaKey.
	lastMeta    *EntryMeta
	lastMetaKey metaKey

	// Sealing (decodeStreaming): the decoder hands each dict that looks like a
	// trace entry to seal as soon as its items are set; a dict that converts is
	// sealed: its entry goes to store and the dict keeps no items. A sealed dict
	// and the frames it names are frozen: changing one, or referencing a sealed
	// dict a second time, stops the streaming decode (errFallback), and so does
	// reading a sealed dict other than as a trace entry (fallback).
	store       []TraceEntry
	sealedAt    []uint32 // by dict index: 1 + its entry's index in store (0: not sealed)
	used        []uint64 // bit per dict: a sealed entry taken into a trace
	frozenDicts []uint64 // bit per dict: sealed, or a frame of a sealed entry
	frozenLists []uint64 // bit per list: the frames of a sealed entry
	fallback    bool     // a sealed dict was read as something else
	// A frozen list is dead once converted: memo references to it are read
	// through listStack. Chunks of the tables whose dicts are all sealed, or whose
	// lists are all dead, are let go (sealedIn and deadIn count them per chunk).
	sealedIn []uint16
	memos    int // the values the pickle memoizes (countDicts): the memo's capacity
	deadIn   []uint16
	// What seal found about the keys of the last dict it was handed: where each
	// field's value is in kv (-1: absent), for the keys named keysGen (0: none).
	keyPos  fieldPos
	keysGen uint64
}

// fieldPos holds, by field code, the position of a field's value in a dict's
// items (-1: absent).
type fieldPos [len(fieldNames)]int8

// release counts one more sealed dict or dead list in the chunk of index n of
// table t and lets the chunk go when all its slots are: none is read again.
func release[T any](t *table[T], counts *[]uint16, n uint32) {
	ci := int(n / tableChunk)
	for ci >= len(*counts) {
		*counts = append(*counts, 0)
	}
	(*counts)[ci]++
	if (*counts)[ci] == tableChunk {
		t.spare = append(t.spare, t.chunks[ci])
		t.chunks[ci] = nil
	}
}

// bitAt reports bit i of a bit set.
func bitAt(set []uint64, i uint32) bool {
	return int(i/64) < len(set) && set[i/64]&(1<<(i%64)) != 0
}

// setBit sets bit i of a bit set, growing it as needed.
func setBit(set *[]uint64, i uint32) {
	for int(i/64) >= len(*set) {
		*set = append(*set, 0)
	}
	(*set)[i/64] |= 1 << (i % 64)
}

// sealed returns 1 + the store index of dict n's entry, 0 when not sealed.
func (c *converter) sealed(n uint32) uint32 {
	if int(n) < len(c.sealedAt) {
		return c.sealedAt[n]
	}
	return 0
}

// dict is tree.dict, but a sealed dict read here (as anything but a trace entry)
// makes the streaming decode give way.
func (c *converter) dict(v value) *dictObj {
	if c.sealed(v.n) != 0 {
		c.fallback = true
		return &dictObj{}
	}
	return c.tree.dict(v)
}

// seal converts the items of dict n (key, value, … with distinct string keys) as
// a trace entry when they are one, and reports whether it did: then the dict is
// sealed and its items need not be kept. keysGen, when not 0, names the keys of
// kv (decoder.keysGen): what seal found about keys of that name is kept, and not
// looked up again for the next dict with the same.
func (c *converter) seal(n uint32, kv []value, keysGen uint64) bool {
	if keysGen == 0 || keysGen != c.keysGen {
		if len(kv) > 2*maxSealKeys {
			return false
		}
		c.fieldPositions(&c.keyPos, kv)
		c.keysGen = keysGen
	}
	if c.keyPos[fAction] < 0 {
		return false
	}
	var frames value
	if j := c.keyPos[fFrames]; j >= 0 {
		frames = kv[j]
	}
	var e TraceEntry
	if !c.entryAt(&e, kv, &c.keyPos) {
		return false
	}
	if frames.k == kList && !bitAt(c.frozenLists, frames.n) {
		setBit(&c.frozenLists, frames.n)
		for _, f := range c.items(frames) {
			if f.k == kDict {
				setBit(&c.frozenDicts, f.n)
			}
		}
		// The list converted (entryKV above): it is read again only through
		// listStack (frameList), so its slot is dead even when the memo still
		// names it; any other read of it gives way (converter.items).
		release(&c.lists, &c.deadIn, frames.n)
	}
	setBit(&c.frozenDicts, n)
	release(&c.dicts, &c.sealedIn, n)
	if int(n) >= len(c.sealedAt) {
		c.sealedAt = slices.Grow(c.sealedAt, int(n)+1-len(c.sealedAt))[:n+1]
	}
	c.store = append(c.store, e)
	c.sealedAt[n] = uint32(len(c.store))
	return true
}

// maxSealKeys is the most keys of a dict that seal converts (the decoder hands
// it dicts of at most 16 keys: see distinctStrKeys).
const maxSealKeys = 16

// Field codes of the keys of the hot dicts (trace entries and frames), so that
// their conversion switches on a small integer instead of comparing strings.
const (
	fUnknown = iota
	fAction
	fAddr
	fSize
	fStream
	fTimeUS
	fDeviceFree
	fFrames
	fCompileContext
	fUserMetadata
	fFilename
	fLine
	fName
	fPoolID
)

var fieldNames = [...]string{
	fUnknown: "", fAction: "action", fAddr: "addr", fSize: "size", fStream: "stream",
	fTimeUS: "time_us", fDeviceFree: "device_free", fFrames: "frames",
	fCompileContext: "compile_context", fUserMetadata: "user_metadata",
	fFilename: "filename", fLine: "line", fName: "name", fPoolID: "pool_id",
}

var fieldCodes = func() map[string]uint8 {
	m := map[string]uint8{}
	for i, n := range fieldNames {
		if i != fUnknown {
			m[n] = uint8(i)
		}
	}
	return m
}()

// code returns the field code of a dict key (fUnknown for other keys and for
// keys that are not strings), looking each string up once.
func (c *converter) code(k value) uint8 {
	if k.k != kStr {
		return fUnknown
	}
	if int(k.n) >= len(c.codes) {
		c.codes = append(c.codes, make([]uint8, len(c.strs)-len(c.codes))...)
	}
	if x := c.codes[k.n]; x != 0 {
		return x - 1
	}
	x := fieldCodes[c.strs[k.n]]
	c.codes[k.n] = x + 1
	return x
}

type frameTriple struct {
	name, file uint32
	line       int32
}

// at is where a value sits, rendered only for errors: format has n %d verbs.
type at struct {
	format string
	args   [3]int
	n      int
}

func (a at) String() string {
	args := make([]any, a.n)
	for i := range args {
		args[i] = a.args[i]
	}
	return fmt.Sprintf(a.format, args...)
}

func (a at) with(suffix string, i int) at {
	b := a
	b.format += suffix
	if b.n < len(b.args) {
		b.args[b.n] = i
		b.n++
	}
	return b
}

// typeErr is a key holding the wrong type.
func (c *converter) typeErr(a at, key, want string, v value) error {
	return fmt.Errorf("snapshot: %s.%s: want %s, got %s", a, key, want, c.typeName(v))
}

func missing(a at, key string) error {
	return fmt.Errorf("snapshot: %s: missing key %q", a, key)
}

func (c *converter) asDict(a at, v value) (*dictObj, error) {
	if v.k != kDict {
		return nil, fmt.Errorf("snapshot: %s: want dict, got %s", a, c.typeName(v))
	}
	return c.dict(v), nil
}

// claim is asDict for the dicts of segments, blocks, trace entries and
// annotations, which must each be converted once: each is its own object in a
// snapshot, and one shared by memo references (a pickle a few bytes long naming
// it a million times) is refused rather than converted again and again.
func (c *converter) claim(a at, v value) (*dictObj, error) {
	d, err := c.asDict(a, v)
	if err != nil {
		return nil, err
	}
	if bitAt(c.claimed, v.n) {
		return nil, fmt.Errorf("snapshot: %s: the same dict as an earlier entry (a memo reference); each entry of a snapshot is its own dict", a)
	}
	setBit(&c.claimed, v.n)
	return d, nil
}

func (c *converter) asList(a at, key string, v value) ([]value, error) {
	if v.k != kList && v.k != kTuple {
		return nil, c.typeErr(a, key, "list", v)
	}
	return c.items(v), nil
}

func (c *converter) asInt(a at, key string, v value) (int64, error) {
	if n, ok := c.intOK(v); ok {
		return n, nil
	}
	return 0, c.intErr(a, key, v)
}

// intOK, uintOK and sizeOK are asInt, asUint and size for the values they take,
// with false for any other (then they give the error).
func (t *tree) intOK(v value) (int64, bool) { return int64(t.bits(v)), v.k == kInt }

func (t *tree) uintOK(v value) (uint64, bool) {
	u := t.bits(v)
	return u, v.k == kUint || v.k == kInt && int64(u) >= 0
}

func (t *tree) sizeOK(v value) (int64, bool) {
	n := int64(t.bits(v))
	return n, v.k == kInt && n >= 0
}

// intErr is asInt's error for v, which is not a kInt.
func (c *converter) intErr(a at, key string, v value) error {
	switch v.k {
	case kUint:
		return fmt.Errorf("snapshot: %s.%s: %d does not fit in int64", a, key, c.bits(v))
	case kBig:
		return fmt.Errorf("snapshot: %s.%s: %s does not fit in int64", a, key, shortInt(c.bigs[v.n]))
	}
	return c.typeErr(a, key, "int", v)
}

// shortInt renders a big integer for an error, abbreviated when long (by its
// size alone when very long: converting it to decimal would take long).
func shortInt(b *big.Int) string {
	if b.BitLen() > 1024 {
		return fmt.Sprintf("an integer of %d bits", b.BitLen())
	}
	s := b.String()
	if len(s) > 40 {
		return s[:20] + "…(" + fmt.Sprint(len(s)) + " digits)"
	}
	return s
}

func (c *converter) asUint(a at, key string, v value) (uint64, error) {
	if u, ok := c.uintOK(v); ok {
		return u, nil
	}
	return 0, c.uintErr(a, key, v)
}

// uintErr is asUint's error for v, which is not a non-negative int.
func (c *converter) uintErr(a at, key string, v value) error {
	switch v.k {
	case kInt:
		return fmt.Errorf("snapshot: %s.%s: want a non-negative int, got %d", a, key, int64(c.bits(v)))
	case kBig:
		return fmt.Errorf("snapshot: %s.%s: %s does not fit in 64 bits", a, key, shortInt(c.bigs[v.n]))
	}
	return c.typeErr(a, key, "int", v)
}

func (c *converter) asStr(a at, key string, v value) (string, error) {
	if v.k == kStr {
		return c.strs[v.n], nil
	}
	return "", c.typeErr(a, key, "str", v)
}

func (c *converter) asBool(a at, key string, v value) (bool, error) {
	if v.k == kBool {
		return v.n != 0, nil
	}
	return false, c.typeErr(a, key, "bool", v)
}

func (c *converter) asFloat(a at, key string, v value) (float64, error) {
	switch v.k {
	case kFloat:
		return math.Float64frombits(c.bits(v)), nil
	case kInt: // Python accepts an int where a float is meant
		return float64(int64(c.bits(v))), nil
	}
	return 0, c.typeErr(a, key, "float", v)
}

// maxDevice is the highest device index PyTorch can name (c10::DeviceIndex is an
// int8). Devices index the snapshot's traces, so a larger one is refused.
const maxDevice = 127

// device reads a device index (0–maxDevice).
func (c *converter) device(a at, key string, v value) (int, error) {
	n, err := c.asInt(a, key, v)
	if err != nil {
		return 0, err
	}
	if n < 0 || n > maxDevice {
		return 0, fmt.Errorf("snapshot: %s.%s: %d is not a device index (PyTorch's are 0–%d)", a, key, n, maxDevice)
	}
	return int(n), nil
}

// size reads a size in bytes, which cannot be negative.
func (c *converter) size(a at, key string, v value) (int64, error) {
	if n, ok := c.sizeOK(v); ok {
		return n, nil
	}
	return c.sizeErr(a, key, v)
}

// sizeErr is size's answer for v, which is not a non-negative int.
func (c *converter) sizeErr(a at, key string, v value) (int64, error) {
	n, err := c.asInt(a, key, v)
	if err == nil && n < 0 {
		err = fmt.Errorf("snapshot: %s.%s: %d is negative", a, key, n)
	}
	return n, err
}

func (c *converter) smallInt(a at, key string, v value) (int, error) {
	n, err := c.asInt(a, key, v)
	if err != nil {
		return 0, err
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, fmt.Errorf("snapshot: %s.%s: %d is out of range", a, key, n)
	}
	return int(n), nil
}

func (c *converter) snapshot(v value) (*Snapshot, error) {
	if v.k == kList {
		// pickle.dump(torch.cuda.memory_snapshot()): the segments alone, which
		// memory_viz also accepts.
		s := &Snapshot{}
		if err := c.segments(s, v); err != nil {
			return nil, err
		}
		s.Traces = make([][]TraceEntry, s.Devices())
		for i := range s.Traces {
			s.Traces[i] = []TraceEntry{}
		}
		return s, nil
	}
	if v.k != kDict {
		return nil, fmt.Errorf("snapshot: the pickle holds a %s, want the dict torch.cuda.memory._snapshot() returns (or the list of segments of torch.cuda.memory_snapshot())", c.typeName(v))
	}
	top := c.dict(v)
	root := at{format: "snapshot"}
	s := &Snapshot{}
	var haveSegs, haveTraces bool
	for i := 0; i < len(top.kv); i += 2 {
		val := top.kv[i+1]
		var err error
		switch c.keyStr(top.kv[i]) {
		case "segments":
			haveSegs = true
			err = c.segments(s, val)
		case "device_traces":
			haveTraces = true
			err = c.traces(s, val)
		case "allocator_settings":
			s.HasSettings = true
			err = c.settings(&s.Settings, val)
		case "external_annotations":
			err = c.annotations(s, val)
		}
		if err != nil {
			return nil, err
		}
	}
	if !haveSegs {
		return nil, missing(root, "segments")
	}
	if !haveTraces {
		return nil, missing(root, "device_traces")
	}
	return s, nil
}

func (c *converter) segments(s *Snapshot, v value) error {
	items, err := c.asList(at{format: "snapshot"}, "segments", v)
	if err != nil {
		return err
	}
	s.Segments = make([]Segment, len(items))
	for i, it := range items {
		if err := c.segment(&s.Segments[i], at{format: "segments[%d]", args: [3]int{i}, n: 1}, it); err != nil {
			return err
		}
	}
	return nil
}

const (
	segDevice = 1 << iota
	segAddress
	segTotal
	segAllocated
	segActive
	segRequested
	segType
	segBlocks
	segRequired = segDevice | segAddress | segTotal | segAllocated | segActive | segType | segBlocks
)

var segKeys = []struct {
	bit  int
	name string
}{
	{segDevice, "device"}, {segAddress, "address"}, {segTotal, "total_size"},
	{segAllocated, "allocated_size"}, {segActive, "active_size"},
	{segType, "segment_type"}, {segBlocks, "blocks"},
}

func (c *converter) segment(seg *Segment, a at, v value) error {
	d, err := c.claim(a, v)
	if err != nil {
		return err
	}
	have := 0
	var blocks value
	for i := 0; i < len(d.kv); i += 2 {
		k := c.keyStr(d.kv[i])
		val := d.kv[i+1]
		switch k {
		case "device":
			have |= segDevice
			seg.Device, err = c.device(a, k, val)
		case "address":
			have |= segAddress
			seg.Address, err = c.asUint(a, k, val)
		case "total_size":
			have |= segTotal
			seg.TotalSize, err = c.size(a, k, val)
		case "allocated_size":
			have |= segAllocated
			seg.AllocatedSize, err = c.size(a, k, val)
		case "active_size":
			have |= segActive
			seg.ActiveSize, err = c.size(a, k, val)
		case "requested_size":
			have |= segRequested
			seg.RequestedSize, err = c.size(a, k, val)
		case "stream":
			seg.Stream, err = c.asUint(a, k, val)
		case "segment_type":
			have |= segType
			seg.SegmentType, err = c.asStr(a, k, val)
			if err == nil && seg.SegmentType != SegmentLarge && seg.SegmentType != SegmentSmall {
				err = fmt.Errorf("snapshot: %s.segment_type: %q is neither %q nor %q", a, seg.SegmentType, SegmentLarge, SegmentSmall)
			}
		case "is_expandable":
			seg.Expandable, err = c.asBool(a, k, val)
		case "segment_pool_id":
			seg.PoolID, err = c.poolID(a, k, val)
		case "frames":
			seg.Frames, err = c.frameList(a, k, val)
		case "blocks":
			have |= segBlocks
			blocks = val
		}
		if err != nil {
			return err
		}
	}
	if have&segRequired != segRequired {
		for _, k := range segKeys {
			if have&k.bit == 0 {
				return missing(a, k.name)
			}
		}
	}
	items, err := c.asList(a, "blocks", blocks)
	if err != nil {
		return err
	}
	seg.Blocks = make([]Block, len(items))
	addr := seg.Address
	var requested int64
	for i, it := range items {
		b := &seg.Blocks[i]
		if err := c.block(b, a.with(".blocks[%d]", i), addr, it); err != nil {
			return err
		}
		addr = b.Address + uint64(b.Size)
		if b.State != StateInactive {
			requested += b.RequestedSize
		}
	}
	if have&segRequested == 0 {
		seg.RequestedSize = requested
	}
	return nil
}

// poolID reads a pool id: a tuple of two ints, (0, 0) for the default pool.
func (c *converter) poolID(a at, key string, v value) ([2]uint64, error) {
	var id [2]uint64
	if v.k != kTuple && v.k != kList {
		return id, c.typeErr(a, key, "a tuple of 2 ints", v)
	}
	t := c.items(v)
	if len(t) != 2 {
		return id, fmt.Errorf("snapshot: %s.%s: want a tuple of 2 ints, got %d items", a, key, len(t))
	}
	for i := range t {
		u, err := c.asUint(a, key, t[i])
		if err != nil {
			return id, err
		}
		id[i] = u
	}
	return id, nil
}

// block converts one block. next is the address following the previous block,
// used when the snapshot predates blocks' "address" key.
func (c *converter) block(b *Block, a at, next uint64, v value) error {
	d, err := c.claim(a, v)
	if err != nil {
		return err
	}
	var haveSize, haveState, haveAddr, haveReq, haveFrames bool
	var history value
	for i := 0; i < len(d.kv); i += 2 {
		k := c.keyStr(d.kv[i])
		val := d.kv[i+1]
		switch k {
		case "address":
			haveAddr = true
			b.Address, err = c.asUint(a, k, val)
		case "size":
			haveSize = true
			b.Size, err = c.size(a, k, val)
		case "requested_size":
			haveReq = true
			b.RequestedSize, err = c.size(a, k, val)
		case "state":
			haveState = true
			b.State, err = c.asStr(a, k, val)
			if err == nil && b.State != StateActiveAllocated && b.State != StateActivePendingFree && b.State != StateInactive {
				err = fmt.Errorf("snapshot: %s.state: unknown block state %q", a, b.State)
			}
		case "frames":
			haveFrames = true
			b.Frames, err = c.frameList(a, k, val)
		case "history":
			history = val
		}
		if err != nil {
			return err
		}
	}
	switch {
	case !haveSize:
		return missing(a, "size")
	case !haveState:
		return missing(a, "state")
	}
	if !haveAddr {
		b.Address = next
	}
	if !haveReq || !haveFrames {
		// PyTorch 2.0 kept the request and stack in "history": [{addr, real_size, frames}].
		if history.k == kList && len(c.items(history)) > 0 {
			ha := a.with(".history[%d]", 0)
			hd, err := c.asDict(ha, c.items(history)[0])
			if err != nil {
				return err
			}
			if rs, ok := c.get(hd, "real_size"); ok && !haveReq {
				if b.RequestedSize, err = c.asInt(ha, "real_size", rs); err != nil {
					return err
				}
				haveReq = true
			}
			if fr, ok := c.get(hd, "frames"); ok && !haveFrames {
				if b.Frames, err = c.frameList(ha, "frames", fr); err != nil {
					return err
				}
			}
		}
		if !haveReq {
			b.RequestedSize = b.Size
		}
	}
	return nil
}

// items is tree.items, but a list let go after it was converted as frames
// (seal), read here as anything else, makes the streaming decode give way.
func (c *converter) items(v value) []value {
	if v.k == kList && c.lists.chunks[v.n/tableChunk] == nil {
		c.fallback = true
		return nil
	}
	return c.tree.items(v)
}

func (c *converter) frameList(a at, key string, v value) ([]Frame, error) {
	if v.k != kList {
		return nil, c.typeErr(a, key, "list", v)
	}
	// A list met again (shared by memo references) is its stack, looked up.
	if id := c.listStack.get(v.n); id != 0 {
		return c.stackList[id-1], nil
	}
	l := c.lists.at(v.n)
	// Lists with the same items are mostly one slice (the decoder interns them):
	// met again, that slice is its stack, looked up without reading its frames.
	var ik itemsKey
	if len(l.items) > 0 {
		ik = itemsKey{&l.items[0], len(l.items)}
		if id, ok := c.byItems[ik]; ok {
			c.listStack.set(v.n, id+1)
			return c.stackList[id], nil
		}
	}
	// Lists with the same frames (one call stack recorded many times) share one
	// []Frame. The key of a list is the sequence of its frames' indices in
	// c.triples, where a frame is its name's and filename's string indices and its
	// line: the memo makes equal strings one string, so equal frames are one triple.
	c.key = c.key[:0]
	for i, it := range l.items {
		j, err := c.frameOf(a, key, i, it)
		if err != nil {
			return nil, err
		}
		c.key = binary.LittleEndian.AppendUint32(c.key, j)
	}
	id, ok := c.stacks[string(c.key)]
	if !ok {
		var fs []Frame // nil for no frames
		if len(l.items) > 0 {
			fs = make([]Frame, len(l.items))
		}
		for i := range fs {
			tr := c.triples[binary.LittleEndian.Uint32(c.key[4*i:])]
			fs[i] = Frame{Name: c.strs[tr.name], Filename: c.strs[tr.file], Line: int(tr.line)}
		}
		if c.stacks == nil {
			c.stacks = map[string]uint32{}
		}
		id = uint32(len(c.stackList))
		c.stackList = append(c.stackList, fs)
		c.stacks[string(c.key)] = id
	}
	c.listStack.set(v.n, id+1)
	if ik.first != nil {
		if c.byItems == nil {
			c.byItems = map[itemsKey]uint32{}
		}
		c.byItems[ik] = id
	}
	return c.stackList[id], nil
}

// itemsKey names a slice of list items by its first item's address and its
// length: two lists with one key have the same items (a converted list's items
// no longer change: its entry is sealed, or the decode is over).
type itemsKey struct {
	first *value
	n     int
}

// chunked32 is a sparse array of uint32 by index, in chunks of tableChunk
// allocated as they are first written: growing it never copies.
type chunked32 struct{ chunks [][]uint32 }

func (a *chunked32) get(i uint32) uint32 {
	if ci := int(i / tableChunk); ci < len(a.chunks) && a.chunks[ci] != nil {
		return a.chunks[ci][i%tableChunk]
	}
	return 0
}

func (a *chunked32) set(i, x uint32) {
	ci := int(i / tableChunk)
	if ci >= len(a.chunks) {
		a.chunks = slices.Grow(a.chunks, ci+1-len(a.chunks))[:ci+1]
	}
	if a.chunks[ci] == nil {
		a.chunks[ci] = make([]uint32, tableChunk)
	}
	a.chunks[ci][i%tableChunk] = x
}

// frameOf checks the frame dict v (item i of the frames list under key of a) and
// returns the index of its triple in c.triples. Frame dicts are shared by the
// lists in PyTorch's pickles, so each dict is looked at once.
func (c *converter) frameOf(a at, key string, i int, v value) (uint32, error) {
	if v.k != kDict {
		return 0, fmt.Errorf("snapshot: %s.%s[%d]: want dict, got %s", a, key, i, c.typeName(v))
	}
	if c.tripleIdx == nil {
		c.tripleIdx = map[frameTriple]uint32{}
	}
	if j := c.tripleOf.get(v.n); j > 0 {
		return j - 1, nil
	}
	d := c.dict(v)
	var tr frameTriple
	have := 0
	for j := 0; j < len(d.kv); j += 2 {
		code := c.code(d.kv[j])
		k := fieldNames[code]
		val := d.kv[j+1]
		switch code {
		case fFilename:
			have |= 1
		case fLine:
			have |= 2
			line, err := c.frameLine(val)
			if err != nil {
				return 0, fmt.Errorf("snapshot: %s.%s[%d].line: %w", a, key, i, err)
			}
			tr.line = line
			continue
		case fName:
			have |= 4
		default:
			continue
		}
		if val.k != kStr {
			return 0, fmt.Errorf("snapshot: %s.%s[%d].%s: want str, got %s", a, key, i, k, c.typeName(val))
		}
		switch code {
		case fFilename:
			tr.file = val.n
		case fName:
			tr.name = val.n
		}
	}
	for _, k := range []struct {
		bit  int
		name string
	}{{4, "name"}, {1, "filename"}, {2, "line"}} {
		if have&k.bit == 0 {
			return 0, fmt.Errorf("snapshot: %s.%s[%d]: missing key %q", a, key, i, k.name)
		}
	}
	j, ok := c.tripleIdx[tr]
	if !ok {
		j = uint32(len(c.triples))
		c.triples = append(c.triples, tr)
		c.tripleIdx[tr] = j
	}
	c.tripleOf.set(v.n, j+1)
	return j, nil
}

// frameLine reads a frame's line: a Python int that fits in an int32, or 2^64 − 1,
// the "unknown line" torch.compile's generated frames carry, read as [UnknownLine].
func (c *converter) frameLine(v value) (int32, error) {
	switch v.k {
	case kInt:
		n := int64(c.bits(v))
		if n < math.MinInt32 || n > math.MaxInt32 {
			return 0, fmt.Errorf("%d is out of range", n)
		}
		return int32(n), nil
	case kUint:
		if c.bits(v) == math.MaxUint64 {
			return UnknownLine, nil
		}
		return 0, fmt.Errorf("%d is out of range (want a line number, or 2^64 − 1 for an unknown line)", c.bits(v))
	case kBig:
		return 0, fmt.Errorf("%s is out of range (want a line number, or 2^64 − 1 for an unknown line)", shortInt(c.bigs[v.n]))
	}
	return 0, fmt.Errorf("want int, got %s", c.typeName(v))
}

func (c *converter) traces(s *Snapshot, v value) error {
	devs, err := c.asList(at{format: "snapshot"}, "device_traces", v)
	if err != nil {
		return err
	}
	s.Traces = make([][]TraceEntry, len(devs))
	for dev, dv := range devs {
		if dv.k != kList && dv.k != kTuple {
			return fmt.Errorf("snapshot: device_traces[%d]: want list, got %s", dev, c.typeName(dv))
		}
		if dev > maxDevice && len(c.items(dv)) > 0 {
			return fmt.Errorf("snapshot: device_traces[%d]: %d is not a device index (PyTorch's are 0–%d)", dev, dev, maxDevice)
		}
		items := c.items(dv)
		tr, ok := c.sealedRun(items)
		if !ok {
			tr = make([]TraceEntry, len(items))
			for i, it := range items {
				a := at{format: "device_traces[%d][%d]", args: [3]int{dev, i}, n: 2}
				if err := c.entry(&tr[i], a, it); err != nil {
					return err
				}
			}
		}
		var last int64 // the last time stamp (0: none yet)
		for i := range tr {
			// Entries are recorded in order under the allocator's lock.
			if t := tr[i].TimeUS; t != 0 {
				if t < last {
					a := at{format: "device_traces[%d][%d]", args: [3]int{dev, i}, n: 2}
					return fmt.Errorf("snapshot: %s.time_us: %d is before the previous entry's %d (time runs backwards)", a, t, last)
				}
				last = t
			}
		}
		s.Traces[dev] = tr
	}
	return nil
}

// sealedRun returns the entries of items when they are sealed dicts whose entries
// follow each other in the store, taken once: the trace is then that part of the
// store, not a copy.
func (c *converter) sealedRun(items []value) ([]TraceEntry, bool) {
	if len(items) == 0 || items[0].k != kDict {
		return nil, false
	}
	first := c.sealed(items[0].n)
	if first == 0 {
		return nil, false
	}
	for i, it := range items {
		if it.k != kDict || c.sealed(it.n) != first+uint32(i) || bitAt(c.used, it.n) {
			return nil, false
		}
	}
	for _, it := range items {
		setBit(&c.used, it.n)
	}
	return c.store[first-1 : int(first-1)+len(items) : int(first-1)+len(items)], true
}

func (c *converter) entry(e *TraceEntry, a at, v value) error {
	if v.k == kDict {
		if k := c.sealed(v.n); k != 0 {
			// converted while decoding: taken once, as claim would
			if bitAt(c.used, v.n) {
				return errFallback
			}
			setBit(&c.used, v.n)
			*e = c.store[k-1]
			return nil
		}
	}
	d, err := c.claim(a, v)
	if err != nil {
		return err
	}
	if err := c.entryKV(e, a, d.kv); err != nil {
		return err
	}
	// The entry's dict is not read again (claim refuses it a second time): its
	// items are let go, so that the decoded tree shrinks as the trace converts.
	d.kv = nil
	return nil
}

// entryKV converts the items of a trace entry's dict (key, value, …).
func (c *converter) entryKV(e *TraceEntry, a at, kv []value) error {
	var err error
	var ok, haveAction, haveAddr, haveSize, haveFree bool
	var m metaKey
	for i := 0; i < len(kv); i += 2 {
		code := c.code(kv[i])
		k := fieldNames[code]
		val := kv[i+1]
		switch code {
		case fAction:
			haveAction = true
			var name string
			if name, err = c.asStr(a, k, val); err == nil {
				var ok bool
				if e.Action, ok = ParseAction(name); !ok {
					err = fmt.Errorf("snapshot: %s.action: unknown action %.60q", a, name)
				}
			}
		case fAddr:
			haveAddr = true
			if e.Addr, ok = c.uintOK(val); !ok {
				e.Addr, err = c.asUint(a, k, val)
			}
		case fSize:
			haveSize = true
			if e.Size, ok = c.sizeOK(val); !ok {
				e.Size, err = c.size(a, k, val)
			}
		case fStream:
			if e.Stream, ok = c.uintOK(val); !ok {
				e.Stream, err = c.asUint(a, k, val)
			}
		case fTimeUS:
			if e.TimeUS, ok = c.intOK(val); !ok {
				e.TimeUS, err = c.asInt(a, k, val)
			}
		case fDeviceFree:
			haveFree = true
			m.deviceFree, err = c.size(a, k, val)
		case fFrames:
			e.Frames, err = c.frameList(a, k, val)
		case fCompileContext:
			m.compileContext, err = c.asStr(a, k, val)
		case fUserMetadata:
			m.userMetadata, err = c.asStr(a, k, val)
		case fPoolID:
			m.hasPool = true
			m.pool, err = c.poolID(a, k, val)
		}
		if err != nil {
			return err
		}
	}
	switch {
	case !haveAction:
		return missing(a, "action")
	case !haveSize:
		return missing(a, "size")
	case e.Action == ActionOOM && !haveFree:
		return missing(a, "device_free")
	case e.Action != ActionOOM && !haveAddr:
		return missing(a, "addr")
	}
	// An oom entry's address is its device_free; other entries have no device_free.
	if e.Action == ActionOOM {
		e.Addr = 0
	} else {
		m.deviceFree = 0
	}
	// Fields that are absent or empty need no EntryMeta: its accessors give "" and 0.
	if m != (metaKey{}) {
		e.Meta = c.meta(m)
	}
	return nil
}

// fieldPositions sets pos to where each field's value is in kv, whose keys are
// distinct strings (so that each field code comes at most once), at most
// maxSealKeys of them.
func (c *converter) fieldPositions(pos *fieldPos, kv []value) {
	for i := range pos {
		pos[i] = -1
	}
	for i := 0; i < len(kv); i += 2 {
		if code := c.code(kv[i]); code != fUnknown {
			pos[code] = int8(i + 1)
		}
	}
}

// entryAt is entryKV for seal, given where each field's value is in kv: it
// reports only whether the items convert, and converts them, field by field in
// one order rather than key by key (a trace's entries all have the same keys).
// It gives the entry entryKV gives, and fails where entryKV fails.
func (c *converter) entryAt(e *TraceEntry, kv []value, pos *fieldPos) bool {
	var ok bool
	var m metaKey
	j := pos[fAction]
	if j < 0 || kv[j].k != kStr {
		return false
	}
	if e.Action, ok = ParseAction(c.strs[kv[j].n]); !ok {
		return false
	}
	if j = pos[fSize]; j < 0 {
		return false
	}
	if e.Size, ok = c.sizeOK(kv[j]); !ok {
		return false
	}
	if j = pos[fAddr]; j >= 0 {
		if e.Addr, ok = c.uintOK(kv[j]); !ok {
			return false
		}
	} else if e.Action != ActionOOM {
		return false // missing addr
	}
	if j = pos[fDeviceFree]; j >= 0 {
		if m.deviceFree, ok = c.sizeOK(kv[j]); !ok {
			return false
		}
	} else if e.Action == ActionOOM {
		return false // missing device_free
	}
	if j = pos[fStream]; j >= 0 {
		if e.Stream, ok = c.uintOK(kv[j]); !ok {
			return false
		}
	}
	if j = pos[fTimeUS]; j >= 0 {
		if e.TimeUS, ok = c.intOK(kv[j]); !ok {
			return false
		}
	}
	if j = pos[fCompileContext]; j >= 0 {
		if kv[j].k != kStr {
			return false
		}
		m.compileContext = c.strs[kv[j].n]
	}
	if j = pos[fUserMetadata]; j >= 0 {
		if kv[j].k != kStr {
			return false
		}
		m.userMetadata = c.strs[kv[j].n]
	}
	var err error
	if j = pos[fPoolID]; j >= 0 {
		m.hasPool = true
		if m.pool, err = c.poolID(at{format: "entry"}, "pool_id", kv[j]); err != nil {
			return false
		}
	}
	if j = pos[fFrames]; j >= 0 {
		if e.Frames, err = c.frameList(at{format: "entry"}, "frames", kv[j]); err != nil {
			return false
		}
	}
	// as entryKV does
	if e.Action == ActionOOM {
		e.Addr = 0
	} else {
		m.deviceFree = 0
	}
	if m != (metaKey{}) {
		e.Meta = c.meta(m)
	}
	return true
}

// metaKey is an EntryMeta as a map key (its pool by value).
type metaKey struct {
	deviceFree                   int64
	compileContext, userMetadata string
	hasPool                      bool
	pool                         [2]uint64
}

// meta returns the one EntryMeta of the snapshot with these fields, made the
// first time they are met: entries share it (a 2.11 history's all say "N/A").
func (c *converter) meta(k metaKey) *EntryMeta {
	if c.lastMeta != nil && k == c.lastMetaKey { // most entries repeat the one before's
		return c.lastMeta
	}
	m, ok := c.metas[k]
	if !ok {
		m = c.newMeta(k)
	}
	c.lastMeta, c.lastMetaKey = m, k
	return m
}

// newMeta makes and keeps the EntryMeta with these fields.
func (c *converter) newMeta(k metaKey) *EntryMeta {
	m := &EntryMeta{DeviceFree: k.deviceFree, CompileContext: k.compileContext, UserMetadata: k.userMetadata}
	if k.hasPool {
		pool := k.pool
		m.PoolID = &pool
	}
	if c.metas == nil {
		c.metas = map[metaKey]*EntryMeta{}
	}
	c.metas[k] = m
	return m
}

func (c *converter) annotations(s *Snapshot, v value) error {
	items, err := c.asList(at{format: "snapshot"}, "external_annotations", v)
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return nil
	}
	s.Annotations = make([]Annotation, len(items))
	for i, it := range items {
		a := at{format: "external_annotations[%d]", args: [3]int{i}, n: 1}
		d, err := c.claim(a, it)
		if err != nil {
			return err
		}
		an := &s.Annotations[i]
		for j := 0; j < len(d.kv); j += 2 {
			k := c.keyStr(d.kv[j])
			val := d.kv[j+1]
			switch k {
			case "stage":
				an.Stage, err = c.asStr(a, k, val)
			case "name":
				an.Name, err = c.asStr(a, k, val)
			case "device":
				an.Device, err = c.device(a, k, val)
			case "time_us":
				an.TimeUS, err = c.asInt(a, k, val)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}
