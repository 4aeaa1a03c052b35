package allocator

import (
	"cmp"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
)

// unsetenv unsets k for the test; t.Setenv restores the original value afterwards.
func unsetenv(t *testing.T, k string) {
	t.Setenv(k, "")
	os.Unsetenv(k)
}

func TestRoundSize(t *testing.T) {
	const MiB = 1 << 20
	d4, _ := ParseConfig("roundup_power2_divisions:4")
	list, _ := ParseConfig("roundup_power2_divisions:[256:1,512:2,1024:4,>:8]")
	def := DefaultConfig()
	tests := []struct {
		name string
		cfg  Config
		in   int64
		want int64
	}{
		{"tiny rounds to 512", def, 1, 512},
		{"511", def, 511, 512},
		{"512 stays", def, 512, 512},
		{"513 to 1024", def, 513, 1024},
		{"1 MiB stays", def, MiB, MiB},
		{"1 MiB + 1", def, MiB + 1, MiB + 512},
		{"1200 with 4 divisions is 1536, not the docs' 1280", d4, 1200, 1536},
		{"2049 with 4 divisions", d4, 2049, 2560},
		{"3000 with 4 divisions", d4, 3000, 3072},
		{"1000000 with 4 divisions", d4, 1000000, 1048576},
		{"1 MiB + 1 with 4 divisions crosses to large", d4, MiB + 1, 1310720},
		{"300 MiB + 1 with 4 divisions", d4, 300*MiB + 1, 320 * MiB},
		{"769 MiB with 4 divisions", d4, 769 * MiB, 896 * MiB},
		{"768 MiB with 4 divisions", d4, 768 * MiB, 768 * MiB},
		{"list: 300 MiB+1 in a 1-division interval", list, 300*MiB + 1, 300*MiB + 512},
		{"list: 600 MiB+1 with 2 divisions", list, 600*MiB + 1, 768 * MiB},
		{"list: 1.1 GiB with 4 divisions", list, 1100 * MiB, 1280 * MiB},
		{"list: 3 GiB+1 with 8 divisions", list, 3*1024*MiB + 1, 3*1024*MiB + 256*MiB},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RoundSize(tc.in, tc.cfg); got != tc.want {
				t.Errorf("RoundSize(%d) = %d, want %d", tc.in, got, tc.want)
			}
		})
	}
}

func TestFormatSize(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{
		{0, "0 bytes"}, {1024, "1024 bytes"}, {1025, "1.00 KiB"}, {1536, "1.50 KiB"},
		{1 << 20, "1024.00 KiB"}, {1<<20 + 1, "1.00 MiB"}, {20 << 20, "20.00 MiB"},
		{1 << 30, "1024.00 MiB"}, {1<<30 + 1, "1.00 GiB"}, {150109880320, "139.80 GiB"},
	}
	for _, tc := range tests {
		if got := FormatSize(tc.in); got != tc.want {
			t.Errorf("FormatSize(%d) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		in    string
		check func(Config) bool
	}{
		{"", func(c Config) bool { return c.maxSplit() > 1<<62 && !c.ExpandableSegments }},
		{"max_split_size_mb:128", func(c Config) bool { return c.MaxSplitSize == 128<<20 }},
		{"max_split_size_mb:20", func(c Config) bool { return c.MaxSplitSize == 20<<20 }},
		{" max_split_size_mb : 200 , expandable_segments:True ", func(c Config) bool { return c.MaxSplitSize == 200<<20 && c.ExpandableSegments }},
		{"roundup_power2_divisions:4", func(c Config) bool {
			return c.RoundupPower2Divisions == [16]int{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}
		}},
		{"roundup_power2_divisions:[256:1,512:2,1024:4,>:8]", func(c Config) bool {
			return c.RoundupPower2Divisions == [16]int{1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 4, 8, 8, 8, 8, 8}
		}},
		{"roundup_power2_divisions:[1:4,>:2]", func(c Config) bool {
			return c.RoundupPower2Divisions == [16]int{4, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}
		}},
		{"roundup_power2_divisions:[1:2,32:4,>:8]", func(c Config) bool { // as PyTorch 2.11 reports it
			return c.RoundupPower2Divisions == [16]int{2, 0, 0, 0, 0, 4, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8}
		}},
		{"roundup_power2_divisions:[64:8,256:0]", func(c Config) bool {
			return c.RoundupPower2Divisions == [16]int{8, 8, 8, 8, 8, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0}
		}},
		{"garbage_collection_threshold:0.6", func(c Config) bool { return c.GarbageCollectionThreshold == 0.6 }},
		{"per_process_memory_fraction:0.5", func(c Config) bool { return c.PerProcessMemoryFraction == 0.5 }},
		{"per_process_memory_fraction:0", func(c Config) bool { f, ok := c.memoryFraction(); return ok && f == 0 }},
		{"per_process_memory_fraction:1", func(c Config) bool { _, ok := c.memoryFraction(); return !ok }},
		{"max_non_split_rounding_mb:64", func(c Config) bool { return c.MaxNonSplitRounding == 64<<20 }},
		{"large_segment_size_mb:40", func(c Config) bool { return c.LargeSegmentSize == 40<<20 }},
		{"backend:native,release_lock_on_cudamalloc:True,pinned_num_register_threads:8", func(c Config) bool {
			return c.ReleaseLockOnCudaMalloc && c.PinnedNumRegisterThreads == 8
		}},
		{"pinned_use_cuda_host_register:True,pinned_use_background_threads:True,graph_capture_record_stream_reuse:True", func(c Config) bool {
			return c.PinnedUseCudaHostRegister && c.PinnedUseBackgroundThreads && c.GraphCaptureRecordStreamReuse
		}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			c, err := ParseConfig(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(c) {
				t.Fatalf("ParseConfig(%q) = %+v", tc.in, c)
			}
			if c.Source() != tc.in {
				t.Errorf("Source() = %q", c.Source())
			}
			// String renders an equivalent configuration.
			back, err := ParseConfig(c.String())
			if err != nil {
				t.Fatalf("re-parsing String() %q: %v", c.String(), err)
			}
			if !equivalentConfigs(back, c) {
				t.Errorf("String() %q parses to %+v, want %+v", c.String(), back, c)
			}
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		in      string
		key     string // must be named in the error
		message string // must appear in the error
	}{
		{"foo:1", "foo", "Unrecognized key 'foo' in CUDA allocator config."},
		{"max_split_size_mb:19", "max_split_size_mb", "must be >= 20"},
		{"max_split_size_mb:abc", "max_split_size_mb", "not a whole number"},
		{"max_split_size_mb:-5", "max_split_size_mb", "negative (PyTorch reads it as the largest size"},
		{"max_split_size_mb", "max_split_size_mb", "expected ':'"},
		{"max_split_size_mb:", "max_split_size_mb", "missing value"},
		// PyTorch joins "128 expandable_segments" into one token and reads the ':'
		// after it as the ',' it expects, so the next key is "True".
		{"max_split_size_mb:128 expandable_segments:True", "True", "Unrecognized key 'True' in CUDA allocator config."},
		{"expandable_segments:true", "expandable_segments", "Expected 'True' or 'False' at index 2 in ConfigTokenizer but got 'true'"},
		{"expandable_segments:1", "expandable_segments", "True or False"},
		{"roundup_power2_divisions:3", "roundup_power2_divisions", "the divisions has to be power of 2"},
		{"roundup_power2_divisions:0", "roundup_power2_divisions", "the divisions has to be power of 2"},
		{"roundup_power2_divisions:[3:4]", "roundup_power2_divisions", "the intervals have to be power of 2"},
		{"roundup_power2_divisions:[256:3]", "roundup_power2_divisions", "power of 2 or 0"},
		{"roundup_power2_divisions:[256:4", "roundup_power2_divisions", "missing ']'"},
		{"roundup_power2_divisions:[256]", "roundup_power2_divisions", "expected MB:N"},
		{"garbage_collection_threshold:1.0", "garbage_collection_threshold", "set it in (0.0, 1.0)"},
		{"garbage_collection_threshold:0", "garbage_collection_threshold", "set it in (0.0, 1.0)"},
		{"per_process_memory_fraction:1.5", "per_process_memory_fraction", "set it in [0.0, 1.0]"},
		{"large_segment_size_mb:10", "large_segment_size_mb", "must be > 10 MB"},
		{"pinned_num_register_threads:3", "pinned_num_register_threads", "power of 2"},
		{"backend:cudaMallocAsync", "backend", "only the native"},
		{"backend:magic", "backend", "Unknown allocator backend"},
		{":5", ":", "Unrecognized key ':' in CUDA allocator config."},
		{"max_split_size_mb:[64:1]", "max_split_size_mb", "takes a single value, not a list"},
		{"max_non_split_rounding_mb:-1", "max_non_split_rounding_mb", "negative (PyTorch reads it as the largest size"},
		{"pinned_num_register_threads:8x", "pinned_num_register_threads", "not a whole number (PyTorch reads it as 8)"},
		{"roundup_power2_divisions:[256:4x]", "roundup_power2_divisions", `value "4x": not a whole number (PyTorch reads it as 4)`},
		{"per_process_memory_fraction:0.5.5", "per_process_memory_fraction", "not a number (PyTorch reads it as 0.5)"},
		{"garbage_collection_threshold:nan", "garbage_collection_threshold", "set it in (0.0, 1.0)"},
		// PyTorch reads the CUDA keys first, where an unknown key is an error.
		{"foo:1,max_split_size_mb:0", "foo", "Unrecognized key 'foo' in CUDA allocator config."},
		{"max_split_size_mb:0,max_split_size_mb:128", "max_split_size_mb", "too small, must be >= 20"},
		{"pinned_num_register_threads:0", "pinned_num_register_threads", "has to be power of 2, got 0"},
		{"large_segment_size_mb:0", "large_segment_size_mb", "must be > 10 MB"},
		{"large_segment_size_mb:11,expandable_segments:True", "large_segment_size_mb", "multiple of the 2 MiB granularity"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			c, err := ParseConfig(tc.in)
			if err == nil {
				t.Fatalf("ParseConfig(%q) succeeded: %+v", tc.in, c)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not a *ConfigError", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "allocator: ") {
				t.Errorf("error %q lacks the package prefix", msg)
			}
			if tc.key != "" && !strings.Contains(msg, `"`+tc.key+`"`) {
				t.Errorf("error %q does not name key %q", msg, tc.key)
			}
			if !strings.Contains(msg, tc.message) {
				t.Errorf("error %q does not say %q", msg, tc.message)
			}
			if !strings.Contains(msg, "accepted: ") {
				t.Errorf("error %q does not give the accepted form", msg)
			}
			if c != (Config{}) {
				t.Errorf("half-applied config returned: %+v", c)
			}
		})
	}
}

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantMS  int64
		wantErr string
	}{
		{"none set", nil, 0, ""},
		{"PYTORCH_ALLOC_CONF", map[string]string{"PYTORCH_ALLOC_CONF": "max_split_size_mb:30"}, 30 << 20, ""},
		{"CUDA beats generic", map[string]string{"PYTORCH_ALLOC_CONF": "max_split_size_mb:30", "PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:40"}, 40 << 20, ""},
		{"memlab beats all", map[string]string{"MEMLAB_ALLOC_CONF": "max_split_size_mb:50", "PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:40"}, 50 << 20, ""},
		{"empty memlab wins", map[string]string{"MEMLAB_ALLOC_CONF": "", "PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:40"}, 0, ""},
		{"malformed names variable", map[string]string{"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:x"}, 0, "PYTORCH_CUDA_ALLOC_CONF: allocator: config key \"max_split_size_mb\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range envVars {
				unsetenv(t, v)
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			c, err := ConfigFromEnv()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.MaxSplitSize != tc.wantMS {
				t.Errorf("MaxSplitSize = %d, want %d", c.MaxSplitSize, tc.wantMS)
			}
		})
	}
}

func TestConfigValidateInCode(t *testing.T) {
	mem := newFakeMemory(1 << 30)
	// Each Config built in code is refused by New with the message the same
	// rule gives a parsed string (a Config cannot hold a value its String
	// would render differently, such as 1 byte as max_non_split_rounding_mb:0).
	bad := []struct {
		c    Config
		want string
	}{
		{Config{MaxSplitSize: 1 << 20}, "CachingAllocator option max_split_size_mb too small, must be >= 20"},
		{Config{MaxSplitSize: -1}, `config key "max_split_size_mb" value "-1": negative`},
		{Config{MaxSplitSize: 24 << 20, LargeSegmentSize: 32 << 20}, "CachingAllocator option max_split_size_mb too small, must be >= 32"},
		{Config{MaxSplitSize: 25<<20 + 1}, "not a whole number of MiB"},
		{Config{MaxNonSplitRounding: 1}, "CachingAllocator option max_non_split_rounding_mb too small, must be >= 20"},
		{Config{MaxNonSplitRounding: 24 << 20, LargeSegmentSize: 32 << 20}, "max_non_split_rounding_mb too small, must be >= 32"},
		{Config{GarbageCollectionThreshold: 1}, "set it in (0.0, 1.0)"},
		{Config{GarbageCollectionThreshold: math.NaN()}, "set it in (0.0, 1.0)"},
		{Config{PerProcessMemoryFraction: 2}, "set it in [0.0, 1.0]"},
		{Config{RoundupPower2Divisions: [16]int{3}}, "power of 2 or 0"},
		{Config{LargeSegmentSize: 5 << 20}, "large_segment_size_mb must be > 10 MB"},
		{Config{LargeSegmentSize: 11 << 20, ExpandableSegments: true}, "multiple of the 2 MiB granularity"},
		{Config{PinnedNumRegisterThreads: 3}, "has to be power of 2, got 3"},
		{Config{PinnedNumRegisterThreads: 256}, "less than or equal to 128, got 256"},
		{Config{PinnedReserveSegmentSizeMB: -1}, "greater than 0"},
		{Config{Backend: "cudaMallocAsync"}, "only the native"},
		{Config{Backend: "magic"}, "Unknown allocator backend"},
	}
	for _, tc := range bad {
		_, err := New(mem, tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "allocator: config key") {
			t.Errorf("New(%+v) = %v; want an error containing %q", tc.c, err, tc.want)
		}
	}
	for _, c := range []Config{{}, DefaultConfig(), {LargeSegmentSize: 11 << 20}, {MaxSplitSize: 32 << 20, LargeSegmentSize: 32 << 20}} {
		if _, err := New(mem, c); err != nil {
			t.Errorf("New(%+v): %v", c, err)
		}
	}
}

// TestRoundupStringRoundTrip checks that any table of divisions survives String and
// ParseConfig, despite the parser's fill rules.
func TestRoundupStringRoundTrip(t *testing.T) {
	vals := []int{0, 1, 2, 4, 8, 16}
	seed := uint32(1)
	for n := 0; n < 2000; n++ {
		var c Config
		for i := range c.RoundupPower2Divisions {
			seed = seed*1664525 + 1013904223
			c.RoundupPower2Divisions[i] = vals[(seed>>16)%uint32(len(vals))]
			if seed>>30 == 0 && i > 0 { // runs of equal values
				c.RoundupPower2Divisions[i] = c.RoundupPower2Divisions[i-1]
			}
		}
		s := c.String()
		back, err := ParseConfig(s)
		if err != nil {
			t.Fatalf("%v: String() %q does not parse: %v", c.RoundupPower2Divisions, s, err)
		}
		want := c.RoundupPower2Divisions
		if s == "" { // all 0 or all 1: both mean no rounding
			for i := range want {
				want[i] = 0
			}
		}
		if back.RoundupPower2Divisions != want {
			t.Fatalf("%v renders as %q, which parses to %v", c.RoundupPower2Divisions, s, back.RoundupPower2Divisions)
		}
	}
}

// equivalentConfigs reports whether a and b configure the allocator alike:
// equal settings once the defaults are spelt out, whatever string (if any)
// they came from.
func equivalentConfigs(a, b Config) bool {
	norm := func(x Config) Config {
		f, ok := x.memoryFraction()
		x.MaxNonSplitRounding, x.LargeSegmentSize = x.maxNonSplitRounding(), x.largeSegment()
		if !ok {
			f = 1
		}
		x.PerProcessMemoryFraction = f
		x.PinnedNumRegisterThreads = max(x.PinnedNumRegisterThreads, 1)
		x.Backend = cmp.Or(x.Backend, "native")
		x.raw, x.parsed, x.given = "", false, 0
		return x
	}
	return norm(a) == norm(b)
}

// A parsed Config whose fields the caller changes afterwards follows the rules
// of a Config built in code: zero means the default.
func TestParsedConfigChangedInCode(t *testing.T) {
	c, err := ParseConfig("max_split_size_mb:128,garbage_collection_threshold:0.6,large_segment_size_mb:40,pinned_num_register_threads:4")
	if err != nil {
		t.Fatal(err)
	}
	c.MaxSplitSize, c.GarbageCollectionThreshold, c.LargeSegmentSize, c.PinnedNumRegisterThreads = 0, 0, 0, 0
	if _, err := New(newFakeMemory(1<<30), c); err != nil {
		t.Fatalf("New of a parsed Config reset to defaults in code: %v", err)
	}
	f, err := ParseConfig("per_process_memory_fraction:0")
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := f.memoryFraction(); !ok || got != 0 {
		t.Fatalf("per_process_memory_fraction:0 = %v, %v; want a cap at 0", got, ok)
	}
}
