// Package pool reuses device memory explicitly, as section 4.3 of the course
// shows: a fixed-shape [TensorPool], a preallocated [KVCache] for decoding one
// sequence at a time, and a [PagedKVCache] that serves many sequences of
// different lengths from fixed-size blocks of one arena.
//
// The caching allocator already reuses freed blocks; a pool goes further by
// keeping the tensors themselves, so that a hot loop makes no allocator call
// at all and its memory is bounded by construction. Each type here is safe for
// concurrent use and reports what it did (hits and misses, blocks used and
// free), so that a notebook can show the effect.
//
// Tensors handed out by a pool, and views returned by the caches, are ordinary
// [tensor.Tensor] handles: the caller releases views it was given, and returns
// pooled tensors with Put instead of releasing them.
package pool
