package ch2

import (
	"fmt"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot/plotdata"
	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/replay"
	"memlab.dev/memlab/tensor"
)

// ChapterSequence runs the chapter's ops — allocate and free 1024, 512 and
// 256 MiB, allocate 768 MiB, empty_cache(), free it, empty_cache() — on a
// 4 GiB lab with allocator configuration conf (PYTORCH_CUDA_ALLOC_CONF), and
// returns the memory after each op and the segments right after the 768 MiB
// request.
func ChapterSequence(conf string) (steps *memlab.Steps, at768 []plotdata.Segment, err error) {
	l, err := memlab.Open(memlab.Budget(4<<30), memlab.AllocConf(conf), memlab.NotCurrent())
	if err != nil {
		return nil, nil, fmt.Errorf("ch2: chapter sequence: %w", err)
	}
	defer l.Close()
	steps = l.Steps()
	for i, mib := range []int{1024, 512, 256} {
		a, err := tensor.Empty(l, tensor.Uint8, mib<<20)
		if err != nil {
			return nil, nil, fmt.Errorf("ch2: chapter sequence, a%d: %w", i, err)
		}
		steps.Add(fmt.Sprintf("a%d = empty(%d MiB)", i, mib))
		if err := a.Release(); err != nil {
			return nil, nil, err
		}
		steps.Add(fmt.Sprintf("del a%d", i))
	}
	a3, err := tensor.Empty(l, tensor.Uint8, 768<<20)
	steps.AddErr("a3 = empty(768 MiB)", err)
	if err != nil {
		return steps, nil, nil // an out-of-memory error is the result, not a failure
	}
	at768 = memlab.Segments(l.Snapshot())
	for _, op := range []struct {
		label string
		do    func() error
	}{{"empty_cache()", l.EmptyCache}, {"del a3", a3.Release}, {"empty_cache() again", l.EmptyCache}} {
		if err := op.do(); err != nil {
			return nil, nil, fmt.Errorf("ch2: chapter sequence, %s: %w", op.label, err)
		}
		steps.Add(op.label)
	}
	return steps, at768, nil
}

// PyTorch reads PyTorch 2.11's state after each op of a ground-truth trace
// shipped in reference/torch-2.11 (e.g. "a__default.jsonl.gz").
func PyTorch(file string) ([]replay.State, error) {
	path, err := reference.File(reference.Torch211, file)
	if err != nil {
		return nil, fmt.Errorf("ch2: %w", err)
	}
	tr, err := replay.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ch2: %w", err)
	}
	return tr.States, nil
}

// Compare is memlab's and PyTorch's allocated and reserved memory op by op,
// as a table, and how many ops differ. The two must have as many ops.
func Compare(steps *memlab.Steps, torch []replay.State) (tab *memlab.Table, differ int, err error) {
	if len(torch) != len(steps.List) {
		return nil, 0, fmt.Errorf("ch2: compare: %d steps against %d PyTorch states", len(steps.List), len(torch))
	}
	tab = memlab.NewTable("op", "allocated", "reserved", "PyTorch 2.11 allocated", "PyTorch reserved", "same")
	for i, st := range steps.List {
		if torch[i].MemoryAllocated == nil || torch[i].MemoryReserved == nil {
			return nil, 0, fmt.Errorf("ch2: compare: PyTorch state %d has no allocated or reserved memory", i)
		}
		ta, tr := *torch[i].MemoryAllocated, *torch[i].MemoryReserved
		same := st.Allocated == ta && st.Reserved == tr
		if !same {
			differ++
		}
		tab.Row(st.Label, memlab.FormatBytes(st.Allocated), memlab.FormatBytes(st.Reserved), memlab.FormatBytes(ta), memlab.FormatBytes(tr), same)
	}
	return tab, differ, nil
}
