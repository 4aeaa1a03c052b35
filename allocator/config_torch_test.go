package allocator

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
)

// configCase is one PYTORCH_CUDA_ALLOC_CONF string, what PyTorch 2.11 does with
// it and what memlab does.
type configCase struct {
	conf string
	// torch is what PyTorch 2.11 did on the H200: "ok" (accepted), the message
	// of its ValueError, or "internal: WHY" when it fails in an internal
	// check (an index out of bounds, stoull) with no message meant for users.
	// TestConfigCasesAgreeWithPyTorch checks this column against the record
	// of allocator/testdata/pytorch_config.py.
	torch string
	// memlab is memlab's error where memlab rejects what PyTorch accepts (a
	// deliberate divergence: PyTorch would silently reinterpret the string),
	// or its own message where PyTorch fails internally; "" otherwise, and
	// then memlab accepts exactly when PyTorch does, with PyTorch's message.
	memlab string
	// check, if set, tests fields the recorded allocator_settings do not show.
	check func(Config) error
}

func wantField[T comparable](name string, got, want T) error {
	if got != want {
		return fmt.Errorf("%s = %v, want %v", name, got, want)
	}
	return nil
}

// configCases is the table of issue 12, extended to every rule of PyTorch's
// parser (c10/core/AllocatorConfig.{h,cpp}, c10/cuda/CUDAAllocatorConfig.cpp).
var configCases = []configCase{
	// Accepted.
	{conf: ``, torch: "ok"},
	{conf: `max_split_size_mb:128`, torch: "ok"},
	{conf: `max_split_size_mb:128,`, torch: "ok"},
	{conf: ` max_split_size_mb : 200 , expandable_segments:True `, torch: "ok"},
	{conf: `max_split_size_mb:20`, torch: "ok"},
	{conf: `max_split_size_mb:64,max_split_size_mb:128`, torch: "ok"},
	{conf: `max_split_size_mb:99999999999`, torch: "ok"},
	{conf: `roundup_power2_divisions:4`, torch: "ok"},
	{conf: `roundup_power2_divisions:[1:2,]`, torch: "ok"},
	{conf: `roundup_power2_divisions:[]`, torch: "ok"},
	{conf: `roundup_power2_divisions:[256:1,512:2,1024:4,>:8]`, torch: "ok"},
	{conf: `roundup_power2_divisions:[1:2,32:4,>:8]`, torch: "ok"},
	{conf: `roundup_power2_divisions:[>:4]`, torch: "ok"},
	{conf: `roundup_power2_divisions:[64:8,256:0]`, torch: "ok"},
	{conf: `garbage_collection_threshold:0.6`, torch: "ok"},
	{conf: `expandable_segments:True`, torch: "ok"},
	{conf: `expandable_segments:False`, torch: "ok"},
	{conf: `large_segment_size_mb:40`, torch: "ok", check: func(c Config) error { return wantField("LargeSegmentSize", c.LargeSegmentSize, 40<<20) }},
	{conf: `large_segment_size_mb:11`, torch: "ok", check: func(c Config) error { return wantField("LargeSegmentSize", c.LargeSegmentSize, 11<<20) }},
	{conf: `large_segment_size_mb:32,max_split_size_mb:32`, torch: "ok"},
	{conf: `max_split_size_mb:32,large_segment_size_mb:32`, torch: "ok"},
	{conf: `max_non_split_rounding_mb:64`, torch: "ok", check: func(c Config) error { return wantField("MaxNonSplitRounding", c.MaxNonSplitRounding, 64<<20) }},
	{conf: `per_process_memory_fraction:0.5`, torch: "ok", check: func(c Config) error { return wantField("PerProcessMemoryFraction", c.PerProcessMemoryFraction, 0.5) }},
	{conf: `backend:native,release_lock_on_cudamalloc:True,pinned_num_register_threads:8`, torch: "ok"},
	{conf: `pinned_use_cuda_host_register:True,pinned_use_background_threads:True,graph_capture_record_stream_reuse:True`, torch: "ok"},
	{conf: `pinned_reserve_segment_size_mb:16`, torch: "ok", check: func(c Config) error { return wantField("PinnedReserveSegmentSizeMB", c.PinnedReserveSegmentSizeMB, 16) }},

	// Rejected with a message: memlab's error carries PyTorch's.
	{conf: `max_split_size_mb:0`, torch: "CachingAllocator option max_split_size_mb too small, must be >= 20"},
	{conf: `max_split_size_mb:19`, torch: "CachingAllocator option max_split_size_mb too small, must be >= 20"},
	{conf: `max_split_size_mb:1.5`, torch: "CachingAllocator option max_split_size_mb too small, must be >= 20"},
	{conf: `max_non_split_rounding_mb:0`, torch: "CachingAllocator option max_non_split_rounding_mb too small, must be >= 20"},
	{conf: `large_segment_size_mb:32,max_split_size_mb:24`, torch: "CachingAllocator option max_split_size_mb too small, must be >= 32"},
	{conf: `large_segment_size_mb:32,max_non_split_rounding_mb:24`, torch: "CachingAllocator option max_non_split_rounding_mb too small, must be >= 32"},
	{conf: `large_segment_size_mb:10`, torch: "CachingAllocator option large_segment_size_mb must be > 10 MB"},
	{conf: `,max_split_size_mb:64`, torch: "Unrecognized key ',' in CUDA allocator config."},
	{conf: `a:1,,b:2`, torch: "Unrecognized key 'a' in CUDA allocator config."},
	{conf: `max_split_size_mb:64,,expandable_segments:True`, torch: "Unrecognized key ',' in CUDA allocator config."},
	{conf: `foo:1`, torch: "Unrecognized key 'foo' in CUDA allocator config."},
	{conf: `expandable_segments:true`, torch: "Expected 'True' or 'False' at index 2 in ConfigTokenizer but got 'true'"},
	{conf: `max_split_size_mb:128,expandable_segments:1`, torch: "Expected 'True' or 'False' at index 6 in ConfigTokenizer but got '1'"},
	{conf: `release_lock_on_cudamalloc:yes`, torch: "Expected 'True' or 'False' at index 2 in ConfigTokenizer but got 'yes'"},
	{conf: `roundup_power2_divisions:3`, torch: "For roundups, the divisions has to be power of 2"},
	{conf: `roundup_power2_divisions:0`, torch: "For roundups, the divisions has to be power of 2"},
	{conf: `roundup_power2_divisions:[256:3]`, torch: "For roundups, the divisions has to be power of 2 or 0 to disable roundup"},
	{conf: `roundup_power2_divisions:[3:4]`, torch: "For roundups, the intervals have to be power of 2"},
	{conf: `garbage_collection_threshold:1.0`, torch: "garbage_collect_threshold is invalid, set it in (0.0, 1.0)"},
	{conf: `garbage_collection_threshold:0`, torch: "garbage_collect_threshold is invalid, set it in (0.0, 1.0)"},
	{conf: `per_process_memory_fraction:1.5`, torch: "per_process_memory_fraction is invalid, set it in [0.0, 1.0]"},
	{conf: `pinned_num_register_threads:3`, torch: "Number of register threads has to be power of 2, got 3"},
	{conf: `pinned_num_register_threads:256`, torch: "Number of register threads should be less than or equal to 128, got 256"},
	{conf: `pinned_reserve_segment_size_mb:0`, torch: "Pinned reserve segment size has to be greater than 0"},
	{conf: `backend:foo`, torch: "Unknown allocator backend, options are native and cudaMallocAsync"},

	// PyTorch fails in an internal check; memlab names what is missing.
	{conf: `max_split_size_mb:`, torch: "internal: Index out of bounds in ConfigTokenizer", memlab: `config key "max_split_size_mb": missing value`},
	{conf: `max_split_size_mb`, torch: "internal: Index out of bounds in ConfigTokenizer", memlab: `config key "max_split_size_mb": expected ':' after the key`},
	{conf: `max_split_size_mb:abc`, torch: "internal: stoull", memlab: `config key "max_split_size_mb" value "abc": not a whole number`},
	{conf: `max_split_size_mb:99999999999999999999999`, torch: "internal: stoull", memlab: `config key "max_split_size_mb" value "99999999999999999999999": too large`},
	{conf: `roundup_power2_divisions:[256:1`, torch: "internal: Expected closing bracket ']' in ConfigTokenizer but reached end of config", memlab: `config key "roundup_power2_divisions": missing ']'`},

	// PyTorch accepts by reinterpreting; memlab refuses rather than guess.
	{conf: `max_split_size_mb:-1`, torch: "ok", memlab: `config key "max_split_size_mb" value "-1": negative (PyTorch reads it as the largest size; leave the key out for its default)`},
	{conf: `max_split_size_mb:128.5`, torch: "ok", memlab: `config key "max_split_size_mb" value "128.5": not a whole number (PyTorch reads it as 128)`},
	{conf: `garbage_collection_threshold:0.5x`, torch: "ok", memlab: `config key "garbage_collection_threshold" value "0.5x": not a number (PyTorch reads it as 0.5)`},
	{conf: `max_split_size_mb:128]`, torch: "ok", memlab: `config key "max_split_size_mb" value "]": expected ',' between settings`},

	// PyTorch chooses its backend when it loads, so the recorder (which sets the
	// variable after import) sees an internal check; memlab has no other backend.
	{conf: `backend:cudaMallocAsync`, torch: "internal: Allocator backend parsed at runtime != allocator backend parsed at load time", memlab: `config key "backend" value "cudaMallocAsync": memlab models only the native caching allocator`},
}

// pytorchConfig is what PyTorch 2.11 did with each configCases string, as
// allocator/testdata/pytorch_config.py recorded it on the H200.
//
//go:embed testdata/pytorch-config.json
var pytorchConfig []byte

// recordedConfig is one case of pytorch-config.json: the error PyTorch raised
// (its type and message), or the allocator_settings of a snapshot taken
// after the first allocation.
type recordedConfig struct {
	Error    string         `json:"error"`
	Type     string         `json:"type"`
	Settings map[string]any `json:"settings"`
}

func loadRecordedConfigs(t *testing.T) (string, map[string]recordedConfig) {
	t.Helper()
	var rec struct {
		Torch  string                    `json:"torch"`
		Device string                    `json:"device"`
		Cases  map[string]recordedConfig `json:"cases"`
	}
	if err := json.Unmarshal(pytorchConfig, &rec); err != nil {
		t.Fatalf("testdata/pytorch-config.json: %v", err)
	}
	if !strings.HasPrefix(rec.Torch, "2.11") || len(rec.Cases) == 0 {
		t.Fatalf("testdata/pytorch-config.json records torch %q with %d cases; want 2.11 and the table", rec.Torch, len(rec.Cases))
	}
	return rec.Torch, rec.Cases
}

// TestConfigCasesAgreeWithPyTorch checks the torch column of configCases
// against what PyTorch 2.11 did, so that the table cannot drift from PyTorch.
func TestConfigCasesAgreeWithPyTorch(t *testing.T) {
	version, rec := loadRecordedConfigs(t)
	for _, c := range configCases {
		r, ok := rec[c.conf]
		if !ok {
			t.Errorf("%q: not recorded: run allocator/testdata/pytorch_config.py where torch and a GPU are", c.conf)
			continue
		}
		var got string
		switch {
		case r.Error == "":
			got = "ok"
		case r.Type == "ValueError" && !strings.Contains(r.Error, "INTERNAL ASSERT") && r.Error != "stoull":
			got = r.Error
		default:
			got = "internal: " + r.Error
		}
		if c.torch != got && !(strings.HasPrefix(c.torch, "internal: ") && strings.HasPrefix(got, "internal: ") && strings.Contains(got, strings.TrimPrefix(c.torch, "internal: "))) {
			t.Errorf("%q: table says PyTorch gives %q, PyTorch %s gave %q (%s)", c.conf, c.torch, version, got, r.Type)
		}
	}
}

// TestConfigCases checks memlab's parser against the table: the same verdict
// as PyTorch with PyTorch's message, the deliberate divergences with theirs,
// and for accepted strings the same settings as PyTorch recorded.
func TestConfigCases(t *testing.T) {
	_, rec := loadRecordedConfigs(t)
	for _, c := range configCases {
		t.Run(c.conf, func(t *testing.T) {
			cfg, err := ParseConfig(c.conf)
			switch {
			case c.memlab != "":
				if err == nil || !strings.Contains(err.Error(), c.memlab) {
					t.Fatalf("ParseConfig = %v; want an error containing %q", err, c.memlab)
				}
				return
			case c.torch != "ok":
				if err == nil || !strings.Contains(err.Error(), c.torch) {
					t.Fatalf("ParseConfig = %v; want an error containing PyTorch's %q", err, c.torch)
				}
				if !strings.HasPrefix(err.Error(), "allocator: config") {
					t.Fatalf("error %q does not start with allocator: config", err)
				}
				return
			case err != nil:
				t.Fatalf("ParseConfig: %v; PyTorch accepts it", err)
			}
			if c.check != nil {
				if err := c.check(cfg); err != nil {
					t.Error(err)
				}
			}
			if r, ok := rec[c.conf]; ok && r.Settings != nil {
				if err := sameSettings(cfg, r.Settings); err != nil {
					t.Error(err)
				}
			}
			// A parsed Config passes the validation New applies, and renders
			// to a string that parses back to the same settings.
			if err := cfg.validate(); err != nil {
				t.Fatalf("validate of a parsed Config: %v", err)
			}
			back, err := ParseConfig(cfg.String())
			if err != nil {
				t.Fatalf("ParseConfig(String() = %q): %v", cfg.String(), err)
			}
			if !equivalentConfigs(back, cfg) {
				t.Fatalf("String() = %q parses to %+v, want %+v", cfg.String(), back, cfg)
			}
		})
	}
}

// sameSettings compares a Config with PyTorch's allocator_settings.
func sameSettings(c Config, s map[string]any) error {
	var errs []string
	num := func(k string) (float64, bool) {
		v, ok := s[k].(float64)
		return v, ok
	}
	if v, ok := num("max_split_size"); ok {
		want := int64(v)
		got := c.MaxSplitSize
		if got == 0 || v < 0 || v >= math.MaxInt64 {
			got, want = c.maxSplit(), int64(math.MaxInt64)
			if v > 0 && v < math.MaxInt64 {
				want = int64(v)
			}
		}
		if got != want && !(want == math.MaxInt64 && got >= math.MaxInt64>>20<<20) {
			errs = append(errs, fmt.Sprintf("max_split_size: memlab %d, PyTorch %v", got, v))
		}
	}
	if v, ok := num("garbage_collection_threshold"); ok && v != c.GarbageCollectionThreshold {
		errs = append(errs, fmt.Sprintf("garbage_collection_threshold: memlab %v, PyTorch %v", c.GarbageCollectionThreshold, v))
	}
	if v, ok := num("pinned_num_register_threads"); ok && int(v) != max(c.PinnedNumRegisterThreads, 1) {
		errs = append(errs, fmt.Sprintf("pinned_num_register_threads: memlab %d, PyTorch %v", c.PinnedNumRegisterThreads, v))
	}
	for k, got := range map[string]bool{
		"expandable_segments":               c.ExpandableSegments,
		"release_lock_on_cudamalloc":        c.ReleaseLockOnCudaMalloc,
		"pinned_use_cuda_host_register":     c.PinnedUseCudaHostRegister,
		"graph_capture_record_stream_reuse": c.GraphCaptureRecordStreamReuse,
	} {
		if v, ok := s[k].(bool); ok && v != got {
			errs = append(errs, fmt.Sprintf("%s: memlab %v, PyTorch %v", k, got, v))
		}
	}
	if rp, ok := s["roundup_power2_divisions"].(map[string]any); ok {
		for k := 0; k < RoundupIntervals; k++ {
			v, _ := rp[strconv.Itoa(1<<k)].(float64)
			if int(v) != c.RoundupPower2Divisions[k] {
				errs = append(errs, fmt.Sprintf("roundup_power2_divisions: memlab %v, PyTorch %v", c.RoundupPower2Divisions, rp))
				break
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("settings differ from PyTorch's: %s", strings.Join(errs, "; "))
	}
	return nil
}

// TestStod: stod reads the longest prefix C's strtod reads, as glibc's strtod
// did on these tokens (decimal and hexadecimal, with and without an exponent,
// an exponent marker with no digits left unread); out of range and no number
// at all are std::stod's errors.
func TestStod(t *testing.T) {
	for _, c := range []struct {
		tok  string
		want float64
	}{
		{"0x1p-2", 0.25}, {"0x1P+3x", 8}, {"0x1p", 1}, {"0x1p+", 1}, {"0x1.8", 1.5}, {"0x.8p1", 1},
		{"-0x10", -16}, {"0x", 0}, {"0x.", 0},
		{"1e3", 1000}, {"1e", 1}, {"1E+", 1}, {"1.5e+2z", 150}, {"-.5e-1", -0.05}, {"12abc", 12},
		{"+inf", math.Inf(1)},
	} {
		if got, err := stod(c.tok); err != nil || got != c.want {
			t.Errorf("stod(%q) = %v, %v; want %v", c.tok, got, err, c.want)
		}
	}
	if got, err := stod("nan"); err != nil || !math.IsNaN(got) {
		t.Errorf("stod(\"nan\") = %v, %v; want NaN", got, err)
	}
	for _, tok := range []string{".", "abc", "", "1e400", "0x1p5000"} {
		if got, err := stod(tok); err == nil {
			t.Errorf("stod(%q) = %v; want std::stod's error", tok, got)
		}
	}
}
