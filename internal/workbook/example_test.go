package workbook_test

import (
	"fmt"
	"os"

	"memlab.dev/memlab/internal/workbook"
)

func ExampleProgress_NextHint() {
	ex := workbook.Exercise{Number: 4, Slug: "04-round-size", Hints: []string{"Round up to a multiple of 512.", "bits.Len64 gives floor(log2)."}}
	var p workbook.Progress
	for {
		hint, n, ok := p.NextHint(ex)
		if !ok {
			break
		}
		fmt.Printf("hint %d of %d: %s\n", n, len(ex.Hints), hint)
	}
	fmt.Println("revealed:", p.HintsRevealed[ex.Slug])
	// Output:
	// hint 1 of 2: Round up to a multiple of 512.
	// hint 2 of 2: bits.Len64 gives floor(log2).
	// revealed: 2
}

func ExampleWriteReport() {
	ex := workbook.Exercise{Number: 4, Slug: "04-round-size", Title: "Rounding a request", Section: "Notebook 02, §2.2 The caching allocator"}
	r := &workbook.Report{Slug: ex.Slug, Status: workbook.Fail, Tests: []*workbook.Test{
		{Name: "TestA_PlainRounding", Status: workbook.Pass, Cases: []*workbook.Case{{Name: "1", Status: workbook.Pass}, {Name: "1000", Status: workbook.Pass}}},
		{Name: "TestB_PowerOfTwoDivisions", Status: workbook.Fail, Cases: []*workbook.Case{
			{Name: "2049_with_4_divisions", Status: workbook.Pass},
			{Name: "1200_with_4_divisions", Status: workbook.Fail, Output: []string{
				"round_size(1200) with 4 divisions: want 1536, got 1280 — 1200 is not above 512×4, so plain 512-byte rounding applies"}},
		}},
		{Name: "TestC_IntervalIndex", Status: workbook.Fail, Cases: []*workbook.Case{
			{Name: "1", Status: workbook.Fail, Output: []string{"IntervalIndex: not implemented yet — write it"}},
			{Name: "0", Status: workbook.Skip},
		}},
	}}
	workbook.WriteReport(os.Stdout, ex, r)
	// Output:
	// Exercise 4 · Rounding a request  (Notebook 02, §2.2 The caching allocator)
	//
	//   PASS  TestA_PlainRounding (2/2)
	//   FAIL  TestB_PowerOfTwoDivisions (1/2)
	//         ✗ 1200 with 4 divisions
	//           round_size(1200) with 4 divisions: want 1536, got 1280 — 1200 is not above 512×4, so plain 512-byte rounding applies
	//   TODO  TestC_IntervalIndex — IntervalIndex: not implemented yet
	//
	// FAIL  3 of 6 cases pass.
}

func ExampleWriteList() {
	exs := []workbook.Exercise{
		{Number: 1, Slug: "01-strides", Title: "Row-major strides", Section: "Notebook 02, §2.1", Hints: []string{"a", "b", "c"}},
		{Number: 2, Slug: "02-contiguous", Title: "Is it contiguous?", Section: "Notebook 02, §2.1", Hints: []string{"a"}},
	}
	reports := map[string]*workbook.Report{
		"01-strides": {Status: workbook.Pass, Tests: []*workbook.Test{{Name: "TestA", Status: workbook.Pass, Cases: []*workbook.Case{{Status: workbook.Pass}}}}},
		"02-contiguous": {Status: workbook.Fail, Tests: []*workbook.Test{{Name: "TestA", Status: workbook.Fail, Cases: []*workbook.Case{
			{Status: workbook.Fail, Output: []string{"IsContiguous: not implemented yet"}}}}}},
	}
	p := workbook.Progress{HintsRevealed: map[string]int{"01-strides": 2}}
	workbook.WriteList(os.Stdout, exs, reports, p)
	// Output:
	// #  Exercise           Section            Status       Hints
	// 1  Row-major strides  Notebook 02, §2.1  passing      2/3
	// 2  Is it contiguous?  Notebook 02, §2.1  not started  0/1
	//
	// 1 of 2 exercises pass. Next: exercise 2 — read exercises/02-contiguous/README.md, then "go run ./cmd/memlab exercises check 2" ("go run ./cmd/memlab exercises hint 2" if stuck).
}
