package whatif_test

import (
	"fmt"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
	"memlab.dev/memlab/whatif"
)

// A shipped GPT-2 training snapshot, recorded under PyTorch's defaults, replayed under
// its own settings and under expandable segments. PyTorch measured the same peaks in
// both runs (reference/workloads-2.11/gpt2_train__*.facts.json).
func ExampleFile() {
	path, err := reference.File(reference.Workloads211, "gpt2_train__default.pickle")
	if err != nil {
		fmt.Println(err)
		return
	}
	settings, err := whatif.ParseSettings("", "expandable_segments:True")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := whatif.File(path, settings, whatif.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range res.Runs {
		fmt.Printf("%s: peak reserved %d, %d cudaMallocs, OOMs %d\n", r.Setting.Label(), r.MaxReserved, r.DeviceAllocs, r.OOMs)
	}
	// Output:
	// default: peak reserved 5844762624, 101 cudaMallocs, OOMs 0
	// expandable_segments:True: peak reserved 5414846464, 86 cudaMallocs, OOMs 0
}

// The smallest cap on reserved memory under which the snapshot's history still runs,
// under its own settings.
func ExampleMinCap() {
	path, err := reference.File(reference.Workloads211, "multistream_branches__default.pickle")
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := snapshot.ReadFile(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	own, err := whatif.SnapshotSetting(s)
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := whatif.MinCap(s, own, whatif.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("smallest cap without OOM:", allocator.FormatSize(c))
	// Output:
	// smallest cap without OOM: 206.00 MiB
}

// A program that hands blocks to other streams (record_stream): when their frees
// complete is GPU timing, so the replay flags the figures that depend on it with the
// range it found over many timings, from the earliest completions to the latest.
// PyTorch's own run under this setting (multistream_branches__max_split_size_mb_128.facts.json)
// measured a fragmentation peak inside that range, not the one the default run's timing
// gives; eight more runs of it (reference/workloads-2.11/repeats/) measured three
// different ones, all inside.
func ExampleRun_TimingRange() {
	path, err := reference.File(reference.Workloads211, "multistream_branches__default.pickle")
	if err != nil {
		fmt.Println(err)
		return
	}
	settings, err := whatif.ParseSettings("max_split_size_mb:128")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := whatif.File(path, settings, whatif.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	r := res.Runs[0]
	fmt.Println("depends on timing:", r.TimingDependent(), "cross-stream frees:", r.CrossStreamFrees, "timings:", r.TimingSchedules)
	k := "inactive_split_bytes.all.peak"
	lr := r.TimingRange[k]
	fmt.Printf("%s: %s, timing range [%s, %s]\n", k, allocator.FormatSize(r.Stats[k]),
		allocator.FormatSize(lr[0]), allocator.FormatSize(lr[1]))
	_, flagged := r.TimingRange["allocated_bytes.all.peak"]
	fmt.Println("peak allocated flagged:", flagged)
	// Output:
	// depends on timing: true cross-stream frees: 18 timings: 129
	// inactive_split_bytes.all.peak: 84.00 MiB, timing range [63.97 MiB, 103.00 MiB]
	// peak allocated flagged: false
}
