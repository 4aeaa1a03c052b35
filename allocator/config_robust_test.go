package allocator

import (
	"testing"
)

// FuzzParseConfig feeds arbitrary strings to ParseConfig: it never panics;
// what it accepts renders (String) to a config that parses back to the same
// rendering; and an allocator built from it serves and frees a few requests
// with its statistics back at zero.
//
//	go test -run XXX -fuzz FuzzParseConfig -fuzztime 20s ./allocator
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"", "max_split_size_mb:128", "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]",
		"roundup_power2_divisions:4", "garbage_collection_threshold:0.6,per_process_memory_fraction:0.5",
		"expandable_segments:True", "large_segment_size_mb:64", "max_non_split_rounding_mb:1024",
		"backend:native", "release_lock_on_cudamalloc:True", "pinned_num_register_threads:8",
		" max_split_size_mb : 20 ", "max_split_size_mb:99999999999999999999", "roundup_power2_divisions:[>:1",
		"roundup_power2_divisions:[]", ",", ":", "a:b:c", "per_process_memory_fraction:NaN",
		"garbage_collection_threshold:1e-320", "roundup_power2_divisions:[0:3]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseConfig(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("ParseConfig(%q): empty error text", s)
			}
			return
		}
		r := c.String()
		back, err := ParseConfig(r)
		if err != nil {
			t.Fatalf("ParseConfig(%q) rendered as %q, which does not parse: %v", s, r, err)
		}
		if back.String() != r {
			t.Fatalf("ParseConfig(%q) renders %q, which renders %q", s, r, back.String())
		}
		for _, n := range []int64{1, 512, 1 << 20, 3<<20 + 1, 1 << 40} {
			if got := RoundSize(n, c); got < n {
				t.Fatalf("config %q: RoundSize(%d) = %d", r, n, got)
			}
		}
		mem := newFakeMemory(1 << 30)
		a, err := New(mem, c)
		if err != nil {
			// ParseConfig and New apply the same rules: what one accepts,
			// the other does.
			t.Fatalf("ParseConfig(%q) accepted what New refuses: %v", s, err)
		}
		var ptrs []uint64
		for _, n := range []int64{1, 600 << 10, 5 << 20, 100 << 20} {
			p, err := a.Malloc(n)
			if err != nil {
				continue // a memory fraction may cap reserved memory
			}
			ptrs = append(ptrs, p)
		}
		for _, p := range ptrs {
			if err := a.Free(p); err != nil {
				t.Fatalf("config %q: Free: %v", r, err)
			}
		}
		if got := a.MemoryAllocated(); got != 0 {
			t.Fatalf("config %q: %d bytes allocated after freeing everything", r, got)
		}
		if err := checkInvariants(a, mem); err != nil {
			t.Fatalf("config %q: %v", r, err)
		}
	})
}
