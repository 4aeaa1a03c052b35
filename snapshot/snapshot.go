package snapshot

import (
	"fmt"
	"io"
	"math"
	"os"
)

// Trace entry actions, as PyTorch names them in device_traces.
const (
	ActionAlloc         = "alloc"          // a block was handed out (Size = request)
	ActionFreeRequested = "free_requested" // the program freed a block (Size = request)
	ActionFreeCompleted = "free_completed" // the block went back to the cache
	ActionSegmentAlloc  = "segment_alloc"  // cudaMalloc of a segment
	ActionSegmentFree   = "segment_free"   // cudaFree of a segment
	ActionSegmentMap    = "segment_map"    // pages mapped into an expandable segment
	ActionSegmentUnmap  = "segment_unmap"  // pages unmapped from an expandable segment
	ActionOOM           = "oom"            // an allocation failed (Size = rounded request, DeviceFree set)
	ActionSnapshot      = "snapshot"       // torch.cuda.memory_snapshot() was taken
)

// Actions lists every action PyTorch 2.1–2.11 writes, in the order above.
var Actions = []string{
	ActionAlloc, ActionFreeRequested, ActionFreeCompleted, ActionSegmentAlloc,
	ActionSegmentFree, ActionSegmentMap, ActionSegmentUnmap, ActionOOM, ActionSnapshot,
}

// Block states, as PyTorch names them.
const (
	StateActiveAllocated   = "active_allocated"    // handed out to the program
	StateActivePendingFree = "active_pending_free" // freed, waiting for other streams' work (record_stream)
	StateInactive          = "inactive"            // free, cached
)

// Segment types.
const (
	SegmentLarge = "large"
	SegmentSmall = "small"
)

// Snapshot is the dict torch.cuda.memory._snapshot() returns and
// torch.cuda.memory._dump_snapshot() pickles: the segments at the moment of the
// snapshot and, when memory history was recorded, the events that led there.
type Snapshot struct {
	// Segments are the device allocations held at the snapshot ("segments"), for
	// all devices (see Segment.Device), in PyTorch's order.
	Segments []Segment
	// Traces holds each device's recorded events ("device_traces"), oldest first,
	// indexed by device. A device without history has an empty trace.
	Traces [][]TraceEntry
	// Settings are the allocator's settings ("allocator_settings", PyTorch 2.5 and
	// later); the zero value when HasSettings is false.
	Settings Settings
	// HasSettings reports whether the snapshot carries allocator_settings.
	HasSettings bool
	// Annotations are the "external_annotations" (record_function ranges such as
	// Optimizer.step), when present.
	Annotations []Annotation
}

// Segment is one device allocation (for expandable segments, one contiguous mapped
// range) with its blocks in address order.
type Segment struct {
	Device        int
	Address       uint64
	TotalSize     int64
	AllocatedSize int64
	ActiveSize    int64
	// RequestedSize is the sum of the requests of the active blocks. Snapshots
	// older than PyTorch 2.1 lack it; it is then the sum over the blocks.
	RequestedSize int64
	// Stream is the CUDA stream the segment was allocated for (0: the default stream).
	Stream      uint64
	SegmentType string // SegmentLarge or SegmentSmall
	Expandable  bool   // "is_expandable"
	// PoolID is "segment_pool_id": (0, 0) for the default pool, else a CUDA graph
	// or torch.cuda.MemPool's private pool.
	PoolID [2]uint64
	Blocks []Block
	// Frames is where the segment was allocated, when context was recorded.
	Frames []Frame
}

// Block is a piece of a segment: allocated, pending free, or cached.
type Block struct {
	Address uint64
	Size    int64
	// RequestedSize is the request of the block's last allocation (stale for
	// inactive blocks, as in PyTorch).
	RequestedSize int64
	State         string // StateActiveAllocated, StateActivePendingFree or StateInactive
	Frames        []Frame
}

// TraceEntry is one recorded allocator event.
type TraceEntry struct {
	Action string // one of Actions
	// Addr is the block (alloc, free_*) or segment/range (segment_*) address; 0 for oom.
	Addr uint64
	// Size is the request (alloc, free_*), the segment or range size (segment_*),
	// or the rounded request that failed (oom).
	Size   int64
	Stream uint64
	// TimeUS is the event's wall-clock time in microseconds since the epoch (0 when
	// the snapshot predates time stamps).
	TimeUS int64
	// DeviceFree is the device's free bytes reported by the driver (oom entries).
	DeviceFree int64
	// Frames is the stack of the event, when context was recorded.
	Frames []Frame
	// CompileContext and UserMetadata are PyTorch's "compile_context" (torch.compile's
	// frame, "N/A" outside it) and "user_metadata" strings, when present.
	CompileContext string
	UserMetadata   string
}

// Frame is one stack frame: Python frames carry a line; C++ frames have line 0.
type Frame struct {
	Filename string
	Line     int
	Name     string
}

// Annotation is one of PyTorch's external_annotations: the start or end of a
// record_function range on a device.
type Annotation struct {
	Stage  string // "START" or "END"
	Name   string
	Device int
	TimeUS int64
}

// Devices returns the number of devices the snapshot describes: the number of
// device traces, or more when a segment names a higher device.
func (s *Snapshot) Devices() int {
	n := len(s.Traces)
	for _, seg := range s.Segments {
		if seg.Device+1 > n {
			n = seg.Device + 1
		}
	}
	return n
}

// HasHistory reports whether any device recorded events (that is, whether
// torch.cuda.memory._record_memory_history() was on).
func (s *Snapshot) HasHistory() bool {
	for _, t := range s.Traces {
		if len(t) > 0 {
			return true
		}
	}
	return false
}

// HasFrames reports whether any trace entry or block carries stack frames.
func (s *Snapshot) HasFrames() bool {
	for _, t := range s.Traces {
		for i := range t {
			if len(t[i].Frames) > 0 {
				return true
			}
		}
	}
	for i := range s.Segments {
		for j := range s.Segments[i].Blocks {
			if len(s.Segments[i].Blocks[j].Frames) > 0 {
				return true
			}
		}
	}
	return false
}

// DeviceSegments returns the segments of one device, in order.
func (s *Snapshot) DeviceSegments(device int) []Segment {
	var out []Segment
	for _, seg := range s.Segments {
		if seg.Device == device {
			out = append(out, seg)
		}
	}
	return out
}

// Read decodes a snapshot pickle, as written by torch.cuda.memory._dump_snapshot()
// (PyTorch 2.1–2.11, pickle protocols 0–5) or by [Write]. The pickle is decoded
// by a machine that knows only plain values: any opcode that would import, call or
// construct a Python object is refused with an error wrapping [ErrRefused], and
// nothing in the input is executed. Lengths are checked against the input before
// anything is allocated. Unknown keys are ignored; a missing key or a value of the
// wrong type is an error naming the key and the entry, such as
// "snapshot: device_traces[0][1234].size: want int, got str".
func Read(r io.Reader) (*Snapshot, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("snapshot: reading: %w", err)
	}
	return decode(data)
}

// ReadFile reads the snapshot pickle at path (see [Read]).
func ReadFile(path string) (*Snapshot, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	s, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return s, nil
}

// decode unpickles data and converts it to the typed model.
func decode(data []byte) (*Snapshot, error) {
	v, err := unpickle(data)
	if err != nil {
		return nil, err
	}
	c := converter{frames: map[*pyList][]Frame{}, frame: map[*pyDict]Frame{}}
	return c.snapshot(v)
}

// converter turns decoded values into the typed model. Frames lists and frame dicts
// are shared in PyTorch's pickles (memo references), so their conversions are
// cached by identity: a shared list costs once, however often it is referenced.
type converter struct {
	frames map[*pyList][]Frame
	frame  map[*pyDict]Frame
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
func typeErr(a at, key, want string, v any) error {
	return fmt.Errorf("snapshot: %s.%s: want %s, got %s", a, key, want, pyType(v))
}

func missing(a at, key string) error {
	return fmt.Errorf("snapshot: %s: missing key %q", a, key)
}

func asDict(a at, v any) (*pyDict, error) {
	d, ok := v.(*pyDict)
	if !ok {
		return nil, fmt.Errorf("snapshot: %s: want dict, got %s", a, pyType(v))
	}
	return d, nil
}

func asList(a at, key string, v any) ([]any, error) {
	switch l := v.(type) {
	case *pyList:
		return l.items, nil
	case pyTuple:
		return l, nil
	}
	return nil, typeErr(a, key, "list", v)
}

func asInt(a at, key string, v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case uint64:
		return 0, fmt.Errorf("snapshot: %s.%s: %d does not fit in int64", a, key, x)
	}
	if pyType(v) == "int" {
		return 0, fmt.Errorf("snapshot: %s.%s: %v does not fit in int64", a, key, v)
	}
	return 0, typeErr(a, key, "int", v)
}

func asUint(a at, key string, v any) (uint64, error) {
	switch x := v.(type) {
	case int64:
		if x < 0 {
			return 0, fmt.Errorf("snapshot: %s.%s: want a non-negative int, got %d", a, key, x)
		}
		return uint64(x), nil
	case uint64:
		return x, nil
	}
	if pyType(v) == "int" {
		return 0, fmt.Errorf("snapshot: %s.%s: %v does not fit in 64 bits", a, key, v)
	}
	return 0, typeErr(a, key, "int", v)
}

func asStr(a at, key string, v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	return "", typeErr(a, key, "str", v)
}

func asBool(a at, key string, v any) (bool, error) {
	if b, ok := v.(bool); ok {
		return b, nil
	}
	return false, typeErr(a, key, "bool", v)
}

func asFloat(a at, key string, v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case int64: // Python accepts an int where a float is meant
		return float64(x), nil
	}
	return 0, typeErr(a, key, "float", v)
}

func smallInt(a at, key string, v any) (int, error) {
	n, err := asInt(a, key, v)
	if err != nil {
		return 0, err
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, fmt.Errorf("snapshot: %s.%s: %d is out of range", a, key, n)
	}
	return int(n), nil
}

func (c *converter) snapshot(v any) (*Snapshot, error) {
	top, ok := v.(*pyDict)
	if !ok {
		return nil, fmt.Errorf("snapshot: the pickle holds a %s, want the dict torch.cuda.memory._snapshot() returns", pyType(v))
	}
	root := at{format: "snapshot"}
	s := &Snapshot{}
	var haveSegs, haveTraces bool
	for i := 0; i < len(top.kv); i += 2 {
		k, _ := top.kv[i].(string)
		val := top.kv[i+1]
		var err error
		switch k {
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

func (c *converter) segments(s *Snapshot, v any) error {
	items, err := asList(at{format: "snapshot"}, "segments", v)
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

func (c *converter) segment(seg *Segment, a at, v any) error {
	d, err := asDict(a, v)
	if err != nil {
		return err
	}
	have := 0
	var blocks any
	for i := 0; i < len(d.kv); i += 2 {
		k, _ := d.kv[i].(string)
		val := d.kv[i+1]
		switch k {
		case "device":
			have |= segDevice
			seg.Device, err = smallInt(a, k, val)
			if err == nil && seg.Device < 0 {
				err = fmt.Errorf("snapshot: %s.device: %d is negative", a, seg.Device)
			}
		case "address":
			have |= segAddress
			seg.Address, err = asUint(a, k, val)
		case "total_size":
			have |= segTotal
			seg.TotalSize, err = asInt(a, k, val)
		case "allocated_size":
			have |= segAllocated
			seg.AllocatedSize, err = asInt(a, k, val)
		case "active_size":
			have |= segActive
			seg.ActiveSize, err = asInt(a, k, val)
		case "requested_size":
			have |= segRequested
			seg.RequestedSize, err = asInt(a, k, val)
		case "stream":
			seg.Stream, err = asUint(a, k, val)
		case "segment_type":
			have |= segType
			seg.SegmentType, err = asStr(a, k, val)
			if err == nil && seg.SegmentType != SegmentLarge && seg.SegmentType != SegmentSmall {
				err = fmt.Errorf("snapshot: %s.segment_type: %q is neither %q nor %q", a, seg.SegmentType, SegmentLarge, SegmentSmall)
			}
		case "is_expandable":
			seg.Expandable, err = asBool(a, k, val)
		case "segment_pool_id":
			seg.PoolID, err = poolID(a, val)
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
	items, err := asList(a, "blocks", blocks)
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

func poolID(a at, v any) ([2]uint64, error) {
	var id [2]uint64
	t, ok := v.(pyTuple)
	if !ok {
		if l, isList := v.(*pyList); isList {
			t = l.items
			ok = true
		}
	}
	if !ok || len(t) != 2 {
		return id, typeErr(a, "segment_pool_id", "a tuple of 2 ints", v)
	}
	for i := range t {
		u, err := asUint(a, "segment_pool_id", t[i])
		if err != nil {
			return id, err
		}
		id[i] = u
	}
	return id, nil
}

// block converts one block. next is the address following the previous block,
// used when the snapshot predates blocks' "address" key.
func (c *converter) block(b *Block, a at, next uint64, v any) error {
	d, err := asDict(a, v)
	if err != nil {
		return err
	}
	var haveSize, haveState, haveAddr, haveReq, haveFrames bool
	var history any
	for i := 0; i < len(d.kv); i += 2 {
		k, _ := d.kv[i].(string)
		val := d.kv[i+1]
		switch k {
		case "address":
			haveAddr = true
			b.Address, err = asUint(a, k, val)
		case "size":
			haveSize = true
			b.Size, err = asInt(a, k, val)
			if err == nil && b.Size < 0 {
				err = fmt.Errorf("snapshot: %s.size: %d is negative", a, b.Size)
			}
		case "requested_size":
			haveReq = true
			b.RequestedSize, err = asInt(a, k, val)
		case "state":
			haveState = true
			b.State, err = asStr(a, k, val)
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
		if h, ok := history.(*pyList); ok && len(h.items) > 0 {
			ha := a.with(".history[%d]", 0)
			hd, err := asDict(ha, h.items[0])
			if err != nil {
				return err
			}
			if rs, ok := hd.get("real_size"); ok && !haveReq {
				if b.RequestedSize, err = asInt(ha, "real_size", rs); err != nil {
					return err
				}
				haveReq = true
			}
			if fr, ok := hd.get("frames"); ok && !haveFrames {
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

func (c *converter) frameList(a at, key string, v any) ([]Frame, error) {
	l, ok := v.(*pyList)
	if !ok {
		return nil, typeErr(a, key, "list", v)
	}
	if len(l.items) == 0 {
		return nil, nil
	}
	if fs, ok := c.frames[l]; ok {
		return fs, nil
	}
	fs := make([]Frame, len(l.items))
	fa := a.with("."+key+"[%d]", 0)
	for i, it := range l.items {
		fa.args[fa.n-1] = i
		f, err := c.frameOf(fa, it)
		if err != nil {
			return nil, err
		}
		fs[i] = f
	}
	c.frames[l] = fs
	return fs, nil
}

func (c *converter) frameOf(a at, v any) (Frame, error) {
	d, err := asDict(a, v)
	if err != nil {
		return Frame{}, err
	}
	if f, ok := c.frame[d]; ok {
		return f, nil
	}
	var f Frame
	have := 0
	for i := 0; i < len(d.kv); i += 2 {
		k, _ := d.kv[i].(string)
		val := d.kv[i+1]
		switch k {
		case "filename":
			have |= 1
			f.Filename, err = asStr(a, k, val)
		case "line":
			have |= 2
			f.Line, err = smallInt(a, k, val)
		case "name":
			have |= 4
			f.Name, err = asStr(a, k, val)
		}
		if err != nil {
			return f, err
		}
	}
	switch {
	case have&4 == 0:
		return f, missing(a, "name")
	case have&1 == 0:
		return f, missing(a, "filename")
	case have&2 == 0:
		return f, missing(a, "line")
	}
	c.frame[d] = f
	return f, nil
}

func (c *converter) traces(s *Snapshot, v any) error {
	devs, err := asList(at{format: "snapshot"}, "device_traces", v)
	if err != nil {
		return err
	}
	s.Traces = make([][]TraceEntry, len(devs))
	for dev, dv := range devs {
		items, err := asList(at{format: "device_traces"}, fmt.Sprint(dev), dv)
		if err != nil {
			return fmt.Errorf("snapshot: device_traces[%d]: want list, got %s", dev, pyType(dv))
		}
		tr := make([]TraceEntry, len(items))
		for i, it := range items {
			if err := c.entry(&tr[i], at{format: "device_traces[%d][%d]", args: [3]int{dev, i}, n: 2}, it); err != nil {
				return err
			}
		}
		s.Traces[dev] = tr
	}
	return nil
}

var knownAction = func() map[string]string {
	m := map[string]string{}
	for _, a := range Actions {
		m[a] = a
	}
	return m
}()

func (c *converter) entry(e *TraceEntry, a at, v any) error {
	d, err := asDict(a, v)
	if err != nil {
		return err
	}
	var haveAction, haveAddr, haveSize, haveFree bool
	for i := 0; i < len(d.kv); i += 2 {
		k, _ := d.kv[i].(string)
		val := d.kv[i+1]
		switch k {
		case "action":
			haveAction = true
			var s string
			if s, err = asStr(a, k, val); err == nil {
				var ok bool
				if e.Action, ok = knownAction[s]; !ok {
					err = fmt.Errorf("snapshot: %s.action: unknown action %q", a, s)
				}
			}
		case "addr":
			haveAddr = true
			e.Addr, err = asUint(a, k, val)
		case "size":
			haveSize = true
			e.Size, err = asInt(a, k, val)
		case "stream":
			e.Stream, err = asUint(a, k, val)
		case "time_us":
			e.TimeUS, err = asInt(a, k, val)
		case "device_free":
			haveFree = true
			e.DeviceFree, err = asInt(a, k, val)
		case "frames":
			e.Frames, err = c.frameList(a, k, val)
		case "compile_context":
			e.CompileContext, err = asStr(a, k, val)
		case "user_metadata":
			e.UserMetadata, err = asStr(a, k, val)
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
	return nil
}

func (c *converter) annotations(s *Snapshot, v any) error {
	items, err := asList(at{format: "snapshot"}, "external_annotations", v)
	if err != nil {
		return err
	}
	s.Annotations = make([]Annotation, len(items))
	for i, it := range items {
		a := at{format: "external_annotations[%d]", args: [3]int{i}, n: 1}
		d, err := asDict(a, it)
		if err != nil {
			return err
		}
		an := &s.Annotations[i]
		for j := 0; j < len(d.kv); j += 2 {
			k, _ := d.kv[j].(string)
			val := d.kv[j+1]
			switch k {
			case "stage":
				an.Stage, err = asStr(a, k, val)
			case "name":
				an.Name, err = asStr(a, k, val)
			case "device":
				an.Device, err = smallInt(a, k, val)
			case "time_us":
				an.TimeUS, err = asInt(a, k, val)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}
