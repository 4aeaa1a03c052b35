package kvcache

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

// step is one operation on a BlockTable and the state expected after it.
type step struct {
	do     string // "append" (seq, n tokens), "fork" (seq → child n), "free" (seq)
	seq, n int
	copies []Copy        // append only: the copies it must return
	err    error         // nil: must succeed; errAny: any error; else errors.Is target
	blocks map[int][]int // tables expected afterwards (nil slice: sequence must not exist)
	lens   map[int]int   // lengths expected afterwards
	free   int           // NumFree afterwards
	why    string
}

var errAny = errors.New("any error")

func runSteps(t *testing.T, numBlocks, blockSize int, steps []step) {
	t.Helper()
	var bt *BlockTable
	var err error
	call := fmt.Sprintf("NewBlockTable(%d, %d)", numBlocks, blockSize)
	if !exercisetest.Call(t, call, func() { bt, err = NewBlockTable(numBlocks, blockSize) }) {
		return
	}
	if err != nil || bt == nil {
		t.Fatalf("%s: want a table, got %v, %v", call, bt, err)
	}
	for i, s := range steps {
		var copies []Copy
		var err error
		var desc string
		var f func()
		switch s.do {
		case "append":
			desc = fmt.Sprintf("Append(%d, %d)", s.seq, s.n)
			f = func() { copies, err = bt.Append(s.seq, s.n) }
		case "fork":
			desc = fmt.Sprintf("Fork(%d, %d)", s.seq, s.n)
			f = func() { err = bt.Fork(s.seq, s.n) }
		case "free":
			desc = fmt.Sprintf("Free(%d)", s.seq)
			f = func() { err = bt.Free(s.seq) }
		default:
			t.Fatalf("bad step %q", s.do)
		}
		desc = fmt.Sprintf("step %d, %s", i+1, desc)
		if !exercisetest.Call(t, desc, f) {
			return
		}
		switch {
		case s.err == nil && err != nil:
			t.Fatalf("%s: unexpected error %v — %s", desc, err, s.why)
		case s.err == errAny && err == nil:
			t.Fatalf("%s: want an error — %s", desc, s.why)
		case s.err != nil && s.err != errAny && !errors.Is(err, s.err):
			t.Fatalf("%s: want an error wrapping %v, got %v — %s", desc, s.err, err, s.why)
		}
		if len(copies) != 0 || len(s.copies) != 0 {
			if !slices.Equal(copies, s.copies) {
				t.Fatalf("%s: want copies %v, got %v — %s", desc, s.copies, copies, s.why)
			}
		}
		for seq, want := range s.blocks {
			var got []int
			if !exercisetest.Call(t, fmt.Sprintf("Blocks(%d)", seq), func() { got = bt.Blocks(seq) }) {
				return
			}
			if !slices.Equal(got, want) || (want == nil) != (got == nil) {
				t.Fatalf("%s: Blocks(%d) = %v, want %v — %s", desc, seq, got, want, s.why)
			}
		}
		for seq, want := range s.lens {
			var got int
			if !exercisetest.Call(t, fmt.Sprintf("Len(%d)", seq), func() { got = bt.Len(seq) }) {
				return
			}
			if got != want {
				t.Fatalf("%s: Len(%d) = %d, want %d — %s", desc, seq, got, want, s.why)
			}
		}
		var free int
		if !exercisetest.Call(t, "NumFree()", func() { free = bt.NumFree() }) {
			return
		}
		if free != s.free {
			t.Fatalf("%s: NumFree() = %d, want %d — %s", desc, free, s.free, s.why)
		}
	}
}

func TestA_AllocateOnDemand(t *testing.T) {
	tests := []struct {
		name                 string
		numBlocks, blockSize int
		steps                []step
	}{
		{"README example", 8, 16, []step{
			{do: "append", seq: 1, n: 20, blocks: map[int][]int{1: {0, 1}}, lens: map[int]int{1: 20}, free: 6, why: "20 tokens need two 16-token blocks, lowest ids first"},
			{do: "append", seq: 2, n: 16, blocks: map[int][]int{2: {2}, 1: {0, 1}}, lens: map[int]int{2: 16}, free: 5, why: "exactly one block"},
			{do: "append", seq: 1, n: 12, blocks: map[int][]int{1: {0, 1}}, lens: map[int]int{1: 32}, free: 5, why: "block 1 held 4 tokens and had 12 free slots: no new block"},
			{do: "append", seq: 1, n: 1, blocks: map[int][]int{1: {0, 1, 3}}, lens: map[int]int{1: 33}, free: 4, why: "token 33 starts a new block: the lowest free id is 3"},
		}},
		{"freed blocks are reused lowest first", 8, 16, []step{
			{do: "append", seq: 1, n: 20, blocks: map[int][]int{1: {0, 1}}, free: 6, why: "two blocks"},
			{do: "append", seq: 2, n: 16, blocks: map[int][]int{2: {2}}, free: 5, why: "one block"},
			{do: "append", seq: 3, n: 1, blocks: map[int][]int{3: {3}}, free: 4, why: "one block"},
			{do: "free", seq: 1, blocks: map[int][]int{1: nil}, lens: map[int]int{1: 0}, free: 6, why: "blocks 0 and 1 go back to the free list; the sequence is gone"},
			{do: "append", seq: 4, n: 40, blocks: map[int][]int{4: {0, 1, 4}}, free: 3, why: "40 tokens take three blocks: 0 and 1 (freed) and then 4"},
		}},
		{"all or nothing", 4, 16, []step{
			{do: "append", seq: 1, n: 40, blocks: map[int][]int{1: {0, 1, 2}}, free: 1, why: "three blocks"},
			{do: "append", seq: 2, n: 17, err: ErrOutOfBlocks, blocks: map[int][]int{2: nil}, lens: map[int]int{2: 0}, free: 1, why: "17 tokens need two blocks but one is free: refuse and change nothing (no half-allocated sequence)"},
			{do: "append", seq: 1, n: 25, err: ErrOutOfBlocks, blocks: map[int][]int{1: {0, 1, 2}}, lens: map[int]int{1: 40}, free: 1, why: "40+25 = 65 tokens need 5 blocks; sequence 1 has 3 and only 1 is free: refuse, keep the 40 tokens as they were"},
		}},
		{"exactly enough", 4, 16, []step{
			{do: "append", seq: 1, n: 40, free: 1, why: "three blocks"},
			{do: "append", seq: 1, n: 24, blocks: map[int][]int{1: {0, 1, 2, 3}}, lens: map[int]int{1: 64}, free: 0, why: "8 slots left in block 2 plus one free block of 16 hold exactly 24 tokens"},
			{do: "append", seq: 1, n: 1, err: ErrOutOfBlocks, lens: map[int]int{1: 64}, free: 0, why: "the cache is full"},
		}},
		{"bad calls", 4, 16, []step{
			{do: "append", seq: 1, n: 0, err: errAny, blocks: map[int][]int{1: nil}, free: 4, why: "appending no tokens is a caller bug"},
			{do: "append", seq: 1, n: -3, err: errAny, blocks: map[int][]int{1: nil}, free: 4, why: "a negative token count"},
			{do: "free", seq: 7, err: errAny, free: 4, why: "sequence 7 does not exist"},
			{do: "append", seq: 1, n: 1, free: 3, why: "one block"},
			{do: "free", seq: 1, free: 4, why: "back to the free list"},
			{do: "free", seq: 1, err: errAny, free: 4, why: "freeing a sequence twice would release its blocks twice"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { runSteps(t, tc.numBlocks, tc.blockSize, tc.steps) })
	}
}

func TestA_NewBlockTableErrors(t *testing.T) {
	for _, tc := range []struct{ numBlocks, blockSize int }{{0, 16}, {8, 0}, {-1, 16}, {8, -16}} {
		t.Run(fmt.Sprint(tc.numBlocks, tc.blockSize), func(t *testing.T) {
			var err error
			call := fmt.Sprintf("NewBlockTable(%d, %d)", tc.numBlocks, tc.blockSize)
			if !exercisetest.Call(t, call, func() { _, err = NewBlockTable(tc.numBlocks, tc.blockSize) }) {
				return
			}
			if err == nil {
				t.Errorf("%s: want an error — a cache needs at least one block of at least one token", call)
			}
		})
	}
}

func TestB_Slot(t *testing.T) {
	var bt *BlockTable
	var err error
	if !exercisetest.Call(t, "NewBlockTable(8, 16)", func() { bt, err = NewBlockTable(8, 16) }) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	setup := []struct{ seq, n int }{{1, 20}, {2, 16}, {1, 13}}
	for _, s := range setup {
		if !exercisetest.Call(t, fmt.Sprintf("Append(%d, %d)", s.seq, s.n), func() { _, err = bt.Append(s.seq, s.n) }) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// Sequence 1: blocks [0 1 3], 33 tokens. Sequence 2: block [2], 16 tokens.
	tests := []struct {
		seq, pos          int
		wantBlock, wantOf int
		wantErr           bool
		why               string
	}{
		{1, 0, 0, 0, false, "token 0 is at the start of the first block"},
		{1, 17, 1, 1, false, "token 17 is logical block 1 (physical 1), offset 1"},
		{1, 32, 3, 0, false, "token 32 is logical block 2, which is physical block 3"},
		{2, 15, 2, 15, false, "the last token of sequence 2"},
		{1, 33, 0, 0, true, "sequence 1 has 33 tokens: positions 0..32"},
		{2, 16, 0, 0, true, "sequence 2 has 16 tokens"},
		{1, -1, 0, 0, true, "negative positions do not exist"},
		{9, 0, 0, 0, true, "sequence 9 does not exist"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("seq %d pos %d", tc.seq, tc.pos), func(t *testing.T) {
			var b, off int
			var err error
			call := fmt.Sprintf("Slot(%d, %d)", tc.seq, tc.pos)
			if !exercisetest.Call(t, call, func() { b, off, err = bt.Slot(tc.seq, tc.pos) }) {
				return
			}
			if tc.wantErr {
				if err == nil {
					t.Errorf("%s: want an error, got block %d offset %d — %s", call, b, off, tc.why)
				}
				return
			}
			if err != nil || b != tc.wantBlock || off != tc.wantOf {
				t.Errorf("%s: want block %d offset %d, got %d, %d (err %v) — %s", call, tc.wantBlock, tc.wantOf, b, off, err, tc.why)
			}
		})
	}
}

func TestC_ForkAndCopyOnWrite(t *testing.T) {
	tests := []struct {
		name                 string
		numBlocks, blockSize int
		steps                []step
	}{
		{"copy on write of a partial block", 8, 4, []step{
			{do: "append", seq: 1, n: 6, blocks: map[int][]int{1: {0, 1}}, free: 6, why: "6 tokens in 4-token blocks: block 1 holds 2"},
			{do: "fork", seq: 1, n: 2, blocks: map[int][]int{1: {0, 1}, 2: {0, 1}}, lens: map[int]int{2: 6}, free: 6, why: "the child shares both blocks: no new memory"},
			{do: "append", seq: 2, n: 1, copies: []Copy{{From: 1, To: 2}}, blocks: map[int][]int{1: {0, 1}, 2: {0, 2}}, lens: map[int]int{1: 6, 2: 7}, free: 5, why: "block 1 is shared and has free slots: writing there would change sequence 1's cache, so the child gets a copy in block 2"},
			{do: "append", seq: 1, n: 1, blocks: map[int][]int{1: {0, 1}}, free: 5, why: "block 1 is no longer shared: sequence 1 writes into it, no copy"},
			{do: "free", seq: 1, blocks: map[int][]int{1: nil, 2: {0, 2}}, free: 6, why: "block 0 is still used by sequence 2; only block 1 goes back"},
			{do: "free", seq: 2, free: 8, why: "now every block is free"},
		}},
		{"full shared blocks need no copy", 8, 4, []step{
			{do: "append", seq: 1, n: 8, blocks: map[int][]int{1: {0, 1}}, free: 6, why: "two full blocks"},
			{do: "fork", seq: 1, n: 2, free: 6, why: "shared"},
			{do: "append", seq: 2, n: 1, blocks: map[int][]int{1: {0, 1}, 2: {0, 1, 2}}, free: 5, why: "the new token goes into a new block; the full shared blocks are only read"},
		}},
		{"fork of a fork", 8, 4, []step{
			{do: "append", seq: 1, n: 2, free: 7, why: "one block"},
			{do: "fork", seq: 1, n: 2, free: 7, why: "block 0 has 2 users"},
			{do: "fork", seq: 2, n: 3, blocks: map[int][]int{3: {0}}, free: 7, why: "block 0 has 3 users"},
			{do: "free", seq: 1, free: 7, why: "2 users left"},
			{do: "free", seq: 2, free: 7, why: "1 user left"},
			{do: "append", seq: 3, n: 1, blocks: map[int][]int{3: {0}}, lens: map[int]int{3: 3}, free: 7, why: "sequence 3 is the only user of block 0 now: no copy"},
			{do: "free", seq: 3, free: 8, why: "the last user returns it"},
		}},
		{"copy needs a free block", 2, 4, []step{
			{do: "append", seq: 1, n: 6, free: 0, why: "both blocks used"},
			{do: "fork", seq: 1, n: 2, free: 0, why: "forking needs no memory"},
			{do: "append", seq: 2, n: 1, err: ErrOutOfBlocks, blocks: map[int][]int{1: {0, 1}, 2: {0, 1}}, lens: map[int]int{2: 6}, free: 0, why: "the copy-on-write needs a free block and there is none: nothing changes"},
		}},
		{"bad forks", 4, 4, []step{
			{do: "fork", seq: 1, n: 2, err: errAny, blocks: map[int][]int{2: nil}, free: 4, why: "sequence 1 does not exist"},
			{do: "append", seq: 1, n: 1, free: 3, why: "one block"},
			{do: "append", seq: 2, n: 1, free: 2, why: "one block"},
			{do: "fork", seq: 1, n: 2, err: errAny, blocks: map[int][]int{2: {1}}, free: 2, why: "sequence 2 already exists; forking over it would leak its blocks"},
			{do: "fork", seq: 1, n: 1, err: errAny, blocks: map[int][]int{1: {0}}, free: 2, why: "a sequence cannot be forked into itself"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { runSteps(t, tc.numBlocks, tc.blockSize, tc.steps) })
	}
}

func TestC_BlocksReturnsACopy(t *testing.T) {
	var bt *BlockTable
	var err error
	if !exercisetest.Call(t, "NewBlockTable(4, 4)", func() { bt, err = NewBlockTable(4, 4) }) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	var blocks []int
	ok := exercisetest.Call(t, "Append(1, 8), Fork(1, 2), Blocks(1)", func() {
		if _, err = bt.Append(1, 8); err == nil {
			err = bt.Fork(1, 2)
		}
		blocks = bt.Blocks(1)
	})
	if !ok {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	blocks[0] = 99
	var again, child []int
	if !exercisetest.Call(t, "Blocks(1)", func() { again, child = bt.Blocks(1), bt.Blocks(2) }) {
		return
	}
	if again[0] == 99 || child[0] == 99 {
		t.Errorf("changing the slice Blocks(1) returned changed the table (now %v, child %v) — return a copy, and give a forked child its own copy", again, child)
	}
}
