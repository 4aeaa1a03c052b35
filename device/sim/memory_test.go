package sim_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"memlab.dev/memlab/device/sim"
	"memlab.dev/memlab/tensor"
)

// rss returns the resident memory of this process in bytes (Linux only).
func rss(t *testing.T) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status: cannot measure resident memory here")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Skip("no VmRSS in /proc/self/status")
	return 0
}

func TestMemoryIsBackedLazily(t *testing.T) {
	d := newDevice(t, sim.Config{})
	before := rss(t)
	big, err := d.Malloc(64 * GiB)
	if err != nil {
		t.Fatal(err)
	}
	if st := d.Stats(); st.Backed != 0 || st.Allocated != 64*GiB {
		t.Fatalf("after Malloc(64 GiB): Backed %d, Allocated %d; want 0 and 64 GiB", st.Backed, st.Allocated)
	}
	// Touching a few bytes backs the segment with address space, not RAM.
	if err := d.CopyFromHost(tensor.Ptr(big+40*GiB), []byte("hello")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 5)
	if err := d.CopyToHost(got, tensor.Ptr(big+40*GiB)); err != nil || string(got) != "hello" {
		t.Fatalf("read back %q, %v", got, err)
	}
	if st := d.Stats(); st.Backed != 64*GiB {
		t.Errorf("Backed = %d after touching the segment, want 64 GiB", st.Backed)
	}
	if grew := rss(t) - before; int64(grew) > 256*MiB {
		t.Errorf("resident memory grew by %d MiB for a touched 64 GiB segment", grew/MiB)
	}
	if err := d.Free(big); err != nil {
		t.Fatal(err)
	}
	if st := d.Stats(); st.Backed != 0 {
		t.Errorf("Backed = %d after Free, want 0", st.Backed)
	}

	// PyTorch's expandable segments reserve 1.125 × the device memory (90 GiB
	// here) and map pages on demand; touching one page costs one page.
	r, err := d.ReserveAddress(90 * GiB)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Map(r+50*GiB, page); err != nil {
		t.Fatal(err)
	}
	x := tensor.Strided{Base: tensor.Ptr(r + 50*GiB), DType: tensor.Float32, Shape: []int{page / 4}, Strides: []int{1}}
	if err := d.Fill(x, 1); err != nil {
		t.Fatal(err)
	}
	if grew := rss(t) - before; int64(grew) > 256*MiB {
		t.Errorf("resident memory grew by %d MiB for one mapped page of a 90 GiB reservation", grew/MiB)
	}
	if err := d.Unmap(r+50*GiB, page); err != nil {
		t.Fatal(err)
	}
	if err := d.FreeAddress(r, 90*GiB); err != nil {
		t.Fatal(err)
	}
}

func putFloats(vals ...float32) []byte {
	b := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

func getFloats(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func TestKernelsRunOnDeviceMemory(t *testing.T) {
	d := newDevice(t, sim.Config{})
	a, err := d.Malloc(64)
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.Strided{Base: tensor.Ptr(a), DType: tensor.Float32, Shape: []int{2, 2}, Strides: []int{2, 1}}
	y := x
	y.Offset = 4
	if err := d.CopyFromHost(x.Base, putFloats(1, 2, 3, 4)); err != nil {
		t.Fatal(err)
	}
	if err := d.Matmul(y, x, x); err != nil {
		t.Fatal(err)
	}
	if err := d.Synchronize(); err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 16)
	if err := d.CopyToHost(out, tensor.Ptr(a+16)); err != nil {
		t.Fatal(err)
	}
	if got, want := getFloats(out), []float32{7, 10, 15, 22}; !slices.Equal(got, want) {
		t.Errorf("x @ x = %v, want %v", got, want)
	}
	// A kernel reading past the segment is an illegal address, not a crash.
	past := x
	past.Offset = int(sim.Granularity/4) - 2
	err = d.Unary(tensor.Neg, x, past, 0)
	if !errors.Is(err, sim.ErrIllegalAddress) || !strings.HasPrefix(err.Error(), "kernels/cpu: Unary(neg): src:") {
		t.Errorf("reading past the segment: got %v", err)
	}
}

func TestMappedPagesActAsOneRange(t *testing.T) {
	d := newDevice(t, sim.Config{})
	r, err := d.ReserveAddress(3 * page)
	if err != nil {
		t.Fatal(err)
	}
	// Two separate mappings; a tensor straddles the boundary between them.
	if err := d.Map(r, page); err != nil {
		t.Fatal(err)
	}
	if err := d.Map(r+page, page); err != nil {
		t.Fatal(err)
	}
	at := tensor.Ptr(r + page - 8)
	if err := d.CopyFromHost(at, putFloats(1, 2, 3, 4)); err != nil {
		t.Fatal(err)
	}
	x := tensor.Strided{Base: at, DType: tensor.Float32, Shape: []int{4}, Strides: []int{1}}
	if err := d.Unary(tensor.Scale, x, x, 10); err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 16)
	if err := d.CopyToHost(out, at); err != nil {
		t.Fatal(err)
	}
	if got, want := getFloats(out), []float32{10, 20, 30, 40}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// The third page is not mapped: touching it is an illegal address.
	if err := d.CopyToHost(make([]byte, 16), tensor.Ptr(r+2*page-8)); !errors.Is(err, sim.ErrIllegalAddress) || !strings.Contains(err.Error(), "not mapped") {
		t.Errorf("reading into an unmapped page: got %v", err)
	}
	// Unmapped and mapped again, a page reads as zeros.
	if err := d.Unmap(r+page, page); err != nil {
		t.Fatal(err)
	}
	if err := d.CopyToHost(out, at); !errors.Is(err, sim.ErrIllegalAddress) {
		t.Errorf("reading an unmapped page: got %v", err)
	}
	if err := d.Map(r+page, page); err != nil {
		t.Fatal(err)
	}
	if err := d.CopyToHost(out, at); err != nil {
		t.Fatal(err)
	}
	if got, want := getFloats(out), []float32{10, 20, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("after remapping the second page: got %v, want %v", got, want)
	}
}

func TestFreedMemoryIsUnreachable(t *testing.T) {
	d := newDevice(t, sim.Config{})
	a, err := d.Malloc(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.CopyFromHost(tensor.Ptr(a), []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := d.Free(a); err != nil {
		t.Fatal(err)
	}
	if err := d.CopyToHost(make([]byte, 3), tensor.Ptr(a)); !errors.Is(err, sim.ErrIllegalAddress) {
		t.Errorf("reading freed memory: got %v", err)
	}
	// The address is reused, and the new allocation does not see old data.
	b, err := d.Malloc(page)
	if err != nil || b != a {
		t.Fatalf("Malloc after Free = %#x, %v; want %#x", b, err, a)
	}
	got := make([]byte, 3)
	if err := d.CopyToHost(got, tensor.Ptr(b)); err != nil || !bytes.Equal(got, []byte{0, 0, 0}) {
		t.Errorf("new allocation reads %v, %v; want zeros", got, err)
	}
}

func TestClose(t *testing.T) {
	d := newDevice(t, sim.Config{})
	a, err := d.Malloc(page)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.ReserveAddress(page); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		"Malloc":         func() error { _, err := d.Malloc(1); return err },
		"Free":           func() error { return d.Free(a) },
		"MemGetInfo":     func() error { _, _, err := d.MemGetInfo(); return err },
		"ReserveAddress": func() error { _, err := d.ReserveAddress(page); return err },
		"Map":            func() error { return d.Map(a, page) },
		"Unmap":          func() error { return d.Unmap(a, page) },
		"FreeAddress":    func() error { return d.FreeAddress(a, page) },
		"CopyToHost":     func() error { return d.CopyToHost(make([]byte, 1), tensor.Ptr(a)) },
		"Fill (empty)": func() error {
			return d.Fill(tensor.Strided{DType: tensor.Float32, Shape: []int{0}, Strides: []int{1}}, 0)
		},
		"Synchronize": d.Synchronize,
		"Time":        func() error { _, err := d.Time(func() error { return nil }); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, sim.ErrClosed) {
			t.Errorf("%s after Close: got %v, want ErrClosed", name, err)
		}
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestTime(t *testing.T) {
	d := newDevice(t, sim.Config{})
	boom := errors.New("boom")
	dt, err := d.Time(func() error { return boom })
	if !errors.Is(err, boom) || dt < 0 {
		t.Errorf("Time = %v, %v; want a duration and f's error", dt, err)
	}
	if _, err := d.Time(nil); err == nil {
		t.Error("Time(nil) succeeded")
	}
}
