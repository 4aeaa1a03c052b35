//go:build !solution

package stats

// Increase adds n to Current and Allocated and raises Peak to Current if Current
// is now higher.
//
// 中文：current 和 allocated 增加 n；current 更高时 peak 跟上。
func (s *Stat) Increase(n uint64) {
	panic("not implemented")
}

// Decrease subtracts n from Current and adds it to Freed. It returns an error, and
// leaves s unchanged, if n exceeds Current.
//
// 中文：current 减少 n，freed 增加 n。n 大于 current 时返回错误，
// Stat 不变。
func (s *Stat) Decrease(n uint64) error {
	panic("not implemented")
}

// ResetPeak sets Peak to Current, as reset_peak_memory_stats does.
//
// 中文：把 peak 设为 current（reset_peak_memory_stats）。
func (s *Stat) ResetPeak() {
	panic("not implemented")
}

// Apply updates the statistics for one event: SegmentAlloc and SegmentFree move
// Reserved by e.Size and Segments by 1; Alloc and Free move Allocated by e.Size,
// Requested by e.Requested and Allocations by 1.
//
// It returns an error, and changes nothing, if the event is impossible: an unknown
// kind, a zero Size, Requested above Size (or zero) for Alloc/Free, a decrease below
// zero, allocated bytes above reserved bytes afterwards.
//
// 中文：把一个分配器事件重放进五个 Stat（Allocated、Requested、
// Reserved、Allocations、Segments）。事件不可能发生时（释放多于已有、
// 已分配会超过已预留、已预留会低于已分配、请求比块大、大小为零、未知类型）返回错误，
// 什么都不改。
func (t *Tracker) Apply(e Event) error {
	panic("not implemented")
}
