package allocator

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"strconv"
	"strings"
)

// Config is the allocator's configuration: every key of PYTORCH_CUDA_ALLOC_CONF that
// PyTorch 2.11's native allocator understands. Start from DefaultConfig or ParseConfig;
// the zero value is also valid and means PyTorch's defaults (see each field).
type Config struct {
	// MaxSplitSize is max_split_size_mb in bytes: cached blocks of at least this size are
	// never split, and requests below it never take them. 0 means unlimited (PyTorch's
	// default SIZE_MAX).
	MaxSplitSize int64
	// MaxNonSplitRounding is max_non_split_rounding_mb in bytes: an oversize request may
	// reuse a cached block at most this much larger. 0 means the default, 20 MiB.
	MaxNonSplitRounding int64
	// RoundupPower2Divisions holds roundup_power2_divisions per power-of-two interval:
	// entry 0 covers sizes below 2 MiB, entry k covers [2^(20+k), 2^(21+k)), entry 15
	// everything from 32 GiB. 0 or 1 means plain 512-byte rounding.
	RoundupPower2Divisions [RoundupIntervals]int
	// GarbageCollectionThreshold is garbage_collection_threshold, in (0, 1); 0 means off.
	// It only acts while a per-process memory fraction is in force.
	GarbageCollectionThreshold float64
	// ExpandableSegments is expandable_segments: one growing mapped range per pool
	// instead of one device allocation per segment. The Memory must be a VirtualMemory.
	ExpandableSegments bool
	// LargeSegmentSize is large_segment_size_mb in bytes: the segment size of 1–10 MiB
	// requests and the page of large expandable segments. 0 means 20 MiB.
	LargeSegmentSize int64
	// PerProcessMemoryFraction is per_process_memory_fraction, the initial cap on
	// reserved memory as a fraction of the device's total memory. In a Config built in
	// code 0 means unset; 1 means no cap. (ParseConfig of
	// "per_process_memory_fraction:0" caps at zero bytes, as PyTorch does.)
	PerProcessMemoryFraction float64
	// Backend is "native" (or empty). PyTorch's cudaMallocAsync backend is not modelled.
	Backend string
	// ReleaseLockOnCudaMalloc is release_lock_on_cudamalloc. Accepted and reported; memlab
	// always keeps its lock around Memory.Malloc.
	ReleaseLockOnCudaMalloc bool
	// PinnedUseCudaHostRegister is pinned_use_cuda_host_register (pinned host memory only;
	// recorded, no effect here).
	PinnedUseCudaHostRegister bool
	// PinnedNumRegisterThreads is pinned_num_register_threads; 0 means the default, 1.
	PinnedNumRegisterThreads int
	// PinnedUseBackgroundThreads is pinned_use_background_threads (recorded, no effect).
	PinnedUseBackgroundThreads bool
	// PinnedReserveSegmentSizeMB is pinned_reserve_segment_size_mb (recorded, no effect).
	PinnedReserveSegmentSizeMB int
	// GraphCaptureRecordStreamReuse is graph_capture_record_stream_reuse (CUDA graphs are
	// out of scope; recorded, no effect).
	GraphCaptureRecordStreamReuse bool

	raw         string // the string this Config was parsed from
	parsed      bool   // raw is meaningful
	fractionSet bool   // per_process_memory_fraction was given (even as 0)
}

// memoryFraction returns the initial fraction cap and whether one is in force.
func (c *Config) memoryFraction() (float64, bool) {
	f := c.PerProcessMemoryFraction
	if (f > 0 || c.fractionSet) && f < 1 {
		return f, true
	}
	return 0, false
}

// DefaultConfig returns PyTorch's defaults: nothing capped, nothing rounded beyond
// 512 bytes, no garbage collection, no expandable segments.
func DefaultConfig() Config {
	return Config{Backend: "native", PinnedNumRegisterThreads: 1}
}

// maxSplit returns max_split_size in bytes, math.MaxInt64 when unlimited.
func (c *Config) maxSplit() int64 {
	if c.MaxSplitSize <= 0 {
		return math.MaxInt64
	}
	return c.MaxSplitSize
}

func (c *Config) maxNonSplitRounding() int64 {
	if c.MaxNonSplitRounding <= 0 {
		return LargeBuffer
	}
	return c.MaxNonSplitRounding
}

func (c *Config) largeSegment() int64 {
	if c.LargeSegmentSize <= 0 {
		return LargeBuffer
	}
	return c.LargeSegmentSize
}

// Source returns the configuration string this Config was parsed from ("" for one built
// in code), as PyTorch reports it under allocator_settings["PYTORCH_CUDA_ALLOC_CONF"].
func (c Config) Source() string {
	if c.parsed {
		return c.raw
	}
	return c.String()
}

// String renders the non-default settings in PYTORCH_CUDA_ALLOC_CONF syntax, e.g.
// "max_split_size_mb:128,roundup_power2_divisions:[1:4,>:8]". ParseConfig(c.String())
// gives back an equal Config.
func (c Config) String() string {
	var parts []string
	add := func(k, v string) { parts = append(parts, k+":"+v) }
	if c.Backend != "" && c.Backend != "native" {
		add("backend", c.Backend)
	}
	if c.MaxSplitSize > 0 {
		add("max_split_size_mb", strconv.FormatInt(c.MaxSplitSize>>20, 10))
	}
	if c.MaxNonSplitRounding > 0 && c.MaxNonSplitRounding != LargeBuffer {
		add("max_non_split_rounding_mb", strconv.FormatInt(c.MaxNonSplitRounding>>20, 10))
	}
	if rp := c.roundupString(); rp != "" {
		add("roundup_power2_divisions", rp)
	}
	if c.GarbageCollectionThreshold > 0 {
		add("garbage_collection_threshold", strconv.FormatFloat(c.GarbageCollectionThreshold, 'g', -1, 64))
	}
	if c.ExpandableSegments {
		add("expandable_segments", "True")
	}
	if c.LargeSegmentSize > 0 && c.LargeSegmentSize != LargeBuffer {
		add("large_segment_size_mb", strconv.FormatInt(c.LargeSegmentSize>>20, 10))
	}
	if f, ok := c.memoryFraction(); ok {
		add("per_process_memory_fraction", strconv.FormatFloat(f, 'g', -1, 64))
	}
	if c.ReleaseLockOnCudaMalloc {
		add("release_lock_on_cudamalloc", "True")
	}
	if c.PinnedUseCudaHostRegister {
		add("pinned_use_cuda_host_register", "True")
	}
	if c.PinnedNumRegisterThreads > 1 {
		add("pinned_num_register_threads", strconv.Itoa(c.PinnedNumRegisterThreads))
	}
	if c.PinnedUseBackgroundThreads {
		add("pinned_use_background_threads", "True")
	}
	if c.PinnedReserveSegmentSizeMB > 0 {
		add("pinned_reserve_segment_size_mb", strconv.Itoa(c.PinnedReserveSegmentSizeMB))
	}
	if c.GraphCaptureRecordStreamReuse {
		add("graph_capture_record_stream_reuse", "True")
	}
	return strings.Join(parts, ",")
}

// roundupString renders RoundupPower2Divisions: a single number when all intervals
// agree, else a list that PyTorch's parser reads back to the same table (the first
// entry covers the intervals below it, ">" those after the last entry).
func (c Config) roundupString() string {
	d := c.RoundupPower2Divisions
	k0 := 0
	for k0+1 < RoundupIntervals && d[k0+1] == d[0] {
		k0++
	}
	if k0 == RoundupIntervals-1 {
		if d[0] <= 1 {
			return ""
		}
		return strconv.Itoa(d[0])
	}
	last := d[RoundupIntervals-1]
	j := k0 // last interval that differs from the final run
	for i := RoundupIntervals - 2; i > k0; i-- {
		if d[i] != last {
			j = i
			break
		}
	}
	items := []string{fmt.Sprintf("%d:%d", 1<<k0, d[0])}
	for i := k0 + 1; i <= j; i++ {
		items = append(items, fmt.Sprintf("%d:%d", 1<<i, d[i]))
	}
	items = append(items, fmt.Sprintf(">:%d", last))
	return "[" + strings.Join(items, ",") + "]"
}

// ConfigError is returned by ParseConfig for a malformed configuration string. It names
// the key and the form the key accepts.
type ConfigError struct {
	Key    string // the offending key ("" when the string itself is malformed)
	Value  string // the offending value, if any
	Reason string // what is wrong, in PyTorch's words where PyTorch has them
	Form   string // the accepted form
}

// Error renders the key, the value, what is wrong and the accepted form.
func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("allocator: config")
	if e.Key != "" {
		fmt.Fprintf(&b, " key %q", e.Key)
	}
	if e.Value != "" {
		fmt.Fprintf(&b, " value %q", e.Value)
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	if e.Form != "" {
		b.WriteString(" (accepted: ")
		b.WriteString(e.Form)
		b.WriteString(")")
	}
	return b.String()
}

var knownKeys = []string{
	"backend", "max_split_size_mb", "max_non_split_rounding_mb", "roundup_power2_divisions",
	"garbage_collection_threshold", "expandable_segments", "release_lock_on_cudamalloc",
	"release_lock_on_hipmalloc", "pinned_use_cuda_host_register", "pinned_use_hip_host_register",
	"pinned_num_register_threads", "pinned_use_background_threads",
	"pinned_reserve_segment_size_mb", "graph_capture_record_stream_reuse",
	"per_process_memory_fraction", "large_segment_size_mb",
}

// tokenize splits like PyTorch's ConfigTokenizer: ',', ':', '[' and ']' are tokens of
// their own; whitespace is dropped.
func tokenize(s string) []string {
	var toks []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			toks = append(toks, cur.String())
			cur.Reset()
		}
	}
	for _, r := range s {
		switch r {
		case ',', ':', '[', ']':
			flush()
			toks = append(toks, string(r))
		case ' ', '\t', '\n', '\r':
			flush()
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return toks
}

// ParseConfig parses a PYTORCH_CUDA_ALLOC_CONF string such as
// "max_split_size_mb:128,expandable_segments:True" or
// "roundup_power2_divisions:[256:1,512:2,>:8]". Keys not mentioned keep PyTorch's
// defaults. On a malformed string it returns a *ConfigError naming the key and the
// accepted form, and the zero Config: nothing is half-applied.
func ParseConfig(s string) (Config, error) {
	c := DefaultConfig()
	c.raw, c.parsed = s, true
	toks := tokenize(s)
	i := 0
	for i < len(toks) {
		key := toks[i]
		if key == "," || key == ":" || key == "[" || key == "]" {
			return Config{}, &ConfigError{Value: key, Reason: "expected a key", Form: "key:value[,key:value...]"}
		}
		if i+1 >= len(toks) || toks[i+1] != ":" {
			return Config{}, &ConfigError{Key: key, Reason: "expected ':' after the key", Form: "key:value[,key:value...]"}
		}
		i += 2
		if i >= len(toks) {
			return Config{}, &ConfigError{Key: key, Reason: "missing value", Form: formOf(key)}
		}
		var err error
		if key == "roundup_power2_divisions" {
			i, err = parseRoundup(&c, toks, i)
		} else {
			val := toks[i]
			if val == "," || val == ":" || val == "[" || val == "]" {
				return Config{}, &ConfigError{Key: key, Value: val, Reason: "missing value", Form: formOf(key)}
			}
			err = setKey(&c, key, val)
			i++
		}
		if err != nil {
			return Config{}, err
		}
		if i < len(toks) {
			if toks[i] != "," {
				return Config{}, &ConfigError{Key: key, Value: toks[i], Reason: "expected ',' between settings", Form: "key:value[,key:value...]"}
			}
			i++
			if i >= len(toks) {
				return Config{}, &ConfigError{Reason: "trailing ','", Form: "key:value[,key:value...]"}
			}
		}
	}
	if c.MaxSplitSize > 0 && c.MaxSplitSize < c.largeSegment() {
		return Config{}, &ConfigError{Key: "max_split_size_mb", Value: strconv.FormatInt(c.MaxSplitSize>>20, 10),
			Reason: fmt.Sprintf("CachingAllocator option max_split_size_mb too small, must be >= %d", c.largeSegment()>>20), Form: formOf("max_split_size_mb")}
	}
	if c.MaxNonSplitRounding > 0 && c.MaxNonSplitRounding < c.largeSegment() {
		return Config{}, &ConfigError{Key: "max_non_split_rounding_mb", Value: strconv.FormatInt(c.MaxNonSplitRounding>>20, 10),
			Reason: fmt.Sprintf("CachingAllocator option max_non_split_rounding_mb too small, must be >= %d", c.largeSegment()>>20), Form: formOf("max_non_split_rounding_mb")}
	}
	return c, nil
}

func formOf(key string) string {
	switch key {
	case "backend":
		return "native"
	case "max_split_size_mb", "max_non_split_rounding_mb":
		return "an integer number of MiB >= 20"
	case "large_segment_size_mb":
		return "an integer number of MiB > 10"
	case "roundup_power2_divisions":
		return "a power of two N, or [MB:N,...,>:N] with power-of-two MB and N a power of two or 0"
	case "garbage_collection_threshold":
		return "a number in (0.0, 1.0)"
	case "per_process_memory_fraction":
		return "a number in [0.0, 1.0]"
	case "pinned_num_register_threads":
		return "a power of two from 1 to 128"
	case "pinned_reserve_segment_size_mb":
		return "a positive integer number of MiB"
	default:
		return "True or False"
	}
}

func parseBool(key, v string) (bool, error) {
	switch v {
	case "True":
		return true, nil
	case "False":
		return false, nil
	}
	return false, &ConfigError{Key: key, Value: v, Reason: fmt.Sprintf("Expected 'True' or 'False' but got '%s'", v), Form: "True or False"}
}

func parseMB(key, v string) (int64, error) {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, &ConfigError{Key: key, Value: v, Reason: "not a non-negative integer", Form: formOf(key)}
	}
	if n > math.MaxInt64>>20 {
		n = math.MaxInt64 >> 20
	}
	return int64(n) << 20, nil
}

func setKey(c *Config, key, v string) error {
	var err error
	switch key {
	case "backend":
		switch v {
		case "native":
			c.Backend = v
		case "cudaMallocAsync", "hipMallocAsync":
			return &ConfigError{Key: key, Value: v, Reason: "memlab models only the native caching allocator", Form: formOf(key)}
		default:
			return &ConfigError{Key: key, Value: v, Reason: "Unknown allocator backend, options are native and cudaMallocAsync", Form: formOf(key)}
		}
	case "max_split_size_mb":
		c.MaxSplitSize, err = parseMB(key, v)
	case "max_non_split_rounding_mb":
		c.MaxNonSplitRounding, err = parseMB(key, v)
	case "large_segment_size_mb":
		var n int64
		n, err = parseMB(key, v)
		if err == nil && n <= 10<<20 {
			return &ConfigError{Key: key, Value: v, Reason: "CachingAllocator option large_segment_size_mb must be > 10 MB", Form: formOf(key)}
		}
		if err == nil && n%RoundLarge != 0 {
			return &ConfigError{Key: key, Value: v, Reason: "must be a multiple of 2 MiB", Form: formOf(key)}
		}
		c.LargeSegmentSize = n
	case "garbage_collection_threshold":
		f, perr := strconv.ParseFloat(v, 64)
		if perr != nil || math.IsNaN(f) || f <= 0 || f >= 1 {
			return &ConfigError{Key: key, Value: v, Reason: "garbage_collect_threshold is invalid, set it in (0.0, 1.0)", Form: formOf(key)}
		}
		c.GarbageCollectionThreshold = f
	case "per_process_memory_fraction":
		f, perr := strconv.ParseFloat(v, 64)
		if perr != nil || math.IsNaN(f) || f < 0 || f > 1 {
			return &ConfigError{Key: key, Value: v, Reason: "per_process_memory_fraction is invalid, set it in [0.0, 1.0]", Form: formOf(key)}
		}
		c.PerProcessMemoryFraction = f
		c.fractionSet = true
	case "expandable_segments":
		c.ExpandableSegments, err = parseBool(key, v)
	case "release_lock_on_cudamalloc", "release_lock_on_hipmalloc":
		c.ReleaseLockOnCudaMalloc, err = parseBool(key, v)
	case "pinned_use_cuda_host_register", "pinned_use_hip_host_register":
		c.PinnedUseCudaHostRegister, err = parseBool(key, v)
	case "pinned_use_background_threads":
		c.PinnedUseBackgroundThreads, err = parseBool(key, v)
	case "graph_capture_record_stream_reuse":
		c.GraphCaptureRecordStreamReuse, err = parseBool(key, v)
	case "pinned_num_register_threads":
		n, perr := strconv.Atoi(v)
		if perr != nil || n <= 0 || n&(n-1) != 0 || n > 128 {
			return &ConfigError{Key: key, Value: v, Reason: "Number of register threads has to be power of 2", Form: formOf(key)}
		}
		c.PinnedNumRegisterThreads = n
	case "pinned_reserve_segment_size_mb":
		n, perr := strconv.Atoi(v)
		if perr != nil || n <= 0 {
			return &ConfigError{Key: key, Value: v, Reason: "pinned_reserve_segment_size_mb must be positive", Form: formOf(key)}
		}
		c.PinnedReserveSegmentSizeMB = n
	default:
		return &ConfigError{Key: key, Reason: fmt.Sprintf("Unrecognized key '%s' in CUDA allocator config.", key),
			Form: "one of " + strings.Join(knownKeys, ", ")}
	}
	return err
}

func isPow2(n uint64) bool { return n != 0 && n&(n-1) == 0 }

// parseRoundup parses the value of roundup_power2_divisions starting at toks[i] and
// returns the index after it. List semantics are PyTorch 2.11's (checked on the H200):
// the first entry also fills every lower interval, later entries set only their own,
// ">" fills every interval after the last explicit one, and intervals not covered keep 0.
func parseRoundup(c *Config, toks []string, i int) (int, error) {
	const key = "roundup_power2_divisions"
	form := formOf(key)
	if toks[i] != "[" {
		n, err := strconv.ParseUint(toks[i], 10, 64)
		if err != nil || !isPow2(n) || n > 1<<62 {
			return i, &ConfigError{Key: key, Value: toks[i], Reason: "For roundups, the divisions has to be power of 2", Form: form}
		}
		for k := range c.RoundupPower2Divisions {
			c.RoundupPower2Divisions[k] = int(n)
		}
		return i + 1, nil
	}
	i++ // past '['
	lastIndex := 0
	first := true
	for {
		if i >= len(toks) {
			return i, &ConfigError{Key: key, Reason: "missing ']'", Form: form}
		}
		if toks[i] == "]" {
			return i + 1, nil
		}
		k := toks[i]
		if i+2 >= len(toks) || toks[i+1] != ":" {
			return i, &ConfigError{Key: key, Value: k, Reason: "expected MB:N inside [...]", Form: form}
		}
		vs := toks[i+2]
		v, err := strconv.ParseUint(vs, 10, 64)
		if err != nil || (v != 0 && !isPow2(v)) || v > 1<<62 {
			return i, &ConfigError{Key: key, Value: vs, Reason: "For roundups, the divisions has to be power of 2 or 0 to disable roundup", Form: form}
		}
		if k == ">" {
			for j := lastIndex + 1; j < RoundupIntervals; j++ {
				c.RoundupPower2Divisions[j] = int(v)
			}
		} else {
			mb, err := strconv.ParseUint(k, 10, 64)
			if err != nil || !isPow2(mb) {
				return i, &ConfigError{Key: key, Value: k, Reason: "For roundups, the intervals have to be power of 2", Form: form}
			}
			idx := 63 - bits.LeadingZeros64(mb)
			if idx > RoundupIntervals-1 {
				idx = RoundupIntervals - 1
			}
			if first { // only the first entry also covers the intervals below it
				for j := 0; j < idx; j++ {
					c.RoundupPower2Divisions[j] = int(v)
				}
				first = false
			}
			c.RoundupPower2Divisions[idx] = int(v)
			lastIndex = idx
		}
		i += 3
		if i < len(toks) && toks[i] == "," {
			i++
			if i < len(toks) && toks[i] == "]" {
				return i, &ConfigError{Key: key, Reason: "trailing ',' inside [...]", Form: form}
			}
		} else if i < len(toks) && toks[i] != "]" {
			return i, &ConfigError{Key: key, Value: toks[i], Reason: "expected ',' or ']'", Form: form}
		}
	}
}

// Environment variables ConfigFromEnv reads, first one set wins.
var envVars = []string{"MEMLAB_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF"}

// ConfigFromEnv reads MEMLAB_ALLOC_CONF, else PYTORCH_CUDA_ALLOC_CONF, else
// PYTORCH_HIP_ALLOC_CONF, else PYTORCH_ALLOC_CONF (PyTorch 2.11's order after memlab's
// own variable; the first one present wins, even if empty). With none set it returns
// DefaultConfig. A malformed value is an error naming the variable and the key.
func ConfigFromEnv() (Config, error) {
	for _, name := range envVars {
		if v, ok := os.LookupEnv(name); ok {
			c, err := ParseConfig(v)
			if err != nil {
				return Config{}, fmt.Errorf("%s: %w", name, err)
			}
			return c, nil
		}
	}
	return DefaultConfig(), nil
}

// validate checks a Config built in code (ParseConfig output always passes).
func (c *Config) validate() error {
	if c.MaxSplitSize < 0 {
		return &ConfigError{Key: "max_split_size_mb", Reason: "negative", Form: formOf("max_split_size_mb")}
	}
	if c.MaxSplitSize > 0 && c.MaxSplitSize < c.largeSegment() {
		return &ConfigError{Key: "max_split_size_mb", Reason: "too small, must be >= 20 MiB", Form: formOf("max_split_size_mb")}
	}
	if c.MaxNonSplitRounding < 0 {
		return &ConfigError{Key: "max_non_split_rounding_mb", Reason: "negative", Form: formOf("max_non_split_rounding_mb")}
	}
	if c.LargeSegmentSize < 0 || (c.LargeSegmentSize > 0 && (c.LargeSegmentSize <= 10<<20 || c.LargeSegmentSize%RoundLarge != 0)) {
		return &ConfigError{Key: "large_segment_size_mb", Reason: "must be > 10 MiB and a multiple of 2 MiB", Form: formOf("large_segment_size_mb")}
	}
	for _, d := range c.RoundupPower2Divisions {
		if d < 0 || (d != 0 && d&(d-1) != 0) {
			return &ConfigError{Key: "roundup_power2_divisions", Value: strconv.Itoa(d), Reason: "For roundups, the divisions has to be power of 2 or 0 to disable roundup", Form: formOf("roundup_power2_divisions")}
		}
	}
	g := c.GarbageCollectionThreshold
	if math.IsNaN(g) || g < 0 || g >= 1 {
		return &ConfigError{Key: "garbage_collection_threshold", Reason: "garbage_collect_threshold is invalid, set it in (0.0, 1.0)", Form: formOf("garbage_collection_threshold")}
	}
	f := c.PerProcessMemoryFraction
	if math.IsNaN(f) || f < 0 || f > 1 {
		return &ConfigError{Key: "per_process_memory_fraction", Reason: "per_process_memory_fraction is invalid, set it in [0.0, 1.0]", Form: formOf("per_process_memory_fraction")}
	}
	if c.Backend != "" && c.Backend != "native" {
		return &ConfigError{Key: "backend", Value: c.Backend, Reason: "memlab models only the native caching allocator", Form: formOf("backend")}
	}
	return nil
}

var errNoVirtualMemory = errors.New("allocator: expandable_segments:True needs a Memory that implements VirtualMemory")
