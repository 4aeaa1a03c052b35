package replay_test

import (
	"fmt"
	"path/filepath"
	"strings"

	"memlab.dev/memlab/replay"
)

// A bare op list replays on the simulated device; States sees every op's state.
func ExampleRun() {
	t, err := replay.Read(strings.NewReader(`[["a",1073741824],["f",0],["a",536870912],["f",1],["a",268435456],["f",2],["a",805306368],["e"]]`))
	if err != nil {
		panic(err)
	}
	res, err := replay.Run(t, replay.Options{States: func(s replay.State) {
		fmt.Printf("%-18s allocated %4d MiB  reserved %4d MiB  segments %v\n",
			s.Op, *s.MemoryAllocated>>20, *s.MemoryReserved>>20, s.SegSizes)
	}})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Ops, "ops,", res.OOMs, "OOMs")
	// Output:
	// ["a",1073741824]   allocated 1024 MiB  reserved 1024 MiB  segments [1073741824]
	// ["f",0]            allocated    0 MiB  reserved 1024 MiB  segments [1073741824]
	// ["a",536870912]    allocated  512 MiB  reserved 1024 MiB  segments [1073741824]
	// ["f",1]            allocated    0 MiB  reserved 1024 MiB  segments [1073741824]
	// ["a",268435456]    allocated  256 MiB  reserved 1024 MiB  segments [1073741824]
	// ["f",2]            allocated    0 MiB  reserved 1024 MiB  segments [1073741824]
	// ["a",805306368]    allocated  768 MiB  reserved 1024 MiB  segments [1073741824]
	// ["e"]              allocated  768 MiB  reserved 1024 MiB  segments [1073741824]
	// 8 ops, 0 OOMs
}

// Check compares a replay with PyTorch's recorded states and summary.
func ExampleCheck() {
	t, err := replay.ReadFile(filepath.Join("testdata", "torch-2.11-extra", "oom_default.jsonl.gz"))
	if err != nil {
		panic(err)
	}
	fmt.Println("conf:", t.Header.Conf == "", "cap GiB:", *t.Header.CapGiB)
	res, err := replay.Check(t, replay.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Matched, "of", res.Ops, "ops match; summary checked:", res.SummaryChecked, "ok:", res.OK())

	other := "max_split_size_mb:128"
	res, _ = replay.Check(t, replay.Options{Conf: &other})
	fmt.Println(res.Diff)
	// Output:
	// conf: true cap GiB: 2
	// 25 of 25 ops match; summary checked: true ok: true
	// op 0: stats.max_split_size: want -1, got 134217728
}
