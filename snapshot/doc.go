// Package snapshot reads and writes PyTorch's memory snapshots: the pickle that
// torch.cuda.memory._dump_snapshot() writes after
// torch.cuda.memory._record_memory_history(), which pytorch.org/memory_viz opens.
//
// [Read] and [ReadFile] decode a snapshot from PyTorch 2.1–2.11 into a typed
// [Snapshot]: the segments and blocks held at the moment of the snapshot, each
// device's recorded events ([TraceEntry]: alloc, free_requested, free_completed,
// segment_alloc, segment_free, segment_map, segment_unmap, oom, snapshot) with
// their streams, times and stack frames, and the allocator's settings, which
// [Settings.Config] turns into memlab's allocator.Config for a replay. A pickled
// torch.cuda.memory_snapshot() (the list of segments alone) reads as a snapshot
// without history. Older shapes are accepted too: PyTorch 2.0's block "history",
// and snapshots without time stamps, requested sizes, frames or settings. Every
// field of 2.11's trace entries is read (compile_context and user_metadata
// included), and so is the "pool_id" that later versions add to them; segments
// carry their "segment_pool_id". A frame whose line is 2^64 − 1 (torch.compile's
// generated code: the line is not known) reads as [UnknownLine].
//
// A gzip-compressed snapshot (snapshot.pickle.gz) is read too: gzip is known by
// its magic bytes, not the file's name, and its pickle is decompressed in memory,
// at most [DefaultMaxSize] bytes ([ReadFileMax] takes a smaller bound), so that a
// gzip bomb is an error naming the bound. The file must be one gzip member with
// nothing after it; truncated, corrupt and empty streams are errors naming the
// file. [PickleSize] counts what a gzip file decompresses to.
//
// A pickle can run code when Python unpickles it. This package never does: its
// decoder knows only the opcodes of plain values (dicts, lists, tuples, sets,
// strings, bytes, integers, floats, booleans, None, and the memo and framing
// opcodes of protocols 0–5), and refuses any opcode that would import, call or
// construct an object with an error wrapping [ErrRefused] that names the opcode,
// its offset and, for imports, the object. Lengths are checked against the input
// before anything is allocated, so a corrupt length is an error, not an
// allocation; truncated input, a file that is not a pickle and a dict of the
// wrong shape are errors naming what was wrong and where.
//
// The decoder reads what CPython's pickle.load reads, the same way (the memo,
// MEMOIZE after sparse PUTs, protocol 0's text arguments, strings, sets, dict
// keys that are equal in Python), and refuses what it refuses; a differential
// test compares the two on a random corpus at every run. It is stricter on
// purpose where Python would run code, where values or MARKs are left on the
// stack at STOP, where an opcode straddles a FRAME's end, and where work would be
// unbounded: integers of more than 4096 bytes, dict keys (and set elements) of
// more than 4096 values counted through their nested tuples (tuples shared by memo
// references can double at each level), nesting deeper than 64.
//
// Memory: trace entries are converted as the decoder reads them (a streaming
// decode), into one array sized by a first pass over the opcodes, so that the
// decoded form of a trace (a dict per entry) never sits in memory beside the
// converted one; the streaming decode gives way to the plain one (decode all,
// then convert), which is the reference, wherever it could not be shown to
// agree: a trace entry's dict referenced twice or changed after it was complete,
// or any error. A decoded value is 8 bytes without pointers, lists with the same
// items (one call stack's frames, recorded a million times) share them, and
// [ReadFile] maps a big file (Linux) and hands its pages back to the kernel as
// the decoder passes them, so that the file is not held in memory beside what is
// decoded. Reading allocates about 2.5 bytes per byte of pickle in all, most of
// it the [TraceEntry] array.
//
// The converter refuses values no PyTorch snapshot holds, naming the field and
// the entry: negative sizes, device indices beyond PyTorch's (0–127), a trace
// whose time stamps run backwards.
//
// [Write] goes the other way, for memlab's own allocator: it writes an
// allocator.Snapshot as PyTorch does, so memory_viz shows memlab's history.
// [Snapshot.Write] writes any Snapshot; Read reads back what it wrote.
//
// A trace may not cover the whole run: history switched on after the program had
// allocated, or a ring buffer (max_entries) that dropped the oldest events.
// [Snapshot.Coverage] reports what the trace itself shows about that.
package snapshot
