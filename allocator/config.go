package allocator

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"slices"
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
	// reuse a cached block at most this much larger. 0 means the default, the large
	// segment size (20 MiB unless LargeSegmentSize says otherwise).
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
	// GraphCaptureRecordStreamReuse is graph_capture_record_stream_reuse (recorded, no
	// effect: it lets a capture reuse blocks freed across streams inside the graph, which
	// the private pools here do not model).
	GraphCaptureRecordStreamReuse bool

	raw    string // the string this Config was parsed from
	parsed bool   // raw is meaningful
	given  keySet // while parsing, the keys the string set (so that an explicit 0 is checked as a value); after, only givenFraction
}

// keySet records which keys a parsed string gave, for the keys whose zero value
// in a Config built in code means "the default" but is an error when written.
type keySet uint8

const (
	givenMaxSplit keySet = 1 << iota
	givenNonSplit
	givenLargeSegment
	givenGC
	givenFraction
	givenThreads
	givenReserve
)

// memoryFraction returns the initial fraction cap and whether one is in force.
func (c *Config) memoryFraction() (float64, bool) {
	f := c.PerProcessMemoryFraction
	if (f > 0 || c.given&givenFraction != 0) && f < 1 {
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

// maxNonSplitRounding returns max_non_split_rounding in bytes; unset, it is the
// large segment size, as in PyTorch 2.11 (which resets it to
// large_segment_size_mb before reading the other keys).
func (c *Config) maxNonSplitRounding() int64 {
	if c.MaxNonSplitRounding <= 0 {
		return c.largeSegment()
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
	if c.MaxNonSplitRounding > 0 && c.MaxNonSplitRounding != c.largeSegment() {
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

// Keys of PyTorch 2.11's allocator configuration, in the two passes its parser
// makes (after reading large_segment_size_mb first): the keys common to every
// accelerator (c10/core/AllocatorConfig.cpp), then the CUDA ones
// (c10/cuda/CUDAAllocatorConfig.cpp), where an unknown key is an error.
var (
	acceleratorKeys = []string{
		"large_segment_size_mb", "max_split_size_mb", "max_non_split_rounding_mb",
		"garbage_collection_threshold", "roundup_power2_divisions", "expandable_segments",
		"pinned_use_background_threads",
	}
	cudaKeys = []string{
		"backend", "release_lock_on_cudamalloc", "release_lock_on_hipmalloc",
		"pinned_use_cuda_host_register", "pinned_use_hip_host_register",
		"pinned_num_register_threads", "pinned_reserve_segment_size_mb",
		"graph_capture_record_stream_reuse", "per_process_memory_fraction",
	}
	knownKeys = append(slices.Clone(acceleratorKeys), cudaKeys...)
)

// tokenize splits like PyTorch's ConfigTokenizer (tokenizeTorch): ',', ':', '['
// and ']' are tokens of their own; whitespace (C's isspace) is dropped, and
// does not end a token. It also returns the first token that had whitespace
// inside it as written ("64 MB"), which PyTorch reads joined ("64MB").
func tokenize(s string) (toks []string, spaced string) {
	for _, piece := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(",:[]", r) }) {
		if p := strings.TrimSpace(piece); spaced == "" && strings.ContainsAny(p, " \t\n\v\f\r") {
			spaced = p
		}
	}
	return tokenizeTorch(s), spaced
}

func isSeparator(tok string) bool { return tok == "," || tok == ":" || tok == "[" || tok == "]" }

// configItem is one key of a configuration string and its value: one token, or
// the K:V entries of a [...] list.
type configItem struct {
	key   string
	value string      // the value token; "[" for a list
	index int         // the value's index among the tokens (PyTorch's error messages count them)
	list  [][2]string // a list's entries
}

const configForm = "key:value[,key:value...]"

// splitConfig reads the items of a tokenized configuration. A separator where a
// key should be becomes an item with that key, which PyTorch reports as an
// unrecognized key; everything else PyTorch cannot read (a missing ':' or value,
// an unclosed list) is an error here, as is a setting not followed by ',': PyTorch
// ignores what stands there, memlab does not guess.
func splitConfig(toks []string) ([]configItem, error) {
	var items []configItem
	var stray *ConfigError // the first separator where a key should be
	fail := func(err *ConfigError) ([]configItem, error) {
		if stray != nil { // PyTorch skips past it and reports it
			return nil, stray
		}
		return nil, err
	}
	for i := 0; i < len(toks); {
		key := toks[i]
		if isSeparator(key) {
			items = append(items, configItem{key: key})
			if stray == nil {
				stray = unknownKey(key)
			}
			i++
			continue
		}
		if i+1 >= len(toks) || toks[i+1] != ":" {
			return fail(&ConfigError{Key: key, Reason: "expected ':' after the key", Form: configForm})
		}
		i += 2
		if i >= len(toks) || (isSeparator(toks[i]) && toks[i] != "[") {
			return fail(&ConfigError{Key: key, Reason: "missing value", Form: formOf(key)})
		}
		it := configItem{key: key, value: toks[i], index: i}
		i++
		if it.value == "[" {
			for {
				if i >= len(toks) {
					return fail(&ConfigError{Key: key, Reason: "missing ']'", Form: formOf(key)})
				}
				if toks[i] == "]" {
					i++
					break
				}
				if i+2 >= len(toks) || toks[i+1] != ":" || isSeparator(toks[i+2]) || (isSeparator(toks[i]) && toks[i] != ">") {
					return fail(&ConfigError{Key: key, Value: toks[i], Reason: "expected MB:N inside [...]", Form: formOf(key)})
				}
				it.list = append(it.list, [2]string{toks[i], toks[i+2]})
				i += 3
				switch {
				case i < len(toks) && toks[i] == ",":
					i++
				case i < len(toks) && toks[i] != "]":
					return fail(&ConfigError{Key: key, Value: toks[i], Reason: "expected ',' or ']'", Form: formOf(key)})
				}
			}
		}
		items = append(items, it)
		if i < len(toks) {
			if toks[i] != "," {
				return fail(&ConfigError{Key: key, Value: toks[i], Reason: "expected ',' between settings", Form: configForm})
			}
			i++
		}
	}
	return items, nil
}

// ParseConfig parses a PYTORCH_CUDA_ALLOC_CONF string such as
// "max_split_size_mb:128,expandable_segments:True" or
// "roundup_power2_divisions:[256:1,512:2,>:8]" as PyTorch 2.11 does: keys not
// mentioned keep PyTorch's defaults, whitespace around tokens is ignored, a
// trailing ',' is allowed, large_segment_size_mb is read before the keys it
// bounds, and each value is checked by the rule validate also applies to a
// Config built in code. Where PyTorch rejects a string with a message, the
// *ConfigError carries that message, the first one PyTorch meets
// (pytorchVerdict). Where PyTorch would silently read something else than is
// written (a negative size as the largest one, "128.5" as 128, "0.5x" as 0.5,
// "64 MB" as 64MB) or skip what stands where it expects ':' or ',', memlab
// refuses and says so; where PyTorch fails an internal check, memlab names
// what is wrong. On any error it returns the zero Config: nothing is
// half-applied.
func ParseConfig(s string) (Config, error) {
	// What PyTorch rejects with a message, memlab rejects with the same message.
	torch := pytorchVerdict(s)
	var ce *ConfigError
	if errors.As(torch, &ce) {
		return Config{}, ce
	}
	c, err := parseConfig(s)
	if err == nil && torch != nil {
		return Config{}, &ConfigError{Reason: torch.Error(), Form: configForm}
	}
	return c, err
}

// parseConfig is ParseConfig's own reading of s, stricter than PyTorch's: it
// refuses what PyTorch would skip or read otherwise than written.
func parseConfig(s string) (Config, error) {
	toks, spaced := tokenize(s)
	items, err := splitConfig(toks)
	if err != nil {
		return Config{}, err
	}
	c := DefaultConfig()
	c.raw, c.parsed = s, true
	var guess error // the first value PyTorch would reinterpret
	passes := []func(key string) bool{
		func(k string) bool { return k == "large_segment_size_mb" },
		func(k string) bool { return k != "large_segment_size_mb" && slices.Contains(acceleratorKeys, k) },
		func(k string) bool { return !slices.Contains(acceleratorKeys, k) },
	}
	for _, inPass := range passes {
		for _, it := range items {
			if !inPass(it.key) {
				continue
			}
			g, err := setKey(&c, it)
			if err == nil {
				err = c.checkKey(it.key)
			}
			if err != nil {
				var ce *ConfigError
				if errors.As(err, &ce) && ce.Value != "" && it.value != "[" {
					ce.Value = it.value // name the value as written
				}
				return Config{}, err
			}
			if guess == nil {
				guess = g
			}
		}
	}
	if guess == nil && spaced != "" {
		guess = &ConfigError{Value: spaced, Reason: fmt.Sprintf("whitespace inside a key or value (PyTorch reads it as %q)", strings.Join(strings.Fields(spaced), "")), Form: configForm}
	}
	if guess != nil {
		return Config{}, guess
	}
	// Every value was checked as written; from here on a zero field means the
	// default, as in a Config built in code (a caller may change fields). Only
	// an explicit per_process_memory_fraction:0 keeps its meaning: a cap at 0.
	c.given &= givenFraction
	return c, nil
}

func formOf(key string) string {
	switch key {
	case "backend":
		return "native"
	case "max_split_size_mb", "max_non_split_rounding_mb":
		return "a whole number of MiB >= large_segment_size_mb (20)"
	case "large_segment_size_mb":
		return "a whole number of MiB > 10"
	case "roundup_power2_divisions":
		return "a power of two N, or [MB:N,...,>:N] with power-of-two MB and N a power of two or 0"
	case "garbage_collection_threshold":
		return "a number in (0.0, 1.0)"
	case "per_process_memory_fraction":
		return "a number in [0.0, 1.0]"
	case "pinned_num_register_threads":
		return "a power of two from 1 to 128"
	case "pinned_reserve_segment_size_mb":
		return "a positive whole number of MiB"
	case "expandable_segments", "release_lock_on_cudamalloc", "release_lock_on_hipmalloc",
		"pinned_use_cuda_host_register", "pinned_use_hip_host_register",
		"pinned_use_background_threads", "graph_capture_record_stream_reuse":
		return "True or False"
	default:
		return "one of " + strings.Join(knownKeys, ", ")
	}
}

// parseUint reads a whole number as PyTorch's std::stoull does: an optional sign,
// digits, and whatever follows ignored; a negative number wraps around to a huge
// one. It returns the number PyTorch would use and, when that is not what is
// written, a *ConfigError saying so; an error when PyTorch would fail.
func parseUint(key, v string) (n uint64, guess, err error) {
	digits := strings.TrimPrefix(strings.TrimPrefix(v, "+"), "-")
	end := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(digits)
	}
	n, serr := stoull(v) // PyTorch's reading
	switch {
	case end == 0:
		return 0, nil, &ConfigError{Key: key, Value: v, Reason: "not a whole number", Form: formOf(key)}
	case serr != nil:
		return 0, nil, &ConfigError{Key: key, Value: v, Reason: "too large", Form: formOf(key)}
	}
	switch {
	case strings.HasPrefix(v, "-"):
		guess = &ConfigError{Key: key, Value: v, Reason: "negative (PyTorch reads it as the largest size; leave the key out for its default)", Form: formOf(key)}
	case end < len(digits):
		guess = &ConfigError{Key: key, Value: v, Reason: fmt.Sprintf("not a whole number (PyTorch reads it as %d)", n), Form: formOf(key)}
	}
	return n, guess, nil
}

// parseMB reads a size in MiB (parseUint), in bytes, capped as PyTorch caps it.
func parseMB(key, v string) (int64, error, error) {
	n, guess, err := parseUint(key, v)
	if err != nil {
		return 0, nil, err
	}
	if n > math.MaxInt64>>20 {
		n = math.MaxInt64 >> 20
	}
	return int64(n) << 20, guess, nil
}

// parseFloat reads a number as PyTorch's std::stod does: the longest prefix that
// is a number, the rest ignored (reported as a guess).
func parseFloat(key, v string) (f float64, guess, err error) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f, nil, nil
	}
	for end := len(v) - 1; end > 0; end-- {
		if f, err := strconv.ParseFloat(v[:end], 64); err == nil {
			return f, &ConfigError{Key: key, Value: v, Reason: fmt.Sprintf("not a number (PyTorch reads it as %s)", v[:end]), Form: formOf(key)}, nil
		}
	}
	return 0, nil, &ConfigError{Key: key, Value: v, Reason: "not a number", Form: formOf(key)}
}

// parseBool accepts exactly True and False, with ConfigTokenizer's message.
func parseBool(it configItem) (bool, error) {
	switch it.value {
	case "True":
		return true, nil
	case "False":
		return false, nil
	}
	return false, &ConfigError{Key: it.key, Value: it.value,
		Reason: fmt.Sprintf("Expected 'True' or 'False' at index %d in ConfigTokenizer but got '%s'", it.index, it.value), Form: "True or False"}
}

// setKey stores one item's value in c. It checks the value's syntax only; the
// rules on the value are checkKey's. It returns a *ConfigError as guess when
// PyTorch would read the value differently from how it is written.
func setKey(c *Config, it configItem) (guess, err error) {
	key, v := it.key, it.value
	if it.value == "[" && key != "roundup_power2_divisions" && slices.Contains(knownKeys, key) {
		return nil, &ConfigError{Key: key, Reason: "takes a single value, not a list", Form: formOf(key)}
	}
	var n uint64
	switch key {
	case "backend":
		c.Backend = v
	case "max_split_size_mb":
		c.MaxSplitSize, guess, err = parseMB(key, v)
		c.given |= givenMaxSplit
	case "max_non_split_rounding_mb":
		c.MaxNonSplitRounding, guess, err = parseMB(key, v)
		c.given |= givenNonSplit
	case "large_segment_size_mb":
		c.LargeSegmentSize, guess, err = parseMB(key, v)
		c.given |= givenLargeSegment
	case "garbage_collection_threshold":
		c.GarbageCollectionThreshold, guess, err = parseFloat(key, v)
		c.given |= givenGC
	case "per_process_memory_fraction":
		c.PerProcessMemoryFraction, guess, err = parseFloat(key, v)
		c.given |= givenFraction
	case "expandable_segments":
		c.ExpandableSegments, err = parseBool(it)
	case "release_lock_on_cudamalloc", "release_lock_on_hipmalloc":
		c.ReleaseLockOnCudaMalloc, err = parseBool(it)
	case "pinned_use_cuda_host_register", "pinned_use_hip_host_register":
		c.PinnedUseCudaHostRegister, err = parseBool(it)
	case "pinned_use_background_threads":
		c.PinnedUseBackgroundThreads, err = parseBool(it)
	case "graph_capture_record_stream_reuse":
		c.GraphCaptureRecordStreamReuse, err = parseBool(it)
	case "pinned_num_register_threads":
		n, guess, err = parseUint(key, v)
		c.PinnedNumRegisterThreads = int(min(n, math.MaxInt32))
		c.given |= givenThreads
	case "pinned_reserve_segment_size_mb":
		n, guess, err = parseUint(key, v)
		c.PinnedReserveSegmentSizeMB = int(min(n, math.MaxInt32))
		c.given |= givenReserve
	case "roundup_power2_divisions":
		return parseRoundup(c, it)
	default:
		return nil, unknownKey(key)
	}
	return guess, err
}

// unknownKey is PyTorch's error for a key it does not know.
func unknownKey(key string) *ConfigError {
	return &ConfigError{Key: key, Reason: fmt.Sprintf("Unrecognized key '%s' in CUDA allocator config.", key), Form: formOf(key)}
}

func isPow2(n uint64) bool { return n != 0 && n&(n-1) == 0 }

// parseRoundup reads roundup_power2_divisions. List semantics are PyTorch 2.11's
// (checked on the H200): the first entry also fills every lower interval, later
// entries set only their own, ">" fills every interval after the last explicit
// one, and intervals not covered keep 0.
func parseRoundup(c *Config, it configItem) (guess, err error) {
	const key = "roundup_power2_divisions"
	form := formOf(key)
	if it.value != "[" {
		n, g, err := parseUint(key, it.value)
		if err != nil {
			return nil, err
		}
		if !isPow2(n) || n > 1<<62 {
			return nil, &ConfigError{Key: key, Value: it.value, Reason: "For roundups, the divisions has to be power of 2", Form: form}
		}
		for k := range c.RoundupPower2Divisions {
			c.RoundupPower2Divisions[k] = int(n)
		}
		return g, nil
	}
	lastIndex := 0
	first := true
	for _, e := range it.list {
		v, g, err := parseUint(key, e[1])
		if err != nil {
			return nil, err
		}
		if v != 0 && !isPow2(v) || v > 1<<62 {
			return nil, &ConfigError{Key: key, Value: e[1], Reason: "For roundups, the divisions has to be power of 2 or 0 to disable roundup", Form: form}
		}
		guess = cmp.Or(guess, g)
		if e[0] == ">" {
			for j := lastIndex + 1; j < RoundupIntervals; j++ {
				c.RoundupPower2Divisions[j] = int(v)
			}
			continue
		}
		mb, g, err := parseUint(key, e[0])
		if err != nil {
			return nil, err
		}
		if !isPow2(mb) {
			return nil, &ConfigError{Key: key, Value: e[0], Reason: "For roundups, the intervals have to be power of 2", Form: form}
		}
		guess = cmp.Or(guess, g)
		idx := min(63-bits.LeadingZeros64(mb), RoundupIntervals-1)
		if first { // only the first entry also covers the intervals below it
			for j := 0; j < idx; j++ {
				c.RoundupPower2Divisions[j] = int(v)
			}
			first = false
		}
		c.RoundupPower2Divisions[idx] = int(v)
		lastIndex = idx
	}
	return guess, nil
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

// configRules holds the rule on each key's value: the one place each is checked,
// by ParseConfig as it reads the key (in PyTorch's order, so that the first error
// is PyTorch's) and by validate for a Config built in code. A zero field of a
// Config built in code means the key's default; written in a string it is a
// value, checked like any other (max_split_size_mb:0 is too small).
var configRules = []struct {
	key   string
	check func(*Config) error
}{
	{"large_segment_size_mb", (*Config).checkLargeSegment},
	{"max_split_size_mb", func(c *Config) error {
		return c.checkAtLeastLargeSegment("max_split_size_mb", c.MaxSplitSize, givenMaxSplit)
	}},
	{"max_non_split_rounding_mb", func(c *Config) error {
		return c.checkAtLeastLargeSegment("max_non_split_rounding_mb", c.MaxNonSplitRounding, givenNonSplit)
	}},
	{"garbage_collection_threshold", func(c *Config) error {
		g := c.GarbageCollectionThreshold
		if math.IsNaN(g) || g < 0 || g >= 1 || (g == 0 && c.given&givenGC != 0) {
			return c.ruleError("garbage_collection_threshold", g, "garbage_collect_threshold is invalid, set it in (0.0, 1.0)")
		}
		return nil
	}},
	{"roundup_power2_divisions", func(c *Config) error {
		for _, d := range c.RoundupPower2Divisions {
			if d < 0 || (d != 0 && !isPow2(uint64(d))) {
				return c.ruleError("roundup_power2_divisions", d, "For roundups, the divisions has to be power of 2 or 0 to disable roundup")
			}
		}
		return nil
	}},
	{"expandable_segments", func(c *Config) error {
		if c.ExpandableSegments && c.largeSegment()%RoundLarge != 0 {
			return &ConfigError{Key: "large_segment_size_mb", Value: strconv.FormatInt(c.largeSegment()>>20, 10),
				Reason: "expandable segments map pages of this size, which must be a multiple of the 2 MiB granularity (memlab's check; PyTorch fails when it maps the first page)",
				Form:   formOf("large_segment_size_mb")}
		}
		return nil
	}},
	{"backend", func(c *Config) error {
		switch c.Backend {
		case "", "native":
			return nil
		case "cudaMallocAsync", "hipMallocAsync":
			return c.ruleError("backend", c.Backend, "memlab models only the native caching allocator")
		}
		return c.ruleError("backend", c.Backend, "Unknown allocator backend, options are native and cudaMallocAsync")
	}},
	{"pinned_num_register_threads", func(c *Config) error {
		n := c.PinnedNumRegisterThreads
		switch {
		case n == 0 && c.given&givenThreads == 0:
			return nil
		case n <= 0 || !isPow2(uint64(n)):
			return c.ruleError("pinned_num_register_threads", n, fmt.Sprintf("Number of register threads has to be power of 2, got %d", n))
		case n > 128:
			return c.ruleError("pinned_num_register_threads", n, fmt.Sprintf("Number of register threads should be less than or equal to 128, got %d", n))
		}
		return nil
	}},
	{"pinned_reserve_segment_size_mb", func(c *Config) error {
		if n := c.PinnedReserveSegmentSizeMB; n < 0 || (n == 0 && c.given&givenReserve != 0) {
			return c.ruleError("pinned_reserve_segment_size_mb", n, "Pinned reserve segment size has to be greater than 0")
		}
		return nil
	}},
	{"per_process_memory_fraction", func(c *Config) error {
		if f := c.PerProcessMemoryFraction; math.IsNaN(f) || f < 0 || f > 1 {
			return c.ruleError("per_process_memory_fraction", f, "per_process_memory_fraction is invalid, set it in [0.0, 1.0]")
		}
		return nil
	}},
}

// ruleError is a rule's *ConfigError, naming the value (ParseConfig replaces it
// with the value as written).
func (c *Config) ruleError(key string, v any, reason string) error {
	return &ConfigError{Key: key, Value: fmt.Sprint(v), Reason: reason, Form: formOf(key)}
}

func (c *Config) checkLargeSegment() error {
	const key = "large_segment_size_mb"
	n := c.LargeSegmentSize
	switch {
	case n == 0 && c.given&givenLargeSegment == 0:
		return nil
	case n < 0:
		return c.ruleError(key, n, "negative")
	case n <= MinLargeAlloc:
		return c.ruleError(key, n>>20, "CachingAllocator option large_segment_size_mb must be > 10 MB")
	case n%(1<<20) != 0:
		return c.ruleError(key, n, "not a whole number of MiB (the option is in MiB)")
	}
	return nil
}

// checkAtLeastLargeSegment is the rule of max_split_size_mb and
// max_non_split_rounding_mb: at least the large segment size, in whole MiB.
func (c *Config) checkAtLeastLargeSegment(key string, n int64, bit keySet) error {
	switch {
	case n == 0 && c.given&bit == 0:
		return nil
	case n < 0:
		return c.ruleError(key, n, "negative")
	case n < c.largeSegment():
		return c.ruleError(key, n>>20, fmt.Sprintf("CachingAllocator option %s too small, must be >= %d", key, c.largeSegment()>>20))
	case n%(1<<20) != 0:
		return c.ruleError(key, n, "not a whole number of MiB (the option is in MiB)")
	}
	return nil
}

// checkKey applies the rule of one key (none for keys without one).
func (c *Config) checkKey(key string) error {
	for _, r := range configRules {
		if r.key == key {
			return r.check(c)
		}
	}
	return nil
}

// validate applies every rule to c: New's check of a Config built in code, the
// same rules ParseConfig applies to each key it reads.
func (c *Config) validate() error {
	for _, r := range configRules {
		if err := r.check(c); err != nil {
			return err
		}
	}
	return nil
}

var errNoVirtualMemory = errors.New("allocator: expandable_segments:True needs a Memory that implements VirtualMemory")
