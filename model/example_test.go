package model_test

import (
	"fmt"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/model"
)

// Generate a few tokens with the optimised engine; the baseline engine gives
// the same tokens.
func Example() {
	lab := memlab.MustOpen(memlab.Sim("1GiB"), memlab.AllocConf(""), memlab.NotCurrent())
	defer lab.Close()
	size, _ := model.SizeByName("tiny")
	m, err := model.New(lab, size.Config)
	if err != nil {
		panic(err)
	}
	defer m.Release()
	req := model.Request{Prompt: []int64{5, 17, 3, 42}, Decode: 6}
	for _, mode := range []model.Mode{model.Baseline, model.Optimised} {
		e, err := m.NewEngine(mode, model.EngineOptions{})
		if err != nil {
			panic(err)
		}
		g, err := e.Generate(req)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-9v %v\n", mode, g.Tokens)
		e.Release()
	}
	fmt.Println("weights:", m.WeightBytes(), "bytes =", size.Config.Params(), "× 4")
	// Output:
	// baseline  [42 31 31 31 41 41]
	// optimised [42 31 31 31 41 41]
	// weights: 111872 bytes = 27968 × 4
}
