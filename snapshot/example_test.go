package snapshot_test

import (
	"bytes"
	"errors"
	"fmt"

	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
)

// Read a snapshot PyTorch wrote (torch.cuda.memory._dump_snapshot() after
// _record_memory_history(), here for two CUDA streams) and look at what it holds.
func ExampleReadFile() {
	path, err := reference.File(reference.Workloads211, "multistream_branches__default.pickle")
	if err != nil {
		panic(err)
	}
	s, err := snapshot.ReadFile(path)
	if err != nil {
		panic(err)
	}
	var reserved int64
	for _, seg := range s.Segments {
		reserved += seg.TotalSize
	}
	cov := s.Coverage(0)
	fmt.Println("segments:", len(s.Segments), "reserved:", reserved>>20, "MiB")
	fmt.Println("events:", cov.Entries, "allocs:", cov.Actions[snapshot.ActionAlloc], "streams:", len(cov.Streams))
	fmt.Println("complete history:", cov.Complete())
	e := s.Traces[0][1]
	fmt.Printf("event 1: %s of %d bytes, from %s\n", e.Action, e.Size, e.Frames[len(e.Frames)-3].Name)
	cfg, err := s.Settings.Config()
	if err != nil {
		panic(err)
	}
	fmt.Printf("settings: %q\n", cfg.String())
	// Output:
	// segments: 17 reserved: 292 MiB
	// events: 183 allocs: 60 streams: 3
	// complete history: true
	// event 1: alloc of 16777216 bytes, from multistream_branches
	// settings: ""
}

// A pickle that would run code is refused before anything runs.
func ExampleRead_refused() {
	// pickle.dumps of an object whose __reduce__ returns (os.system, ("id",)).
	evil := []byte("\x80\x04\x95\x1d\x00\x00\x00\x00\x00\x00\x00\x8c\x05posix\x94\x8c\x06system\x94\x93\x94\x8c\x02id\x94\x85\x94R\x94.")
	_, err := snapshot.Read(bytes.NewReader(evil))
	fmt.Println(errors.Is(err, snapshot.ErrRefused))
	fmt.Println(err)
	// Output:
	// true
	// snapshot: pickle: opcode STACK_GLOBAL (0x93) at offset 28: it would import the Python object posix.system; refused: a memory snapshot holds only plain values
}
