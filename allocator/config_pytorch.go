package allocator

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// What PyTorch 2.11 does with a configuration string, step for step, so that
// ParseConfig rejects with PyTorch's own message whatever PyTorch rejects with a
// message (and in the same order: PyTorch reports the first error it meets).
// The order is PyTorch's, measured on the H200 against 527 random strings
// (reference/fidelity-2.11/settings.jsonl.gz; TestSettingsStringsMatchPyTorch):
// the CUDA keys first (c10/cuda/CUDAAllocatorConfig.cpp, where an unknown key is
// an error), then large_segment_size_mb wherever it stands, then the keys
// common to every accelerator (c10/core/AllocatorConfig.cpp). Both passes walk
// the tokens alike: a key, one token they take for ':' whatever it is, the
// value (a single token, or up to ']'), and one token they take for ','.

// torchInternal is PyTorch failing an internal check (an index past the end,
// an unclosed list, std::stoull or std::stod refusing a number): a
// RuntimeError meant for PyTorch's developers rather than a message for users.
type torchInternal struct{ what string }

func (e *torchInternal) Error() string {
	return "PyTorch fails an internal check here (" + e.what + ")"
}

// torchTokens is PyTorch's ConfigTokenizer: ',', ':', '[' and ']' are tokens
// of their own, whitespace is dropped without ending a token ("max split" is
// "maxsplit").
type torchTokens []string

func tokenizeTorch(s string) torchTokens {
	var toks torchTokens
	var cur []byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ',', ':', '[', ']':
			if len(cur) > 0 {
				toks = append(toks, string(cur))
				cur = cur[:0]
			}
			toks = append(toks, string(c))
		case ' ', '\t', '\n', '\v', '\f', '\r':
		default:
			cur = append(cur, c)
		}
	}
	if len(cur) > 0 {
		toks = append(toks, string(cur))
	}
	return toks
}

// at is ConfigTokenizer's operator[]: an index past the end is an internal error.
func (t torchTokens) at(i int) (string, error) {
	if i >= len(t) {
		return "", &torchInternal{"Index out of bounds in ConfigTokenizer"}
	}
	return t[i], nil
}

// stoull is C++'s std::stoull on a token: an optional sign, then digits, the
// rest ignored; a negative number wraps around.
func stoull(tok string) (uint64, error) {
	s := tok
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	end := 0
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == 0 {
		return 0, &torchInternal{"stoull"}
	}
	n, err := strconv.ParseUint(s[:end], 10, 64)
	if err != nil {
		return 0, &torchInternal{"stoull"}
	}
	if neg {
		n = -n
	}
	return n, nil
}

// stod is C++'s std::stod on a token: the longest prefix strtod reads
// (decimal, hexadecimal, inf, nan), the rest ignored; out of range is an error.
func stod(tok string) (float64, error) {
	s := tok
	sign := ""
	if s != "" && (s[0] == '+' || s[0] == '-') {
		sign, s = s[:1], s[1:]
	}
	low := strings.ToLower(s)
	switch {
	case strings.HasPrefix(low, "inf"):
		return strconv.ParseFloat(sign+"inf", 64)
	case strings.HasPrefix(low, "nan"):
		return math.NaN(), nil
	case strings.HasPrefix(low, "0x"):
		j := 2
		for j < len(s) && isHex(s[j]) {
			j++
		}
		if j < len(s) && s[j] == '.' {
			j++
			for j < len(s) && isHex(s[j]) {
				j++
			}
		}
		if j == 2 || (j == 3 && s[2] == '.') { // "0x" alone reads as 0
			return 0, nil
		}
		if k := exponentEnd(s, j, 'p'); k > j {
			return finite(strconv.ParseFloat(sign+s[:k], 64))
		}
		return finite(strconv.ParseFloat(sign+s[:j]+"p0", 64)) // Go wants a hexadecimal exponent
	}
	j, digits := 0, 0
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j, digits = j+1, digits+1
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j, digits = j+1, digits+1
		}
	}
	if digits == 0 {
		return 0, &torchInternal{"stod"}
	}
	return finite(strconv.ParseFloat(sign+s[:exponentEnd(s, j, 'e')], 64))
}

// exponentEnd returns where the exponent that starts at s[j] ends: after the
// marker (mark, either case), an optional sign and at least one digit; j when
// there is none, as strtod leaves "e", "e+" or "p-" unread.
func exponentEnd(s string, j int, mark byte) int {
	if j >= len(s) || (s[j] != mark && s[j] != mark-'a'+'A') {
		return j
	}
	k := j + 1
	if k < len(s) && (s[k] == '+' || s[k] == '-') {
		k++
	}
	if k >= len(s) || s[k] < '0' || s[k] > '9' {
		return j
	}
	for k < len(s) && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	return k
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// finite turns strconv's range errors (and an underflow to zero, which strtod
// reports as ERANGE too) into std::stod's out_of_range.
func finite(f float64, err error) (float64, error) {
	if err != nil {
		return 0, &torchInternal{"stod"}
	}
	return f, nil
}

// torchBool is ConfigTokenizer::toBool.
func (t torchTokens) torchBool(key string, i int) error {
	v, err := t.at(i)
	if err != nil || v == "True" || v == "False" {
		return err
	}
	return &ConfigError{Key: key, Value: v, Reason: fmt.Sprintf("Expected 'True' or 'False' at index %d in ConfigTokenizer but got '%s'", i, v), Form: "True or False"}
}

// skipKey is ConfigTokenizer::skipKey: past the token taken for ':' to the
// value, or to the ']' closing a list; it returns the index of the last token.
func (t torchTokens) skipKey(i int) (int, error) {
	if _, err := t.at(i + 1); err != nil {
		return 0, err
	}
	i += 2
	v, err := t.at(i)
	if err != nil || v != "[" {
		return i, err
	}
	for i++; i < len(t) && t[i] != "]"; i++ {
	}
	if i >= len(t) {
		return 0, &torchInternal{"Expected closing bracket ']' in ConfigTokenizer but reached end of config"}
	}
	return i, nil
}

// value returns the index and token of a key's value (after the token taken
// for ':').
func (t torchTokens) value(i int) (int, string, error) {
	if _, err := t.at(i + 1); err != nil {
		return 0, "", err
	}
	v, err := t.at(i + 2)
	return i + 2, v, err
}

// walk runs PyTorch's loop over the tokens: step handles the key at i and
// returns the index of its last token.
func (t torchTokens) walk(step func(key string, i int) (int, error)) error {
	for i := 0; i < len(t); i++ {
		end, err := step(t[i], i)
		if err != nil {
			return err
		}
		i = end
		if i+1 < len(t) {
			i++ // the token PyTorch takes for ','
		}
	}
	return nil
}

// pytorchVerdict returns what PyTorch 2.11 raises for the configuration
// string s: nil when it accepts it, a *ConfigError with PyTorch's message, or a
// *torchInternal.
func pytorchVerdict(s string) error {
	t := tokenizeTorch(s)
	cudaPass := func(key string, i int) (int, error) {
		switch key {
		case "backend":
			j, v, err := t.value(i)
			if err == nil && v != "native" && v != "cudaMallocAsync" {
				err = &ConfigError{Key: key, Value: v, Reason: "Unknown allocator backend, options are native and cudaMallocAsync", Form: formOf(key)}
			}
			if err == nil && v == "cudaMallocAsync" {
				err = &torchInternal{"Allocator backend parsed at runtime != allocator backend parsed at load time"}
			}
			return j, err
		case "release_lock_on_cudamalloc", "release_lock_on_hipmalloc", "pinned_use_cuda_host_register",
			"pinned_use_hip_host_register", "graph_capture_record_stream_reuse":
			return i + 2, t.torchBool(key, i+2)
		case "pinned_num_register_threads", "pinned_reserve_segment_size_mb":
			j, v, err := t.value(i)
			if err != nil {
				return 0, err
			}
			n, err := stoull(v)
			switch {
			case err != nil:
			case key == "pinned_reserve_segment_size_mb" && n == 0:
				err = &ConfigError{Key: key, Value: v, Reason: "Pinned reserve segment size has to be greater than 0", Form: formOf(key)}
			case key == "pinned_num_register_threads" && !isPow2(n):
				err = &ConfigError{Key: key, Value: v, Reason: fmt.Sprintf("Number of register threads has to be power of 2, got %d", n), Form: formOf(key)}
			case key == "pinned_num_register_threads" && n > 128:
				err = &ConfigError{Key: key, Value: v, Reason: fmt.Sprintf("Number of register threads should be less than or equal to 128, got %d", n), Form: formOf(key)}
			}
			return j, err
		case "per_process_memory_fraction":
			j, v, err := t.value(i)
			if err != nil {
				return 0, err
			}
			f, err := stod(v)
			if err == nil && !(f >= 0 && f <= 1) {
				err = &ConfigError{Key: key, Value: v, Reason: "per_process_memory_fraction is invalid, set it in [0.0, 1.0]", Form: formOf(key)}
			}
			return j, err
		}
		if !slices.Contains(acceleratorKeys, key) {
			return 0, unknownKey(key)
		}
		return t.skipKey(i)
	}
	if err := t.walk(cudaPass); err != nil {
		return err
	}
	largeSegment := uint64(20)
	for i, key := range t {
		if key != "large_segment_size_mb" {
			continue
		}
		_, v, err := t.value(i)
		if err != nil {
			return err
		}
		n, err := stoull(v)
		if err != nil {
			return err
		}
		if n <= 10 {
			return &ConfigError{Key: key, Value: v, Reason: "CachingAllocator option large_segment_size_mb must be > 10 MB", Form: formOf(key)}
		}
		largeSegment = n
	}
	accPass := func(key string, i int) (int, error) {
		switch key {
		case "large_segment_size_mb":
			return i + 2, nil // read above
		case "max_split_size_mb", "max_non_split_rounding_mb":
			j, v, err := t.value(i)
			if err != nil {
				return 0, err
			}
			n, err := stoull(v)
			if err == nil && n < largeSegment {
				err = &ConfigError{Key: key, Value: v, Reason: fmt.Sprintf("CachingAllocator option %s too small, must be >= %d", key, largeSegment), Form: formOf(key)}
			}
			return j, err
		case "garbage_collection_threshold":
			j, v, err := t.value(i)
			if err != nil {
				return 0, err
			}
			f, err := stod(v)
			if err == nil && !(f > 0 && f < 1) {
				err = &ConfigError{Key: key, Value: v, Reason: "garbage_collect_threshold is invalid, set it in (0.0, 1.0)", Form: formOf(key)}
			}
			return j, err
		case "expandable_segments", "pinned_use_background_threads":
			return i + 2, t.torchBool(key, i+2)
		case "roundup_power2_divisions":
			return t.torchRoundup(i)
		}
		return t.skipKey(i)
	}
	return t.walk(accPass)
}

// torchRoundup checks roundup_power2_divisions as
// AcceleratorAllocatorConfig::parseRoundUpPower2Divisions does.
func (t torchTokens) torchRoundup(i int) (int, error) {
	const key = "roundup_power2_divisions"
	i, v, err := t.value(i)
	if err != nil {
		return 0, err
	}
	if v != "[" {
		n, err := stoull(v)
		if err == nil && !isPow2(n) {
			err = &ConfigError{Key: key, Value: v, Reason: "For roundups, the divisions has to be power of 2", Form: formOf(key)}
		}
		return i, err
	}
	for i++; i < len(t) && t[i] != "]"; i++ {
		boundary := t[i]
		if _, err := t.at(i + 1); err != nil {
			return 0, err
		}
		i += 2
		v, err := t.at(i)
		if err != nil {
			return 0, err
		}
		n, err := stoull(v)
		if err != nil {
			return 0, err
		}
		if n != 0 && !isPow2(n) {
			return 0, &ConfigError{Key: key, Value: v, Reason: "For roundups, the divisions has to be power of 2 or 0 to disable roundup", Form: formOf(key)}
		}
		if boundary != ">" {
			b, err := stoull(boundary)
			if err != nil {
				return 0, err
			}
			if !isPow2(b) {
				return 0, &ConfigError{Key: key, Value: boundary, Reason: "For roundups, the intervals have to be power of 2", Form: formOf(key)}
			}
		}
		next, err := t.at(i + 1)
		if err != nil {
			return 0, err
		}
		if next != "]" {
			i++ // the token PyTorch takes for ','
		}
	}
	if i >= len(t) {
		return 0, &torchInternal{"Expected closing bracket ']' in ConfigTokenizer but reached end of config"}
	}
	return i, nil
}
