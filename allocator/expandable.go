package allocator

import (
	"errors"
	"fmt"
)

// expSegment is one expandable segment (PyTorch's ExpandableSegment): an address range
// reserved up front, backed page by page.
type expSegment struct {
	base     uint64
	page     int64
	maxPages int64
	pages    []bool // mapped pages
	small    bool
}

func (e *expSegment) size() int64 { return e.page * e.maxPages }

// findExpandableBlock returns the lowest-address run of free and unmapped blocks of the
// stream's expandable segments with room for size bytes, reserving a new segment for
// the stream when none has room.
func (a *Allocator) findExpandableBlock(p *pool, size int64, stream uint64) (*block, error) {
	for c := p.unmapped.lowerBound(key{stream, 0, 0}); c != nil && c.stream == stream; c = p.unmapped.successor(c) {
		cand := c
		if c.prev != nil && !c.prev.allocated && !c.prev.pending {
			cand = c.prev
		}
		var room int64
		for x := cand; room < size && x != nil && !x.allocated && !x.pending; x = x.next {
			room += x.size
		}
		if room >= size {
			return cand, nil
		}
	}
	page := int64(SmallBuffer)
	if !p.small {
		page = a.largeSeg
	}
	want := a.total + a.total/8
	maxPages := (want + page - 1) / page
	if maxPages < 1 {
		maxPages = 1
	}
	base, err := a.vmem.ReserveAddress(uint64(maxPages * page))
	if err != nil {
		return nil, fmt.Errorf("allocator: reserving %d bytes of address space: %w", maxPages*page, err)
	}
	if base == 0 {
		return nil, errors.Join(fmt.Errorf("allocator: reserving %d bytes of address space returned address 0, where a block could never be freed (Free(0) is a no-op)", maxPages*page), a.vmem.FreeAddress(0, uint64(maxPages*page)))
	}
	es := &expSegment{base: base, page: page, maxPages: maxPages, small: p.small}
	a.expSegs = append(a.expSegs, es)
	cand := a.newBlock(base, es.size(), p, stream)
	cand.mapped = false
	cand.seg = es
	p.unmapped.insert(cand)
	return cand, nil
}

// mapBlock maps the pages under the first size bytes of the unmapped block toMap,
// merges the result with free neighbours and puts it in the free set (map_block).
// It returns false when the device has no room.
func (a *Allocator) mapBlock(toMap *block, size int64) (bool, error) {
	es := toMap.seg
	off := int64(toMap.addr - es.base)
	begin := off / es.page
	end := (off + size + es.page - 1) / es.page
	if begin == end {
		return false, nil
	}
	start := es.base + uint64(begin*es.page)
	n := (end - begin) * es.page
	// One physical allocation per page, as PyTorch's ExpandableSegment::map creates
	// one handle per page: the driver can only unmap whole mappings, and pages are
	// unmapped one by one later. A page that does not fit undoes this call's pages.
	for i := begin; i < end; i++ {
		if err := a.vmem.Map(es.base+uint64(i*es.page), uint64(es.page)); err != nil {
			for j := begin; j < i; j++ {
				if uerr := a.vmem.Unmap(es.base+uint64(j*es.page), uint64(es.page)); uerr != nil {
					return false, fmt.Errorf("allocator: undoing the map of page %#x: %w", es.base+uint64(j*es.page), uerr)
				}
			}
			if isOOM(err) {
				return false, nil
			}
			return false, fmt.Errorf("allocator: mapping %d bytes at %#x: %w", es.page, es.base+uint64(i*es.page), err)
		}
	}
	for i := begin; i < end; i++ {
		es.setPage(i, true)
	}
	p := toMap.pool
	p.unmapped.remove(toMap)
	toMap.mapped = true
	if n < toMap.size {
		rem := a.newBlock(toMap.addr+uint64(n), toMap.size-n, p, toMap.stream)
		rem.mapped = false
		rem.seg = es
		rem.splice(toMap, toMap.next)
		p.unmapped.insert(rem)
		toMap.size = n
	}
	a.tryMerge(toMap, toMap.prev)
	a.tryMerge(toMap, toMap.next)
	p.insertFree(toMap)
	a.totalAllocated += n
	a.stats.reservedBytes.increase(p.statIndex(), n)
	a.stats.numDeviceAlloc++
	if a.tracing {
		a.emit(ActionSegmentMap, start, n, toMap.stream, p, nil)
	}
	return true, nil
}

func (e *expSegment) setPage(i int64, v bool) {
	for int64(len(e.pages)) <= i {
		e.pages = append(e.pages, false)
	}
	e.pages[i] = v
}

// tryAllocateExpandableBlock maps enough pages for size bytes at the lowest address that
// fits and returns the free block holding them, out of the free set.
func (a *Allocator) tryAllocateExpandableBlock(p *pool, size int64, stream uint64) (*block, error) {
	cand, err := a.findExpandableBlock(p, size, stream)
	if err != nil {
		return nil, err
	}
	if !cand.mapped {
		ok, err := a.mapBlock(cand, min(cand.size, size))
		if !ok {
			return nil, err
		}
	}
	for cand.size < size {
		remaining := size - cand.size
		next := cand.next
		ok, err := a.mapBlock(next, min(remaining, next.size))
		if !ok {
			return nil, err
		}
		cand = next
	}
	p.blocks.remove(cand)
	return cand, nil
}

// unmapBlock unmaps every whole page inside the free block b (unmap_block); the partial
// pages at either end stay mapped as free blocks.
func (a *Allocator) unmapBlock(b *block) error {
	es := b.seg
	off := int64(b.addr - es.base)
	begin := (off + es.page - 1) / es.page
	end := (off + b.size) / es.page
	if begin >= end {
		return nil
	}
	// Page by page, as they were mapped. If the device refuses one, the pages
	// before it are still accounted as unmapped and the error is returned.
	var unmapErr error
	for i := begin; i < end; i++ {
		if err := a.vmem.Unmap(es.base+uint64(i*es.page), uint64(es.page)); err != nil {
			unmapErr = fmt.Errorf("allocator: unmapping %d bytes at %#x: %w", es.page, es.base+uint64(i*es.page), err)
			end = i
			break
		}
	}
	if begin == end {
		return unmapErr
	}
	start := es.base + uint64(begin*es.page)
	n := (end - begin) * es.page
	for i := begin; i < end; i++ {
		es.setPage(i, false)
	}
	p := b.pool
	p.blocks.remove(b)
	before := int64(start - b.addr)
	if before > 0 {
		bf := a.newBlock(b.addr, before, p, b.stream)
		bf.seg = es
		bf.splice(b.prev, b)
		p.insertFree(bf)
	}
	after := b.size - (before + n)
	if after > 0 {
		af := a.newBlock(start+uint64(n), after, p, b.stream)
		af.seg = es
		af.splice(b, b.next)
		p.insertFree(af)
	}
	b.addr, b.size, b.mapped = start, n, false
	a.tryMerge(b, b.prev)
	a.tryMerge(b, b.next)
	p.unmapped.insert(b)
	a.totalAllocated -= n
	a.stats.reservedBytes.decrease(p.statIndex(), n)
	if p.owner != nil && p.owner.mallocCount > 0 {
		p.owner.mallocCount-- // once per unmap, as unmap_block counts it
	}
	a.stats.numDeviceFree++
	if a.tracing {
		a.emit(ActionSegmentUnmap, start, n, b.stream, p, nil)
	}
	return unmapErr
}

// releaseExpandableSegment gives a fully unmapped segment's address range back.
func (a *Allocator) releaseExpandableSegment(b *block) error {
	es := b.seg
	if err := a.vmem.FreeAddress(es.base, uint64(es.size())); err != nil {
		return fmt.Errorf("allocator: freeing address range %#x: %w", es.base, err)
	}
	b.pool.unmapped.remove(b)
	for i, s := range a.expSegs {
		if s == es {
			a.expSegs = append(a.expSegs[:i], a.expSegs[i+1:]...)
			break
		}
	}
	a.recycle(b)
	return nil
}
