package allocator

// Limits counts when the memory cap (set_per_process_memory_fraction) and the
// garbage collection of garbage_collection_threshold engaged: a cap that never
// refused a device allocation, or a collection that never ran, changed nothing, and
// the allocator behaved as without them. PyTorch keeps no such counters; they are
// memlab's, for saying so.
type Limits struct {
	// CapRefusals counts device allocations (new segments, or pages of an
	// expandable segment) the cap refused: each sent the allocator down its
	// release-and-retry path (or to an out-of-memory error).
	CapRefusals int64
	// GCPasses counts the garbage-collection passes that ran: allocations that
	// missed the cache while reserved memory was above the threshold (a fraction
	// of the cap). GCReleased and GCReleasedBytes are the segments they freed.
	GCPasses, GCReleased, GCReleasedBytes int64
}

// Limits returns the counts of the cap's and the garbage collection's work since
// the allocator was made (ResetAccumulatedMemoryStats does not reset them).
func (a *Allocator) Limits() Limits {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.limits
}
