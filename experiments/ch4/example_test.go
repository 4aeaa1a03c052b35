package ch4_test

import (
	"fmt"

	"memlab.dev/memlab/experiments/ch4"
	"memlab.dev/memlab/model"
)

// The chapter's three techniques against the baseline on the tiny model:
// every mode gives the same logits, and the table sets the course's figures
// beside the measurements.
func ExampleInference() {
	r, err := ch4.Inference(ch4.Setup{Device: "sim"}, "tiny", model.Baseline, model.Chapter)
	if err != nil {
		panic(err)
	}
	base, _ := r.Row(model.Baseline)
	chapter, _ := r.Row(model.Chapter)
	fmt.Printf("largest logit difference %g\n", r.MaxLogitDiff)
	fmt.Printf("allocator calls: baseline %d, chapter %d\n", base.AllocCalls, chapter.AllocCalls)
	for _, c := range r.Claims() {
		if c.Claim != "" {
			fmt.Printf("%s — %v against %v, %v\n", c.Claim, c.Mode, c.Ref, c.What)
		}
	}
	// Output:
	// largest logit difference 0
	// allocator calls: baseline 284, chapter 164
	// views + in-place + pooling combined: 20–30% — chapter against baseline, peak memory above weights
	// KV-cache pooling, latency: 5–10% — chapter against baseline, median token latency
}
