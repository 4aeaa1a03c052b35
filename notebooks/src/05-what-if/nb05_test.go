package nb05

import (
	"testing"

	"memlab.dev/memlab/internal/nbtest"
)

// The tests run each cell of notebook 05 as the notebook does and check the
// figures its "Measured:" lines and tables print: replays of the shipped
// snapshots on the simulated device, compared with PyTorch's recorded figures.

func TestLoadSnapshot(t *testing.T) {
	nbtest.Want(t, nbtest.Run(t, Cells, "loadSnapshot"),
		`devices: 1; stack frames recorded: true; segments held at the end: 101`,
		`Measured: the snapshot holds 5768 trace entries on device 0 \(1891 allocations\), recorded under PYTORCH_CUDA_ALLOC_CONF=""`)
}

// The explorable history of the GPT-2 snapshot opens at its fragmentation
// peak, whose inactive split is the peak PyTorch measured (compareSettings'
// default row); outside a notebook it shows that static frame.
func TestSnapshotHistory(t *testing.T) {
	res := nbtest.Exec(t, Cells, "snapshotHistory")
	nbtest.Want(t, res.Output,
		`A static frame of the slider over this history's 5768 events: the state after event 3204, the\s+fragmentation peak`,
		`Measured: the fragmentation peak is event 3204 of 5768 \(free_completed\): 1\.04 GiB inactive split in 99 segments, 1\.33 GiB allocated, 4\.47 GiB reserved`)
	if len(res.Figures) != 2 {
		t.Errorf("%d figures, want the segment map and the memory curve", len(res.Figures))
	}
}

func TestCompareSettings(t *testing.T) {
	nbtest.Want(t, nbtest.Run(t, Cells, "compareSettings"),
		`(?m)^default +4\.95 GiB +5\.44 GiB +101 +0 +0 +0 +1\.04 GiB +344\.00 MiB$`,
		`Measured: expandable_segments:True: peak reserved 5\.04 GiB \(-7\.4 % against the defaults' 5\.44 GiB\), peak inactive split 0 bytes`,
		`Measured: max_split_size_mb:128: peak reserved 6\.23 GiB \(\+14\.5 % against the defaults' 5\.44 GiB\), peak inactive split 568\.15 MiB`,
		`Measured: roundup_power2_divisions:4: peak reserved 5\.54 GiB \(\+1\.8 % against the defaults' 5\.44 GiB\), peak inactive split 996\.03 MiB`)
}

func TestCheckAgainstPyTorch(t *testing.T) {
	nbtest.Want(t, nbtest.Run(t, Cells, "checkAgainstPyTorch"),
		`(?m)^max_split 64 \+ gc 0\.6 fraction=0\.040751 +5\.09 GiB +5\.09 GiB +174 +174 +8/8$`,
		`Measured: 40 of 40 figures of the GPT-2 replays equal what PyTorch measured under those settings`)
}

func TestUnderCap(t *testing.T) {
	nbtest.Want(t, nbtest.Run(t, Cells, "underCap"),
		`Measured: default: the smallest cap without OOM is 5\.43 GiB`,
		`Measured: expandable_segments:True: the smallest cap without OOM is 5\.00 GiB`,
		`default cap=5\.43 GiB: 1 OOMs; the first at event 3935:\n  CUDA out of memory\. Tried to allocate 500\.00 MiB\. .* 5\.43 GiB allowed;`,
		`expandable_segments:True cap=5\.00 GiB: 1 OOMs; the first at event 3935:\n  CUDA out of memory\. .*try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.*\n  memlab: this run already uses expandable_segments:True`)
}

func TestSweepSettings(t *testing.T) {
	nbtest.Want(t, nbtest.Run(t, Cells, "sweepSettings"),
		`(?m)^default +4\.95 GiB +5\.44 GiB +101 `,
		`(?m)^roundup 8 +5\.01 GiB +5\.52 GiB +101 `, // after the defaults, now that max_split 512 and 1024 are their row
		`Measured: 60 of 60 settings replayed without OOM, 46 different results; the lowest reserved peak, 5\.04 GiB, is expandable_segments:True`,
		`Measured: the default setting's figures, also under max_split_size_mb:512 and max_split_size_mb:1024\n`) // the limits never apply: no block is that large
}

func TestSeveralStreams(t *testing.T) {
	nbtest.Want(t, nbtest.Run(t, Cells, "severalStreams"),
		`(?m)^0 \(the default stream\) +20$`, `(?m)^536314608 +20$`, `(?m)^536367104 +20$`,
		// the figures that depend on GPU timing carry their range
		`(?m)^default +186\.03 MiB +292\.00 MiB +17 +84\.00 MiB +32\.00 MiB\n +\[280\.00 MiB, 292\.00 MiB\] +\[16, 17\] +\[63\.97 MiB, 103\.00 MiB\]$`,
		`Measured: 3 streams allocate; 12 frees completed later than requested \(cross-stream\)\n`,
		`Measured: peak reserved 292\.00 MiB by default, 288\.00 MiB with expandable segments`)
}

func TestStreamsVsPyTorch(t *testing.T) {
	// The two misses are the cross-stream timing the default snapshot cannot hold
	// (BENCHMARKS.md, whatif's TestPredictsRecordedSettings); both inside the range.
	nbtest.Want(t, nbtest.Run(t, Cells, "streamsVsPyTorch"),
		`(?m)^max_split 128:\ninactive_split_bytes\.all\.peak +84\.00 MiB +\[63\.97 MiB, 103\.00 MiB\] +68\.00 MiB$`,
		`(?m)^max_split 64 \+ gc 0\.6 fraction=0\.001494:\ninactive_split_bytes\.all\.peak +54\.97 MiB +\[54\.97 MiB, 62\.97 MiB\] +61\.97 MiB$`,
		`Measured: 38 of 40 figures equal what PyTorch measured; of the 2 that differ, 2 lie inside the replay's timing range`)
}

func TestRepeatedRuns(t *testing.T) {
	// eight runs of the same program under the same setting: PyTorch's own figures vary
	nbtest.Want(t, nbtest.Run(t, Cells, "repeatedRuns"),
		`(?m)^max_split 128:\n(.+\n)*inactive_split_bytes\.all\.peak +63\.97 MiB +3 +\[63\.97 MiB, 103\.00 MiB\]\n +70\.00 MiB +4\n +84\.00 MiB +1\n`,
		`Measured: 14 figures took more than one value in eight runs of one program under one setting; the replay flags 14 of them`,
		`Measured: 29 of the 29 values PyTorch measured for them lie inside the replay's timing range`)
}

// A cell's function name never shows in the notebook (a code cell is its
// body), so no markdown may send the reader to a cell by that name (issue 18:
// a "Try it" named streamsVsPyTorch).
func TestMarkdownNamesNoCell(t *testing.T) { nbtest.MarkdownNamesNoCell(t, Cells) }

// Every experiment has a predict-first "Try it": after its cell, before the
// next, a markdown cell that asks first and answers in a collapsed block, in
// both editions (issue 18).
func TestEveryCellHasPredictFirstTryIt(t *testing.T) { nbtest.PredictFirstTryIts(t, "05-what-if") }
