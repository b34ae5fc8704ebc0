package rollout

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseGoldenAcceptsJSONLinesAndArrays(t *testing.T) {
	want := []GoldenQuery{
		{Query: "how is heeling reduced", Answers: []string{"reef in the mainsail"}},
		{Query: "sourdough starter", DocIDs: []string{"bread.md", "baking.md"}},
	}
	inputs := map[string]string{
		"json lines": "# golden queries for the docs corpus\n\n" +
			`{"query": "how is heeling reduced", "answers": ["reef in the mainsail"]}` + "\r\n" +
			"   # a comment after blanks\n" +
			`  {"query": "sourdough starter", "docIds": ["bread.md", "baking.md"]}  ` + "\n\n",
		"array": "\ufeff [\n" +
			`{"query": "how is heeling reduced", "answers": ["reef in the mainsail"]},` + "\n" +
			`{"query": "sourdough starter", "docIds": ["bread.md", "baking.md"]}` + "\n]\n",
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			got, err := ParseGolden([]byte(in))
			if err != nil {
				t.Fatalf("ParseGolden: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ParseGolden = %+v, want %+v", got, want)
			}
		})
	}
}

func TestParseGoldenRejects(t *testing.T) {
	ok := `{"query": "q", "docIds": ["d"]}`
	tests := []struct {
		name, in string
		want     []string // substrings of the error
	}{
		{"unknown field", ok + "\n\n" + `{"query": "q", "answer": ["x"]}`, []string{"line 3", `unknown field "answer"`}},
		{"empty query", `{"query": "  ", "docIds": ["d"]}`, []string{"line 1", "query is empty"}},
		{"missing query", "# c\n" + `{"docIds": ["d"]}`, []string{"line 2", "query is empty"}},
		{"no expectation", ok + "\n" + `{"query": "q"}`, []string{"line 2", "neither docIds nor answers"}},
		{"empty expectation lists", `{"query": "q", "docIds": [], "answers": []}`, []string{"line 1", "neither docIds nor answers"}},
		{"blank answer", `{"query": "q", "answers": ["x", " \t"]}`, []string{"line 1", "answers[1] is empty"}},
		{"blank document id", `{"query": "q", "docIds": [""]}`, []string{"line 1", "docIds[0] is empty"}},
		{"two objects on a line", ok + " " + ok, []string{"line 1", "unexpected data after the query object"}},
		{"malformed line", ok + "\n" + `{"query": "q", `, []string{"line 2"}},
		{"null line", "null", []string{"line 1", "query is empty"}},
		{"wrong type", `{"query": "q", "docIds": "d"}`, []string{"line 1", "docIds"}},
		{"unknown field in array", "[" + ok + `, {"query": "q", "doc_ids": ["d"]}]`, []string{"array index 1", `unknown field "doc_ids"`}},
		{"no expectation in array", "[" + ok + `, {"query": "q"}]`, []string{"array index 1", "neither docIds nor answers"}},
		{"malformed array", "[" + ok, []string{"golden queries"}},
		{"trailing data after array", "[" + ok + "] {}", []string{"golden queries"}},
		{"empty", "", []string{"no golden queries"}},
		{"only comments", "# nothing yet\n\n  # still nothing\n", []string{"no golden queries"}},
		{"empty array", " [ ] ", []string{"no golden queries"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseGolden([]byte(tc.in))
			if err == nil {
				t.Fatalf("ParseGolden accepted %q: %+v", tc.in, got)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
