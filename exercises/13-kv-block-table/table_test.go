package kvcache

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

// msg picks a failure message in the learner's language (MEMLAB_LANG).
var msg = exercisetest.Msg

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
		t.Fatalf(msg("%s: want a table, got %v, %v", "%s：期望得到一个块表，得到 %v、%v"), call, bt, err)
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
		desc = fmt.Sprintf(msg("step %d, %s", "第 %d 步，%s"), i+1, desc)
		if !exercisetest.Call(t, desc, f) {
			return
		}
		switch {
		case s.err == nil && err != nil:
			t.Fatalf(msg("%s: unexpected error %v — %s", "%s：意外的错误 %v——%s"), desc, err, s.why)
		case s.err == errAny && err == nil:
			t.Fatalf(msg("%s: want an error — %s", "%s：期望一个错误——%s"), desc, s.why)
		case s.err != nil && s.err != errAny && !errors.Is(err, s.err):
			t.Fatalf(msg("%s: want an error wrapping %v, got %v — %s", "%s：期望一个包装了 %v 的错误，得到 %v——%s"), desc, s.err, err, s.why)
		}
		if len(copies) != 0 || len(s.copies) != 0 {
			if !slices.Equal(copies, s.copies) {
				t.Fatalf(msg("%s: want copies %v, got %v — %s", "%s：期望拷贝 %v，得到 %v——%s"), desc, s.copies, copies, s.why)
			}
		}
		for seq, want := range s.blocks {
			var got []int
			if !exercisetest.Call(t, fmt.Sprintf("Blocks(%d)", seq), func() { got = bt.Blocks(seq) }) {
				return
			}
			if !slices.Equal(got, want) || (want == nil) != (got == nil) {
				t.Fatalf(msg("%s: Blocks(%d) = %v, want %v — %s", "%s：Blocks(%d) = %v，期望 %v——%s"), desc, seq, got, want, s.why)
			}
		}
		for seq, want := range s.lens {
			var got int
			if !exercisetest.Call(t, fmt.Sprintf("Len(%d)", seq), func() { got = bt.Len(seq) }) {
				return
			}
			if got != want {
				t.Fatalf(msg("%s: Len(%d) = %d, want %d — %s", "%s：Len(%d) = %d，期望 %d——%s"), desc, seq, got, want, s.why)
			}
		}
		var free int
		if !exercisetest.Call(t, "NumFree()", func() { free = bt.NumFree() }) {
			return
		}
		if free != s.free {
			t.Fatalf(msg("%s: NumFree() = %d, want %d — %s", "%s：NumFree() = %d，期望 %d——%s"), desc, free, s.free, s.why)
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
			{do: "append", seq: 1, n: 20, blocks: map[int][]int{1: {0, 1}}, lens: map[int]int{1: 20}, free: 6, why: msg("20 tokens need two 16-token blocks, lowest ids first", "20 个词元需要两个 16 个词元的块，id 小的先取")},
			{do: "append", seq: 2, n: 16, blocks: map[int][]int{2: {2}, 1: {0, 1}}, lens: map[int]int{2: 16}, free: 5, why: msg("exactly one block", "正好一个块")},
			{do: "append", seq: 1, n: 12, blocks: map[int][]int{1: {0, 1}}, lens: map[int]int{1: 32}, free: 5, why: msg("block 1 held 4 tokens and had 12 free slots: no new block", "块 1 有 4 个词元，还有 12 个空位：不需要新块")},
			{do: "append", seq: 1, n: 1, blocks: map[int][]int{1: {0, 1, 3}}, lens: map[int]int{1: 33}, free: 4, why: msg("token 33 starts a new block: the lowest free id is 3", "第 33 个词元开始一个新块：最小的空闲 id 是 3")},
		}},
		{"freed blocks are reused lowest first", 8, 16, []step{
			{do: "append", seq: 1, n: 20, blocks: map[int][]int{1: {0, 1}}, free: 6, why: "two blocks"},
			{do: "append", seq: 2, n: 16, blocks: map[int][]int{2: {2}}, free: 5, why: "one block"},
			{do: "append", seq: 3, n: 1, blocks: map[int][]int{3: {3}}, free: 4, why: "one block"},
			{do: "free", seq: 1, blocks: map[int][]int{1: nil}, lens: map[int]int{1: 0}, free: 6, why: msg("blocks 0 and 1 go back to the free list; the sequence is gone", "块 0 和块 1 回到空闲列表；这个序列没了")},
			{do: "append", seq: 4, n: 40, blocks: map[int][]int{4: {0, 1, 4}}, free: 3, why: msg("40 tokens take three blocks: 0 and 1 (freed) and then 4", "40 个词元占三个块：0 和 1（已释放的），然后是 4")},
		}},
		{"all or nothing", 4, 16, []step{
			{do: "append", seq: 1, n: 40, blocks: map[int][]int{1: {0, 1, 2}}, free: 1, why: "three blocks"},
			{do: "append", seq: 2, n: 17, err: ErrOutOfBlocks, blocks: map[int][]int{2: nil}, lens: map[int]int{2: 0}, free: 1, why: msg("17 tokens need two blocks but one is free: refuse and change nothing (no half-allocated sequence)", "17 个词元需要两个块，但只有一个空闲：拒绝，什么都不改（不能有分配了一半的序列）")},
			{do: "append", seq: 1, n: 25, err: ErrOutOfBlocks, blocks: map[int][]int{1: {0, 1, 2}}, lens: map[int]int{1: 40}, free: 1, why: msg("40+25 = 65 tokens need 5 blocks; sequence 1 has 3 and only 1 is free: refuse, keep the 40 tokens as they were", "40+25 = 65 个词元需要 5 个块；序列 1 有 3 个，只有 1 个空闲：拒绝，那 40 个词元保持原样")},
		}},
		{"exactly enough", 4, 16, []step{
			{do: "append", seq: 1, n: 40, free: 1, why: "three blocks"},
			{do: "append", seq: 1, n: 24, blocks: map[int][]int{1: {0, 1, 2, 3}}, lens: map[int]int{1: 64}, free: 0, why: msg("8 slots left in block 2 plus one free block of 16 hold exactly 24 tokens", "块 2 剩下的 8 个空位加上一个 16 的空闲块，正好装下 24 个词元")},
			{do: "append", seq: 1, n: 1, err: ErrOutOfBlocks, lens: map[int]int{1: 64}, free: 0, why: msg("the cache is full", "缓存满了")},
		}},
		{"bad calls", 4, 16, []step{
			{do: "append", seq: 1, n: 0, err: errAny, blocks: map[int][]int{1: nil}, free: 4, why: msg("appending no tokens is a caller bug", "追加零个词元是调用者的 bug")},
			{do: "append", seq: 1, n: -3, err: errAny, blocks: map[int][]int{1: nil}, free: 4, why: msg("a negative token count", "负的词元数")},
			{do: "free", seq: 7, err: errAny, free: 4, why: msg("sequence 7 does not exist", "序列 7 不存在")},
			{do: "append", seq: 1, n: 1, free: 3, why: "one block"},
			{do: "free", seq: 1, free: 4, why: msg("back to the free list", "回到空闲列表")},
			{do: "free", seq: 1, err: errAny, free: 4, why: msg("freeing a sequence twice would release its blocks twice", "释放一个序列两次会把它的块释放两次")},
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
				t.Errorf(msg("%s: want an error — a cache needs at least one block of at least one token", "%s：期望一个错误——缓存至少需要一个块，每块至少一个词元"), call)
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
		{1, 0, 0, 0, false, msg("token 0 is at the start of the first block", "词元 0 在第一个块的开头")},
		{1, 17, 1, 1, false, msg("token 17 is logical block 1 (physical 1), offset 1", "词元 17 是逻辑块 1（物理块 1），偏移 1")},
		{1, 32, 3, 0, false, msg("token 32 is logical block 2, which is physical block 3", "词元 32 是逻辑块 2，即物理块 3")},
		{2, 15, 2, 15, false, msg("the last token of sequence 2", "序列 2 的最后一个词元")},
		{1, 33, 0, 0, true, msg("sequence 1 has 33 tokens: positions 0..32", "序列 1 有 33 个词元：位置 0..32")},
		{2, 16, 0, 0, true, msg("sequence 2 has 16 tokens", "序列 2 有 16 个词元")},
		{1, -1, 0, 0, true, msg("negative positions do not exist", "负的位置不存在")},
		{9, 0, 0, 0, true, msg("sequence 9 does not exist", "序列 9 不存在")},
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
					t.Errorf(msg("%s: want an error, got block %d offset %d — %s", "%s：期望一个错误，得到块 %d 偏移 %d——%s"), call, b, off, tc.why)
				}
				return
			}
			if err != nil || b != tc.wantBlock || off != tc.wantOf {
				t.Errorf(msg("%s: want block %d offset %d, got %d, %d (err %v) — %s", "%s：期望块 %d 偏移 %d，得到 %d、%d（err %v）——%s"), call, tc.wantBlock, tc.wantOf, b, off, err, tc.why)
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
			{do: "append", seq: 1, n: 6, blocks: map[int][]int{1: {0, 1}}, free: 6, why: msg("6 tokens in 4-token blocks: block 1 holds 2", "4 个词元的块里 6 个词元：块 1 装 2 个")},
			{do: "fork", seq: 1, n: 2, blocks: map[int][]int{1: {0, 1}, 2: {0, 1}}, lens: map[int]int{2: 6}, free: 6, why: msg("the child shares both blocks: no new memory", "子序列共享两个块：不需要新显存")},
			{do: "append", seq: 2, n: 1, copies: []Copy{{From: 1, To: 2}}, blocks: map[int][]int{1: {0, 1}, 2: {0, 2}}, lens: map[int]int{1: 6, 2: 7}, free: 5, why: msg("block 1 is shared and has free slots: writing there would change sequence 1's cache, so the child gets a copy in block 2", "块 1 是共享的且有空位：往那里写会改掉序列 1 的缓存，所以子序列在块 2 里得到一份拷贝")},
			{do: "append", seq: 1, n: 1, blocks: map[int][]int{1: {0, 1}}, free: 5, why: msg("block 1 is no longer shared: sequence 1 writes into it, no copy", "块 1 不再共享：序列 1 直接写进去，不拷贝")},
			{do: "free", seq: 1, blocks: map[int][]int{1: nil, 2: {0, 2}}, free: 6, why: msg("block 0 is still used by sequence 2; only block 1 goes back", "块 0 还被序列 2 用着；只有块 1 回去")},
			{do: "free", seq: 2, free: 8, why: msg("now every block is free", "现在每个块都空闲")},
		}},
		{"full shared blocks need no copy", 8, 4, []step{
			{do: "append", seq: 1, n: 8, blocks: map[int][]int{1: {0, 1}}, free: 6, why: msg("two full blocks", "两个满的块")},
			{do: "fork", seq: 1, n: 2, free: 6, why: "shared"},
			{do: "append", seq: 2, n: 1, blocks: map[int][]int{1: {0, 1}, 2: {0, 1, 2}}, free: 5, why: msg("the new token goes into a new block; the full shared blocks are only read", "新词元进新块；满的共享块只被读取")},
		}},
		{"fork of a fork", 8, 4, []step{
			{do: "append", seq: 1, n: 2, free: 7, why: "one block"},
			{do: "fork", seq: 1, n: 2, free: 7, why: msg("block 0 has 2 users", "块 0 有 2 个使用者")},
			{do: "fork", seq: 2, n: 3, blocks: map[int][]int{3: {0}}, free: 7, why: msg("block 0 has 3 users", "块 0 有 3 个使用者")},
			{do: "free", seq: 1, free: 7, why: msg("2 users left", "剩 2 个使用者")},
			{do: "free", seq: 2, free: 7, why: msg("1 user left", "剩 1 个使用者")},
			{do: "append", seq: 3, n: 1, blocks: map[int][]int{3: {0}}, lens: map[int]int{3: 3}, free: 7, why: msg("sequence 3 is the only user of block 0 now: no copy", "序列 3 现在是块 0 唯一的使用者：不拷贝")},
			{do: "free", seq: 3, free: 8, why: msg("the last user returns it", "最后一个使用者把它还回去")},
		}},
		{"copy needs a free block", 2, 4, []step{
			{do: "append", seq: 1, n: 6, free: 0, why: msg("both blocks used", "两个块都在用")},
			{do: "fork", seq: 1, n: 2, free: 0, why: msg("forking needs no memory", "fork 不需要显存")},
			{do: "append", seq: 2, n: 1, err: ErrOutOfBlocks, blocks: map[int][]int{1: {0, 1}, 2: {0, 1}}, lens: map[int]int{2: 6}, free: 0, why: msg("the copy-on-write needs a free block and there is none: nothing changes", "写时复制需要一个空闲块，但一个都没有：什么都不变")},
		}},
		{"bad forks", 4, 4, []step{
			{do: "fork", seq: 1, n: 2, err: errAny, blocks: map[int][]int{2: nil}, free: 4, why: msg("sequence 1 does not exist", "序列 1 不存在")},
			{do: "append", seq: 1, n: 1, free: 3, why: "one block"},
			{do: "append", seq: 2, n: 1, free: 2, why: "one block"},
			{do: "fork", seq: 1, n: 2, err: errAny, blocks: map[int][]int{2: {1}}, free: 2, why: msg("sequence 2 already exists; forking over it would leak its blocks", "序列 2 已经存在；覆盖它来 fork 会泄漏它的块")},
			{do: "fork", seq: 1, n: 1, err: errAny, blocks: map[int][]int{1: {0}}, free: 2, why: msg("a sequence cannot be forked into itself", "序列不能 fork 成它自己")},
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
		t.Errorf(msg("changing the slice Blocks(1) returned changed the table (now %v, child %v) — return a copy, and give a forked child its own copy", "修改 Blocks(1) 返回的切片改动了块表（现在是 %v，子序列 %v）——请返回拷贝，并给 fork 出的子序列它自己的拷贝"), again, child)
	}
}
