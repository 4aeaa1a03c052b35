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
