package snapshot

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"

	"memlab.dev/memlab/allocator"
)

// Settings is the snapshot's "allocator_settings" dict (PyTorch 2.5 and later): the
// configuration string and the values the allocator ran with. Keys an older PyTorch
// does not write keep their zero value.
type Settings struct {
	// Conf is "PYTORCH_CUDA_ALLOC_CONF": the last configuration string the
	// allocator parsed ("" when none was set).
	Conf string
	// MaxSplitSize is "max_split_size" in bytes; -1 when unlimited (PyTorch's
	// SIZE_MAX written as a signed integer).
	MaxSplitSize               int64
	GarbageCollectionThreshold float64
	ExpandableSegments         bool
	PinnedNumRegisterThreads   int
	// ReleaseLockOnCudaMalloc is "release_lock_on_cudamalloc".
	ReleaseLockOnCudaMalloc bool
	// PinnedUseCudaHostRegister is "pinned_use_cuda_host_register".
	PinnedUseCudaHostRegister bool
	// GraphCaptureRecordStreamReuse is "graph_capture_record_stream_reuse" (2.10+).
	GraphCaptureRecordStreamReuse bool
	// HasGraphCaptureRecordStreamReuse reports whether the key is there (PyTorch
	// 2.10 and later write it): Write writes it only then.
	HasGraphCaptureRecordStreamReuse bool
	// RoundupPower2Divisions is "roundup_power2_divisions": PyTorch writes it as a
	// dict from "1", "2", "4", … "32768" to the divisions of interval 0, 1, 2, … 15;
	// here entry i is the divisions of interval i, as in allocator.Config.
	RoundupPower2Divisions [allocator.RoundupIntervals]int
}

func (c *converter) settings(st *Settings, v value) error {
	a := at{format: "allocator_settings"}
	d, err := c.asDict(a, v)
	if err != nil {
		return err
	}
	for i := 0; i < len(d.kv); i += 2 {
		k := c.keyStr(d.kv[i])
		val := d.kv[i+1]
		switch k {
		case "PYTORCH_CUDA_ALLOC_CONF":
			st.Conf, err = c.asStr(a, k, val)
		case "max_split_size":
			st.MaxSplitSize, err = c.asInt(a, k, val)
			if err == nil && st.MaxSplitSize < -1 {
				err = fmt.Errorf("snapshot: allocator_settings.max_split_size: %d is negative", st.MaxSplitSize)
			}
		case "garbage_collection_threshold":
			st.GarbageCollectionThreshold, err = c.asFloat(a, k, val)
			if err == nil && (math.IsNaN(st.GarbageCollectionThreshold) || math.IsInf(st.GarbageCollectionThreshold, 0)) {
				err = fmt.Errorf("snapshot: allocator_settings.garbage_collection_threshold: %v is not a threshold", st.GarbageCollectionThreshold)
			}
		case "expandable_segments":
			st.ExpandableSegments, err = c.asBool(a, k, val)
		case "pinned_num_register_threads":
			st.PinnedNumRegisterThreads, err = c.smallInt(a, k, val)
		case "release_lock_on_cudamalloc":
			st.ReleaseLockOnCudaMalloc, err = c.asBool(a, k, val)
		case "pinned_use_cuda_host_register":
			st.PinnedUseCudaHostRegister, err = c.asBool(a, k, val)
		case "graph_capture_record_stream_reuse":
			st.HasGraphCaptureRecordStreamReuse = true
			st.GraphCaptureRecordStreamReuse, err = c.asBool(a, k, val)
		case "roundup_power2_divisions":
			err = c.roundup(&st.RoundupPower2Divisions, val)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *converter) roundup(out *[allocator.RoundupIntervals]int, v value) error {
	a := at{format: "allocator_settings"}
	const key = "roundup_power2_divisions"
	if v.k != kDict {
		return c.typeErr(a, key, "dict", v)
	}
	d := c.dict(v)
	for i := 0; i < len(d.kv); i += 2 {
		var n uint64
		switch k := d.kv[i]; k.k {
		case kStr:
			var err error
			if n, err = strconv.ParseUint(c.str(k), 10, 64); err != nil {
				return fmt.Errorf("snapshot: allocator_settings.roundup_power2_divisions: key %.40q is not a number", c.str(k))
			}
		case kInt:
			if n = c.bits(k); int64(n) < 0 {
				return fmt.Errorf("snapshot: allocator_settings.roundup_power2_divisions: key %d is negative", int64(n))
			}
		default:
			return fmt.Errorf("snapshot: allocator_settings.roundup_power2_divisions: key of type %s, want str", c.typeName(k))
		}
		if n == 0 || n&(n-1) != 0 || bits.TrailingZeros64(n) >= allocator.RoundupIntervals {
			return fmt.Errorf("snapshot: allocator_settings.roundup_power2_divisions: key %d is not a power of two up to %d", n, 1<<(allocator.RoundupIntervals-1))
		}
		div, err := c.smallInt(a, fmt.Sprintf("%s[%q]", key, strconv.FormatUint(n, 10)), d.kv[i+1])
		if err != nil {
			return err
		}
		out[bits.TrailingZeros64(n)] = div
	}
	return nil
}

// Config returns the allocator configuration the snapshot was recorded under, for
// replaying it in memlab: PYTORCH_CUDA_ALLOC_CONF parsed by allocator.ParseConfig
// (which also carries keys the dict has no entry for, such as
// max_non_split_rounding_mb, large_segment_size_mb and per_process_memory_fraction),
// with the dict's typed values (what the allocator actually ran with) in force.
// A configuration string memlab cannot parse is an error.
func (s Settings) Config() (allocator.Config, error) {
	c, err := allocator.ParseConfig(s.Conf)
	if err != nil {
		return allocator.Config{}, fmt.Errorf("snapshot: allocator_settings.PYTORCH_CUDA_ALLOC_CONF: %w", err)
	}
	if s.MaxSplitSize < 0 {
		c.MaxSplitSize = 0
	} else {
		c.MaxSplitSize = s.MaxSplitSize
	}
	c.GarbageCollectionThreshold = s.GarbageCollectionThreshold
	c.ExpandableSegments = s.ExpandableSegments
	if s.PinnedNumRegisterThreads > 0 {
		c.PinnedNumRegisterThreads = s.PinnedNumRegisterThreads
	}
	c.ReleaseLockOnCudaMalloc = s.ReleaseLockOnCudaMalloc
	c.PinnedUseCudaHostRegister = s.PinnedUseCudaHostRegister
	c.GraphCaptureRecordStreamReuse = s.GraphCaptureRecordStreamReuse
	c.RoundupPower2Divisions = s.RoundupPower2Divisions
	if err := checkConfig(c); err != nil {
		return allocator.Config{}, err
	}
	return c, nil
}

// checkConfig validates the values taken from the dict by the rules ParseConfig
// applies to the same keys, so that a corrupt dict is an error here rather than
// inside the allocator.
func checkConfig(c allocator.Config) error {
	conf := c.String()
	if _, err := allocator.ParseConfig(conf); err != nil {
		return fmt.Errorf("snapshot: allocator_settings: %w", err)
	}
	return nil
}

// settingsFrom converts the allocator's settings to the snapshot's.
func settingsFrom(s allocator.Settings) Settings {
	return Settings{
		Conf: s.Conf, MaxSplitSize: s.MaxSplitSize,
		GarbageCollectionThreshold:    s.GarbageCollectionThreshold,
		ExpandableSegments:            s.ExpandableSegments,
		PinnedNumRegisterThreads:      s.PinnedNumRegisterThreads,
		ReleaseLockOnCudaMalloc:       s.ReleaseLockOnCudaMalloc,
		PinnedUseCudaHostRegister:     s.PinnedUseCudaHostRegister,
		GraphCaptureRecordStreamReuse: s.GraphCaptureRecordStreamReuse,
		RoundupPower2Divisions:        s.RoundupPower2Divisions,
		// memlab writes what PyTorch 2.11 writes
		HasGraphCaptureRecordStreamReuse: true,
	}
}
