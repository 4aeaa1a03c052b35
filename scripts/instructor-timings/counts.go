package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"memlab.dev/memlab/internal/workbook"
	"memlab.dev/memlab/progress"
)

// exerciseFacts are the figures the guides quote about the exercises, by key:
// "count" (all of them), "count NN" (those of notebook NN) and "numbers NN"
// (their numbers, runs joined: "1–11, 15, 16"), from the exercises folder.
func exerciseFacts(root string) (map[string]string, error) {
	exs, err := workbook.Load(root)
	if err != nil {
		return nil, err
	}
	facts := map[string]string{"count": strconv.Itoa(len(exs))}
	byNotebook := map[string][]int{}
	for _, ex := range exs {
		if nn := progress.NotebookOf(ex.Section); nn != "" {
			byNotebook[nn] = append(byNotebook[nn], ex.Number)
		}
	}
	for nn, numbers := range byNotebook {
		facts["count "+nn] = strconv.Itoa(len(numbers))
		facts["numbers "+nn] = runs(numbers)
	}
	return facts, nil
}

// runs writes ascending numbers with consecutive runs of three or more joined
// by an en dash: 1–11, 15, 16.
func runs(numbers []int) string {
	var parts []string
	for i := 0; i < len(numbers); {
		j := i
		for j+1 < len(numbers) && numbers[j+1] == numbers[j]+1 {
			j++
		}
		switch {
		case j-i >= 2:
			parts = append(parts, fmt.Sprintf("%d–%d", numbers[i], numbers[j]))
		default:
			for k := i; k <= j; k++ {
				parts = append(parts, strconv.Itoa(numbers[k]))
			}
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// fact matches a generated figure in a guide: <!-- exercises KEY -->VALUE<!-- /exercises -->.
var fact = regexp.MustCompile(`<!-- exercises ([a-z]+(?: [0-9]{2})?) -->([^<]*)<!-- /exercises -->`)

// replaceFacts writes each figure of facts between its markers in text; a
// marker whose key facts lacks is an error.
func replaceFacts(text string, facts map[string]string) (string, error) {
	var bad []string
	out := fact.ReplaceAllStringFunc(text, func(m string) string {
		key := fact.FindStringSubmatch(m)[1]
		v, ok := facts[key]
		if !ok {
			bad = append(bad, key)
			return m
		}
		return "<!-- exercises " + key + " -->" + v + "<!-- /exercises -->"
	})
	if len(bad) > 0 {
		return "", fmt.Errorf("no figure %q for the exercises' markers", bad)
	}
	return out, nil
}
