package sim_test

import (
	"errors"
	"strings"
	"testing"

	"memlab.dev/memlab/device/sim"
)

func TestVirtualMemoryRules(t *testing.T) {
	d := newDevice(t, sim.Config{Capacity: 64 * MiB, NoContext: true})
	r, err := d.ReserveAddress(8 * page)
	if err != nil {
		t.Fatal(err)
	}
	other, err := d.ReserveAddress(2 * page)
	if err != nil {
		t.Fatal(err)
	}
	seg, err := d.Malloc(page)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name     string
		run      func() error
		wantErr  string // "" for success
		wantFree uint64
	}{
		{"reserving takes no memory", func() error { return nil }, "", 62 * MiB},
		{"reserve a size that is not whole pages", func() error { _, err := d.ReserveAddress(page + 1); return err }, "multiple of the granularity", 62 * MiB},
		{"map two pages", func() error { return d.Map(r, 2*page) }, "", 58 * MiB},
		{"map a misaligned address", func() error { return d.Map(r+4096, page) }, "multiples of the granularity", 58 * MiB},
		{"map a partial page", func() error { return d.Map(r+4*page, page/2) }, "multiples of the granularity", 58 * MiB},
		{"map a page twice", func() error { return d.Map(r+page, 2*page) }, "already mapped", 58 * MiB},
		{"map past the reservation", func() error { return d.Map(r+6*page, 4*page) }, "runs past the end", 58 * MiB},
		{"map outside any reservation", func() error { return d.Map(seg, page) }, "not inside a reservation", 58 * MiB},
		{"map across two reservations", func() error { return d.Map(r+7*page, 2*page) }, "runs past the end", 58 * MiB},
		{"unmap a page never mapped", func() error { return d.Unmap(r+2*page, page) }, "not mapped", 58 * MiB},
		{"unmap a range only partly mapped", func() error { return d.Unmap(r+page, 2*page) }, "not mapped", 58 * MiB},
		{"free a reservation with mapped pages", func() error { return d.FreeAddress(r, 8*page) }, "still has 2 mapped pages", 58 * MiB},
		{"unmap one page of a two-page mapping", func() error { return d.Unmap(r, page) }, "cuts through a mapping", 58 * MiB},
		{"map the last page", func() error { return d.Map(r+7*page, page) }, "", 56 * MiB},
		{"map pages of a second reservation", func() error { return d.Map(other, 2*page) }, "", 52 * MiB},
		{"free a reservation with the wrong size", func() error { return d.FreeAddress(r, 4*page) }, "size", 52 * MiB},
		{"free an interior address", func() error { return d.FreeAddress(r+page, 7*page) }, "not an address returned by ReserveAddress", 52 * MiB},
		{"unmap the rest", func() error {
			if err := d.Unmap(r, 2*page); err != nil {
				return err
			}
			return d.Unmap(r+7*page, page)
		}, "", 58 * MiB},
		{"free the reservation", func() error { return d.FreeAddress(r, 8*page) }, "", 58 * MiB},
		{"free it again", func() error { return d.FreeAddress(r, 8*page) }, "not an address returned", 58 * MiB},
	}
	for _, s := range steps {
		err := s.run()
		switch {
		case s.wantErr == "" && err != nil:
			t.Fatalf("%s: %v", s.name, err)
		case s.wantErr != "" && (!errors.Is(err, sim.ErrInvalidValue) || !strings.Contains(err.Error(), s.wantErr)):
			t.Fatalf("%s: got %v, want an ErrInvalidValue containing %q", s.name, err, s.wantErr)
		}
		if free, _ := memInfo(t, d); free != s.wantFree {
			t.Fatalf("%s: free = %d MiB, want %d MiB", s.name, free/MiB, s.wantFree/MiB)
		}
	}
	st := d.Stats()
	if st.Maps != 3 || st.Unmaps != 2 || st.Reserves != 2 || st.AddressFrees != 1 || st.Mapped != 4*MiB || st.Peak != 12*MiB {
		t.Errorf("stats %+v", st)
	}
}

func TestMapOutOfMemory(t *testing.T) {
	d := newDevice(t, sim.Config{Capacity: 8 * MiB, NoContext: true})
	r, err := d.ReserveAddress(16 * MiB) // reservations may exceed the capacity, as PyTorch's do
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Map(r, 6*MiB); err != nil {
		t.Fatal(err)
	}
	err = d.Map(r+6*MiB, 4*MiB)
	var oom *sim.OutOfMemoryError
	if !errors.As(err, &oom) || oom.Op != "Map" || !oom.OutOfMemory() || oom.Free != 2*MiB {
		t.Fatalf("got %v, want an OutOfMemoryError of Map with 2 MiB free", err)
	}
	if err := d.Map(r+6*MiB, 2*MiB); err != nil {
		t.Errorf("mapping the last page: %v", err)
	}
}
