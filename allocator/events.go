package allocator

import (
	"fmt"
	"runtime"
	"strings"
	"time"
)

// Action names an allocator event. The values are PyTorch's TraceEntry action names,
// plus "empty_cache", which memlab adds for subscribers.
type Action string

// The actions an Event can carry.
const (
	ActionAlloc         Action = "alloc"          // a block was handed out (Size = request)
	ActionFreeRequested Action = "free_requested" // Free was called (Size = request)
	ActionFreeCompleted Action = "free_completed" // the block went back to the cache
	ActionSegmentAlloc  Action = "segment_alloc"  // a device allocation (cudaMalloc)
	ActionSegmentFree   Action = "segment_free"   // a device free (cudaFree)
	ActionSegmentMap    Action = "segment_map"    // pages mapped into an expandable segment
	ActionSegmentUnmap  Action = "segment_unmap"  // pages unmapped from an expandable segment
	ActionOOM           Action = "oom"            // an allocation failed (Addr = device free bytes, Size = rounded request)
	ActionEmptyCache    Action = "empty_cache"    // EmptyCache finished (memlab only; not exported to memory_viz)
)

// Frame is one Go stack frame recorded with an event.
type Frame struct {
	Function string `json:"name"`
	File     string `json:"filename"`
	Line     int    `json:"line"`
}

// Event is one allocator event, as PyTorch's memory history records it.
type Event struct {
	Action Action
	// Addr is the block or segment address; for ActionOOM it is the device's free
	// bytes at the time (PyTorch's device_free).
	Addr uint64
	// Size is the request for alloc/free events, the segment or range size for segment
	// events, the rounded request for oom.
	Size int64
	// Stream is the stream of the block or segment (0: the default stream).
	Stream uint64
	// Pool is the private pool of the block or segment, or of the request that ran
	// out of memory; the zero PoolID for the default pool and for empty_cache.
	Pool PoolID
	// Time is when the event happened.
	Time time.Time
	// Allocated and Reserved are MemoryAllocated and MemoryReserved right after the event.
	Allocated, Reserved int64
	// Frames is the Go call stack, when history was enabled with Stacks.
	Frames []Frame
}

// HistoryOptions configures RecordHistory.
type HistoryOptions struct {
	// Enabled turns recording on; false turns it off and clears the history.
	Enabled bool
	// MaxEntries bounds the history (a ring buffer keeps the newest). 0 means 100000.
	MaxEntries int
	// Stacks records the Go call stack of each event (costly).
	Stacks bool
}

type history struct {
	on      bool
	stacks  bool
	max     int
	entries []Event
	next    int // ring position once full
}

func (h *history) add(e Event) {
	if len(h.entries) < h.max {
		h.entries = append(h.entries, e)
		return
	}
	h.entries[h.next] = e
	h.next++
	if h.next == h.max {
		h.next = 0
	}
}

func (h *history) ordered() []Event {
	out := make([]Event, 0, len(h.entries))
	out = append(out, h.entries[h.next:]...)
	return append(out, h.entries[:h.next]...)
}

type subscriber struct {
	id int
	fn func(Event)
}

// captureFrames returns the caller's Go stack, skipping the allocator's own frames.
func captureFrames() []Frame {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	var out []Frame
	for {
		f, more := frames.Next()
		if f.Function != "" && !(isAllocatorFrame(f.Function) && !strings.HasSuffix(f.File, "_test.go")) {
			out = append(out, Frame{Function: f.Function, File: f.File, Line: f.Line})
		}
		if !more {
			break
		}
	}
	return out
}

func isAllocatorFrame(fn string) bool {
	const p = "memlab.dev/memlab/allocator."
	return len(fn) > len(p) && fn[:len(p)] == p
}

// emit records an event if anyone listens. p is the block pool the event concerns
// (nil: none). Called with a.mu held.
func (a *Allocator) emit(act Action, addr uint64, size int64, stream uint64, p *pool, b *block) {
	if !a.tracing {
		return
	}
	e := Event{
		Action: act, Addr: addr, Size: size, Stream: stream, Pool: p.poolID(), Time: time.Now(),
		Allocated: a.stats.allocatedBytes[statAll].Current,
		Reserved:  a.stats.reservedBytes[statAll].Current,
	}
	if a.hist.on && a.hist.stacks {
		e.Frames = captureFrames()
		if b != nil && act == ActionAlloc {
			b.frames = e.Frames // shown with the block in snapshots
		}
	}
	for _, s := range a.subs {
		a.call(s.fn, e)
	}
	if a.hist.on {
		a.hist.add(e)
	}
}

// SubscriberPanic is the panic a Malloc, Free or EmptyCache raises when a
// Subscribe callback panicked during it. The callback's panic is caught where
// the allocator's state may be half-updated, the operation completes, and only
// then, with the allocator consistent and its lock released, is the panic
// raised again, as a *SubscriberPanic carrying the callback's value.
type SubscriberPanic struct {
	Event Event // the event the callback was given
	Value any   // what the callback panicked with
}

// Error says which event's callback panicked, and with what.
func (p *SubscriberPanic) Error() string {
	return fmt.Sprintf("allocator: a Subscribe callback panicked on a %s event: %v", p.Event.Action, p.Value)
}

// Unwrap returns the callback's panic value when it is an error.
func (p *SubscriberPanic) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// call runs a subscriber, catching its panic (the first one is kept for
// unlock to raise).
func (a *Allocator) call(fn func(Event), e Event) {
	defer func() {
		if r := recover(); r != nil && a.subPanic == nil {
			a.subPanic = &SubscriberPanic{Event: e, Value: r}
		}
	}()
	fn(e)
}

// unlock releases the allocator's lock at the end of an operation that may
// call subscribers, then raises the panic one of them raised during it.
func (a *Allocator) unlock() {
	p := a.subPanic
	a.subPanic = nil
	a.mu.Unlock()
	if p != nil {
		panic(p)
	}
}

// RecordHistory turns the bounded event history on or off (PyTorch's
// torch.cuda.memory._record_memory_history). Turning it off clears it. Recording never
// changes allocation decisions.
func (a *Allocator) RecordHistory(opts HistoryOptions) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !opts.Enabled {
		a.hist = history{}
	} else {
		max := opts.MaxEntries
		if max <= 0 {
			max = 100000
		}
		if max != a.hist.max || !a.hist.on {
			a.hist = history{max: max}
		}
		a.hist.on = true
		a.hist.stacks = opts.Stacks
	}
	a.tracing = a.hist.on || len(a.subs) > 0
}

// Subscribe registers fn to be called synchronously for every event, in order, from
// inside the allocator's lock, right after the event took effect. fn must be quick and
// must not call the Allocator (that would deadlock); copy what it needs and return.
// If fn panics, the operation still completes and the allocator stays consistent;
// the panic is then raised again as a *SubscriberPanic by the Malloc, Free or
// EmptyCache during which it happened.
// The returned cancel function unregisters fn; it is safe to call more than once.
func (a *Allocator) Subscribe(fn func(Event)) (cancel func()) {
	if fn == nil {
		return func() {}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.nextSubID++
	id := a.nextSubID
	a.subs = append(a.subs, subscriber{id: id, fn: fn})
	a.tracing = true
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		for i, s := range a.subs {
			if s.id == id {
				a.subs = append(a.subs[:i:i], a.subs[i+1:]...)
				break
			}
		}
		a.tracing = a.hist.on || len(a.subs) > 0
	}
}
