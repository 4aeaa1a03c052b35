package cuda

// NewFakeDevice opens a Device over fakeDriver (host memory, launches recorded
// but not run) for the external tests; launched returns the kernels launched.
func NewFakeDevice(total uint64) (d *Device, launched func() []string, err error) {
	f := newFakeDriver(total)
	d, err = newDevice(0, f, f)
	return d, f.launched, err
}
