package split

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// codeCase is one expected output of LangChain's
// RecursiveCharacterTextSplitter.from_language in
// testdata/langchain_code_cases.json: a file of testdata/code or a
// generated text, split with add_start_index.
type codeCase struct {
	Name               string   `json:"name"`
	Language           Language `json:"language"`
	File               string   `json:"file"`
	Input              string   `json:"input"`
	ChunkSize          int      `json:"chunk_size"`
	ChunkOverlap       int      `json:"chunk_overlap"`
	Expected           []string `json:"expected"`
	ExpectedStartIndex []int    `json:"expected_start_index"`
}

func TestLanguageSplitsMatchLangChain(t *testing.T) {
	var cases []codeCase
	readJSON(t, filepath.Join("testdata", "langchain_code_cases.json"), &cases)
	languages := map[Language]int{}
	chunks := 0
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			text := tc.Input
			if tc.File != "" {
				data, err := os.ReadFile(filepath.Join("testdata", "code", tc.File))
				if err != nil {
					t.Fatal(err)
				}
				text = string(data)
			}
			o, err := languageOptions(tc.Language, tc.ChunkSize, tc.ChunkOverlap)
			if err != nil {
				t.Fatal(err)
			}
			r, err := NewRecursive(o)
			if err != nil {
				t.Fatal(err)
			}
			if d := diffStrings(r.SplitText(text), tc.Expected); d != "" {
				t.Fatal(d)
			}
			var starts []int
			for _, c := range r.Split(text) {
				starts = append(starts, c.Start)
			}
			if !reflect.DeepEqual(starts, tc.ExpectedStartIndex) {
				t.Errorf("start indexes %v, want %v", starts, tc.ExpectedStartIndex)
			}
			languages[tc.Language]++
			chunks += len(tc.Expected)
		})
	}
	if len(languages) != len(Languages())-1 {
		t.Errorf("cases cover %d languages, want every language but perl (%d)", len(languages), len(Languages())-1)
	}
	t.Logf("from_language: %d cases in %d languages, %d chunks equal to LangChain's", len(cases), len(languages), chunks)
}

// languageOptions returns what LangChain's
// RecursiveCharacterTextSplitter.from_language(lang, chunk_size=chunkSize,
// chunk_overlap=chunkOverlap) configures: the language's separators as
// regular expressions, with DefaultOptions' other settings.
func languageOptions(lang Language, chunkSize, chunkOverlap int) (Options, error) {
	seps, err := LanguageSeparators(lang)
	if err != nil {
		return Options{}, err
	}
	o := DefaultOptions(chunkSize, chunkOverlap)
	o.Separators, o.IsSeparatorRegex = seps, true
	return o, nil
}
