package snapshot

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"memlab.dev/memlab/internal/gunzip"
)

// Action is what a trace entry records, one of PyTorch's actions in device_traces;
// String gives PyTorch's name. It is a byte, so that a big history's entries stay
// small (issue 28).
type Action uint8

// Trace entry actions, as PyTorch names them in device_traces.
const (
	ActionAlloc         Action = iota + 1 // "alloc": a block was handed out (Size = request)
	ActionFreeRequested                   // "free_requested": the program freed a block (Size = request)
	ActionFreeCompleted                   // "free_completed": the block went back to the cache
	ActionSegmentAlloc                    // "segment_alloc": cudaMalloc of a segment
	ActionSegmentFree                     // "segment_free": cudaFree of a segment
	ActionSegmentMap                      // "segment_map": pages mapped into an expandable segment
	ActionSegmentUnmap                    // "segment_unmap": pages unmapped from an expandable segment
	ActionOOM                             // "oom": an allocation failed (Size = rounded request, DeviceFree set)
	ActionSnapshot                        // "snapshot": torch.cuda.memory_snapshot() was taken
)

// actionNames are PyTorch's names of the actions, by Action.
var actionNames = [...]string{
	ActionAlloc: "alloc", ActionFreeRequested: "free_requested", ActionFreeCompleted: "free_completed",
	ActionSegmentAlloc: "segment_alloc", ActionSegmentFree: "segment_free", ActionSegmentMap: "segment_map",
	ActionSegmentUnmap: "segment_unmap", ActionOOM: "oom", ActionSnapshot: "snapshot",
}

// String returns PyTorch's name of the action ("alloc", "free_requested", …), or
// "Action(N)" for a value that names none.
func (a Action) String() string {
	if a.valid() {
		return actionNames[a]
	}
	return fmt.Sprintf("Action(%d)", uint8(a))
}

// valid reports whether a is one of the Action constants.
func (a Action) valid() bool { return int(a) < len(actionNames) && actionNames[a] != "" }

// ParseAction returns the action PyTorch names name, and false for a name that is
// none of them.
func ParseAction(name string) (Action, bool) {
	switch name {
	case "alloc":
		return ActionAlloc, true
	case "free_requested":
		return ActionFreeRequested, true
	case "free_completed":
		return ActionFreeCompleted, true
	case "segment_alloc":
		return ActionSegmentAlloc, true
	case "segment_free":
		return ActionSegmentFree, true
	case "segment_map":
		return ActionSegmentMap, true
	case "segment_unmap":
		return ActionSegmentUnmap, true
	case "oom":
		return ActionOOM, true
	case "snapshot":
		return ActionSnapshot, true
	}
	return 0, false
}

// MarshalText gives PyTorch's name of the action, so that an entry in JSON reads
// as PyTorch's does.
func (a Action) MarshalText() ([]byte, error) {
	if !a.valid() {
		return nil, fmt.Errorf("snapshot: %s is no trace entry action", a)
	}
	return []byte(a.String()), nil
}

// UnmarshalText reads PyTorch's name of an action.
func (a *Action) UnmarshalText(text []byte) error {
	v, ok := ParseAction(string(text))
	if !ok {
		return fmt.Errorf("snapshot: unknown action %.60q", text)
	}
	*a = v
	return nil
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

// TraceEntry is one recorded allocator event. It is 72 bytes: a real training
// job's history holds a million of them (issue 28), so the fields that few distinct
// values take are in Meta, shared between entries.
type TraceEntry struct {
	// Addr is the block (alloc, free_*) or segment/range (segment_*) address; 0 for oom.
	Addr uint64
	// Size is the request (alloc, free_*), the segment or range size (segment_*),
	// or the rounded request that failed (oom).
	Size   int64
	Stream uint64
	// TimeUS is the event's wall-clock time in microseconds since the epoch (0 when
	// the snapshot predates time stamps).
	TimeUS int64
	// Frames is the stack of the event, when context was recorded. Read gives
	// entries and blocks with the same stack one shared slice: treat it as
	// read-only.
	Frames []Frame
	// Meta holds the entry's device_free, compile_context, user_metadata and
	// pool_id; nil when it has none of them (or they are empty). Read gives entries with the same
	// ones one shared EntryMeta (a 2.11 history's entries all say compile_context
	// "N/A"): treat it as read-only, and set a new one to change an entry's.
	Meta   *EntryMeta
	Action Action // one of the Action constants; Read refuses any other
}

// EntryMeta holds the fields of a trace entry that few distinct values take.
type EntryMeta struct {
	// DeviceFree is the device's free bytes reported by the driver (oom entries).
	DeviceFree int64
	// CompileContext and UserMetadata are PyTorch's "compile_context" (torch.compile's
	// frame, "N/A" outside it) and "user_metadata" strings, when present.
	CompileContext string
	UserMetadata   string
	// PoolID is the entry's "pool_id", the memory pool of the block or segment
	// ((0, 0): the default pool); nil when absent: PyTorch 2.11 does not write it
	// (newer versions do), and a replay must then infer it (whatif does).
	PoolID *[2]uint64
}

// DeviceFree returns the device's free bytes the driver reported (oom entries; 0
// for others).
func (e *TraceEntry) DeviceFree() int64 {
	if e.Meta == nil {
		return 0
	}
	return e.Meta.DeviceFree
}

// CompileContext returns the entry's compile_context ("" when absent).
func (e *TraceEntry) CompileContext() string {
	if e.Meta == nil {
		return ""
	}
	return e.Meta.CompileContext
}

// UserMetadata returns the entry's user_metadata ("" when absent).
func (e *TraceEntry) UserMetadata() string {
	if e.Meta == nil {
		return ""
	}
	return e.Meta.UserMetadata
}

// HasPool reports whether the entry names its pool (pool_id: later than PyTorch 2.11).
func (e *TraceEntry) HasPool() bool { return e.Meta != nil && e.Meta.PoolID != nil }

// Pool returns the entry's pool id, (0, 0) (the default pool) when the entry
// names none.
func (e *TraceEntry) Pool() [2]uint64 {
	if !e.HasPool() {
		return [2]uint64{}
	}
	return *e.Meta.PoolID
}

// UnknownLine is the line of a frame whose line is not known: PyTorch writes
// 2^64 − 1 (torch.compile's generated code), which Read reads as UnknownLine and
// Write writes back as 2^64 − 1.
const UnknownLine = -1

// Frame is one stack frame: Python frames carry a line ([UnknownLine] when PyTorch
// did not know it); C++ frames have line 0.
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
// "snapshot: device_traces[0][1234].size: want int, got str". Read reads all of r
// before decoding; the decoded snapshot holds no reference to the input. Input
// that starts with gzip's magic bytes is decompressed first, at most
// [DefaultMaxSize] bytes (see [ReadFileMax]).
func Read(r io.Reader) (*Snapshot, error) {
	var magic [2]byte
	n, err := io.ReadFull(r, magic[:])
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, fmt.Errorf("snapshot: reading: %w", err)
	}
	if gunzip.Magic(magic[:n]) {
		data, err := gunzipAll(io.MultiReader(bytes.NewReader(magic[:n]), r), DefaultMaxSize, 0)
		if err != nil {
			return nil, fmt.Errorf("snapshot: %w", err)
		}
		return decode(data)
	}
	var buf bytes.Buffer
	if l, ok := r.(interface{ Len() int }); ok {
		buf.Grow(n + l.Len() + bytes.MinRead)
	}
	buf.Write(magic[:n])
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, fmt.Errorf("snapshot: reading: %w", err)
	}
	return decode(buf.Bytes())
}

// ReadFile reads the snapshot at path, a pickle or a gzip-compressed pickle of at
// most [DefaultMaxSize] bytes decompressed (see [Read] and [ReadFileMax]).
func ReadFile(path string) (*Snapshot, error) { return ReadFileMax(path, 0) }

// ReadFileMax reads the snapshot at path (see [Read]). A file that starts with
// gzip's magic bytes (1f 8b), whatever its name (snapshot.pickle.gz), is
// decompressed in memory first, and its pickle may be at most maxSize bytes
// (≤ 0, or more than [DefaultMaxSize]: DefaultMaxSize): a larger one is an error
// wrapping a *gunzip.TooLargeError that names the bound, not an exhausted memory.
// The file must be one gzip member with nothing after it; a truncated or corrupt
// stream, an empty one, a second member or trailing bytes are errors naming the
// file. A plain pickle is read as it always was, whatever maxSize: on Linux a big
// one is mapped and its pages handed back as the decoder passes them; the
// decompressed pickle of a gzip file goes to an unnamed temporary file that is
// decoded the same way (where mapping is not supported, it is held in memory until
// it is decoded). A path
// that is not a regular file (a FIFO, /dev/zero, bash's <(…)) is opened and read
// once, through a bounded reader: its pickle, plain or decompressed, may be at
// most maxSize bytes too.
func ReadFileMax(path string, maxSize int64) (*Snapshot, error) {
	if reg, err := regular(path); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	} else if !reg {
		return readStream(path, maxSize)
	}
	gz, err := isGzipFile(path)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if gz {
		return readGzipFile(path, maxSize)
	}
	if s, ok, err := readFileMapped(path); ok {
		if err != nil {
			if _, isPath := err.(*os.PathError); isPath {
				return nil, fmt.Errorf("snapshot: %w", err)
			}
			return nil, fmt.Errorf("%w (in %s)", err, path)
		}
		return s, nil
	}
	data, err := os.ReadFile(path) // sized from the file: no copying as it grows
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	s, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return s, nil
}

// VersionHint says which PyTorch versions write a snapshot with this one's keys:
// "later than 2.11" when its trace entries carry pool ids, "2.10 or later" when its
// allocator_settings has graph_capture_record_stream_reuse, "2.5 or later" when
// it has allocator_settings, "" when its keys show nothing. Snapshots carry no
// version; this is a lower bound, not the version.
func (s *Snapshot) VersionHint() string {
	for _, t := range s.Traces {
		for i := range t {
			if t[i].HasPool() {
				return "later than 2.11"
			}
		}
	}
	switch {
	case s.HasSettings && s.Settings.HasGraphCaptureRecordStreamReuse:
		return "2.10 or later"
	case s.HasSettings:
		return "2.5 or later"
	}
	return ""
}
