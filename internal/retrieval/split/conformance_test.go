package split

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/sharedtest"
)

// The conformance data are expected outputs of the real LangChain
// langchain_text_splitters code; see shared/conformance/langchain/README.md.

type lcParams struct {
	ChunkSize            int             `json:"chunk_size"`
	ChunkOverlap         int             `json:"chunk_overlap"`
	LengthFunction       string          `json:"length_function"`
	KeepSeparator        json.RawMessage `json:"keep_separator"`
	AddStartIndex        bool            `json:"add_start_index"`
	StripWhitespace      *bool           `json:"strip_whitespace"`
	Separator            *string         `json:"separator"`
	Separators           []string        `json:"separators"`
	IsSeparatorRegex     bool            `json:"is_separator_regex"`
	HeadersToSplitOn     [][2]string     `json:"headers_to_split_on"`
	ReturnEachLine       bool            `json:"return_each_line"`
	StripHeaders         *bool           `json:"strip_headers"`
	CustomHeaderPatterns map[string]int  `json:"custom_header_patterns"`
}

type lcDoc struct {
	PageContent string         `json:"page_content"`
	Metadata    map[string]any `json:"metadata"`
}

type lcCase struct {
	Name                string          `json:"name"`
	Splitter            string          `json:"splitter"`
	Method              string          `json:"method"`
	Params              lcParams        `json:"params"`
	Input               json.RawMessage `json:"input"`
	Expected            []string        `json:"expected"`
	ExpectedStartIndex  []int           `json:"expected_start_index"`
	ExpectedDocuments   []lcDoc         `json:"expected_documents"`
	ExpectedError       string          `json:"expected_error"`
	RequiresPythonRegex bool            `json:"requires_python_regex"`
	LoggedWarnings      []string        `json:"logged_warnings"`
}

type lcDocument struct {
	File string  `json:"file"`
	Text string  `json:"text"`
	Runs []lcRun `json:"runs"`
}

type lcRun struct {
	Name   string `json:"name"`
	Params struct {
		Parent lcParams `json:"parent"`
		Child  lcParams `json:"child"`
	} `json:"params"`
	Parents []struct {
		Text       string `json:"text"`
		StartIndex int    `json:"start_index"`
	} `json:"parents"`
	Children []struct {
		ParentIndex int    `json:"parent_index"`
		Text        string `json:"text"`
		StartIndex  int    `json:"start_index"`
	} `json:"children"`
}

func conformanceDir(tb testing.TB) string {
	return sharedtest.Dir(tb, "conformance", "langchain")
}

func readJSON(tb testing.TB, path string, v any) {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
}

func (p lcParams) keep(def KeepSeparator) (KeepSeparator, error) {
	if len(p.KeepSeparator) == 0 {
		return def, nil
	}
	var v any
	if err := json.Unmarshal(p.KeepSeparator, &v); err != nil {
		return 0, err
	}
	switch v {
	case false:
		return KeepNone, nil
	case true, "start":
		return KeepStart, nil
	case "end":
		return KeepEnd, nil
	}
	return 0, fmt.Errorf("keep_separator %s", p.KeepSeparator)
}

func (p lcParams) strip() bool { return p.StripWhitespace == nil || *p.StripWhitespace }

// lcSplitter is what the cases call on a splitter.
type lcSplitter interface {
	TextSplitter
	MergeSplits(splits []string, separator string) []string
}

func buildSplitter(kind string, p lcParams, warn func(string)) (lcSplitter, error) {
	if p.LengthFunction != "" && p.LengthFunction != "len" {
		return nil, fmt.Errorf("length_function %q", p.LengthFunction)
	}
	switch kind {
	case "CharacterTextSplitter":
		keep, err := p.keep(KeepNone)
		if err != nil {
			return nil, err
		}
		sep := "\n\n"
		if p.Separator != nil {
			sep = *p.Separator
		}
		return NewCharacter(CharacterOptions{
			ChunkSize: p.ChunkSize, ChunkOverlap: p.ChunkOverlap, Separator: sep,
			IsSeparatorRegex: p.IsSeparatorRegex, KeepSeparator: keep, StripWhitespace: p.strip(), Warn: warn,
		})
	case "RecursiveCharacterTextSplitter":
		keep, err := p.keep(KeepStart)
		if err != nil {
			return nil, err
		}
		return NewRecursive(Options{
			ChunkSize: p.ChunkSize, ChunkOverlap: p.ChunkOverlap, Separators: p.Separators,
			IsSeparatorRegex: p.IsSeparatorRegex, KeepSeparator: keep, StripWhitespace: p.strip(), Warn: warn,
		})
	}
	return nil, fmt.Errorf("unknown splitter %q", kind)
}

// diffStrings reports the first difference between two chunk lists.
func diffStrings(got, want []string) string {
	if len(got) == len(want) {
		for i := range got {
			if got[i] != want[i] {
				return fmt.Sprintf("chunk %d: got %q, want %q", i, got[i], want[i])
			}
		}
		return ""
	}
	return fmt.Sprintf("got %d chunks, want %d\n got: %q\nwant: %q", len(got), len(want), got, want)
}

// normJSON turns v into what encoding/json decodes it to, for comparing
// metadata.
func normJSON(tb testing.TB, v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		tb.Fatal(err)
	}
	return out
}

type tally struct{ pass, skip, fail int }

func (c *tally) record(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	ok := t.Run(name, f)
	switch {
	case !ok:
		c.fail++
	default:
		c.pass++
	}
}

func TestConformanceCases(t *testing.T) {
	dir := conformanceDir(t)
	var total tally
	skipped := 0
	for _, file := range []string{"cases_upstream.json", "cases_extra.json", "cases_markdown_header_upstream.json"} {
		var cases []lcCase
		readJSON(t, filepath.Join(dir, file), &cases)
		var c tally
		for _, tc := range cases {
			wasSkipped := false
			c.record(t, file+"/"+tc.Name, func(t *testing.T) {
				defer func() { wasSkipped = t.Skipped() }()
				runCase(t, tc)
			})
			if wasSkipped {
				c.pass--
				c.skip++
			}
		}
		t.Logf("%s: %d cases, %d passed, %d skipped, %d failed", file, len(cases), c.pass, c.skip, c.fail)
		total.pass += c.pass
		total.fail += c.fail
		skipped += c.skip
	}
	t.Logf("LangChain conformance cases: %d passed, %d skipped, %d failed", total.pass, skipped, total.fail)
}

func runCase(t *testing.T, tc lcCase) {
	if tc.Splitter == "MarkdownHeaderTextSplitter" {
		runMarkdownHeaderCase(t, tc)
		return
	}
	var warnings []string
	s, err := buildSplitter(tc.Splitter, tc.Params, func(m string) { warnings = append(warnings, m) })
	if tc.Method == "constructor" {
		if err == nil {
			t.Fatalf("no error, want %q", tc.ExpectedError)
		}
		if err.Error() != tc.ExpectedError {
			t.Fatalf("error %q, want %q", err, tc.ExpectedError)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var docs []Document
	switch tc.Method {
	case "split_text":
		var text string
		if err := json.Unmarshal(tc.Input, &text); err != nil {
			t.Fatal(err)
		}
		got = s.SplitText(text)
		// Split must agree with SplitText (and warn the same way).
		w := warnings
		chunks := s.Split(text)
		warnings = w
		if len(chunks) != len(got) {
			t.Fatalf("Split returned %d chunks, SplitText %d", len(chunks), len(got))
		}
		for i := range chunks {
			if chunks[i].Text != got[i] {
				t.Fatalf("Split chunk %d %q, SplitText %q", i, chunks[i].Text, got[i])
			}
		}
	case "_merge_splits":
		var in struct {
			Splits    []string `json:"splits"`
			Separator string   `json:"separator"`
		}
		if err := json.Unmarshal(tc.Input, &in); err != nil {
			t.Fatal(err)
		}
		got = s.MergeSplits(in.Splits, in.Separator)
	case "create_documents":
		var in struct {
			Texts     []string         `json:"texts"`
			Metadatas []map[string]any `json:"metadatas"`
		}
		if err := json.Unmarshal(tc.Input, &in); err != nil {
			t.Fatal(err)
		}
		docs = CreateDocuments(s, in.Texts, in.Metadatas, tc.Params.AddStartIndex)
	case "split_documents":
		var in struct {
			Documents []lcDoc `json:"documents"`
		}
		if err := json.Unmarshal(tc.Input, &in); err != nil {
			t.Fatal(err)
		}
		var ds []Document
		for _, d := range in.Documents {
			ds = append(ds, Document{Text: d.PageContent, Metadata: d.Metadata})
		}
		docs = SplitDocuments(s, ds, tc.Params.AddStartIndex)
		// The input metadata must not have been modified.
		for i, d := range in.Documents {
			if !reflect.DeepEqual(ds[i].Metadata, d.Metadata) {
				t.Errorf("input metadata %d modified", i)
			}
		}
	default:
		t.Fatalf("unknown method %q", tc.Method)
	}
	if docs != nil || tc.ExpectedDocuments != nil {
		got = nil
		var starts []int
		for _, d := range docs {
			got = append(got, d.Text)
			if v, ok := d.Metadata[StartIndexKey]; ok && tc.Params.AddStartIndex {
				starts = append(starts, v.(int))
			}
		}
		if tc.ExpectedStartIndex != nil && !reflect.DeepEqual(starts, tc.ExpectedStartIndex) {
			t.Errorf("start_index %v, want %v", starts, tc.ExpectedStartIndex)
		}
		if len(docs) == len(tc.ExpectedDocuments) {
			for i, d := range docs {
				want := tc.ExpectedDocuments[i]
				if d.Text != want.PageContent {
					t.Errorf("document %d: %q, want %q", i, d.Text, want.PageContent)
				}
				if g, w := normJSON(t, d.Metadata), normJSON(t, want.Metadata); !reflect.DeepEqual(g, w) {
					t.Errorf("document %d metadata %v, want %v", i, g, w)
				}
			}
		} else {
			t.Errorf("%d documents, want %d", len(docs), len(tc.ExpectedDocuments))
		}
	}
	if d := diffStrings(got, tc.Expected); d != "" {
		t.Error(d)
	}
	if tc.LoggedWarnings != nil && !reflect.DeepEqual(warnings, tc.LoggedWarnings) {
		t.Errorf("warnings %q, want %q", warnings, tc.LoggedWarnings)
	}
}

func runMarkdownHeaderCase(t *testing.T, tc lcCase) {
	var text string
	if err := json.Unmarshal(tc.Input, &text); err != nil {
		t.Fatal(err)
	}
	o := MarkdownHeaderOptions{
		ReturnEachLine:     tc.Params.ReturnEachLine,
		KeepHeaders:        tc.Params.StripHeaders != nil && !*tc.Params.StripHeaders,
		CustomHeaderLevels: tc.Params.CustomHeaderPatterns,
	}
	for _, h := range tc.Params.HeadersToSplitOn {
		o.Headers = append(o.Headers, HeaderToSplitOn{Marker: h[0], Name: h[1]})
	}
	got := NewMarkdownHeaderSplitter(o).SplitText(text)
	if len(got) != len(tc.ExpectedDocuments) {
		t.Fatalf("%d sections, want %d: %q", len(got), len(tc.ExpectedDocuments), got)
	}
	for i, s := range got {
		want := tc.ExpectedDocuments[i]
		if s.Text != want.PageContent {
			t.Errorf("section %d: %q, want %q", i, s.Text, want.PageContent)
		}
		if g, w := normJSON(t, s.Metadata), normJSON(t, want.Metadata); !reflect.DeepEqual(g, w) {
			t.Errorf("section %d metadata %v, want %v", i, g, w)
		}
	}
}

func loadConformanceDocuments(tb testing.TB) []lcDocument {
	dir := filepath.Join(conformanceDir(tb), "documents")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(files) == 0 {
		tb.Fatalf("no documents in %s", dir)
	}
	sort.Strings(files)
	docs := make([]lcDocument, len(files))
	for i, f := range files {
		readJSON(tb, f, &docs[i])
		if docs[i].File == "" {
			docs[i].File = filepath.Base(f)
		}
	}
	return docs
}

func TestConformanceDocuments(t *testing.T) {
	docs := loadConformanceDocuments(t)
	var c tally
	parents, children := 0, 0
	for _, doc := range docs {
		for _, run := range doc.Runs {
			name := strings.TrimSuffix(filepath.Base(doc.File), ".md") + "/" + run.Name
			c.record(t, name, func(t *testing.T) {
				ps, err := buildSplitter("RecursiveCharacterTextSplitter", run.Params.Parent, nil)
				if err != nil {
					t.Fatal(err)
				}
				cs, err := buildSplitter("RecursiveCharacterTextSplitter", run.Params.Child, nil)
				if err != nil {
					t.Fatal(err)
				}
				gotParents := ps.Split(doc.Text)
				if len(gotParents) != len(run.Parents) {
					t.Fatalf("%d parents, want %d", len(gotParents), len(run.Parents))
				}
				var gotChildren []struct {
					parent int
					Chunk
				}
				for i, p := range gotParents {
					want := run.Parents[i]
					if p.Text != want.Text || p.Start != want.StartIndex {
						t.Fatalf("parent %d: (%d, %q), want (%d, %q)", i, p.Start, p.Text, want.StartIndex, want.Text)
					}
					for _, ch := range cs.Split(p.Text) {
						gotChildren = append(gotChildren, struct {
							parent int
							Chunk
						}{i, ch})
					}
				}
				if len(gotChildren) != len(run.Children) {
					t.Fatalf("%d children, want %d", len(gotChildren), len(run.Children))
				}
				for i, ch := range gotChildren {
					want := run.Children[i]
					if ch.parent != want.ParentIndex || ch.Text != want.Text || ch.Start != want.StartIndex {
						t.Fatalf("child %d: (parent %d, %d, %q), want (parent %d, %d, %q)",
							i, ch.parent, ch.Start, ch.Text, want.ParentIndex, want.StartIndex, want.Text)
					}
				}
				parents += len(gotParents)
				children += len(gotChildren)
			})
		}
	}
	t.Logf("LangChain conformance documents: %d runs over %d documents, %d passed, %d failed (%d parents, %d children matched)",
		c.pass+c.fail, len(docs), c.pass, c.fail, parents, children)
}

// langchainSeparators reads language_separators.json: LangChain's default
// separators and get_separators_for_language for every Language value (nil
// where LangChain raises, as for perl).
func langchainSeparators(t *testing.T) (defaults []string, languages map[Language][]string) {
	var ls struct {
		Default   []string                   `json:"default_separators"`
		Languages map[string]json.RawMessage `json:"languages"`
	}
	readJSON(t, filepath.Join(conformanceDir(t), "language_separators.json"), &ls)
	languages = map[Language][]string{}
	for lang, raw := range ls.Languages {
		var seps []string
		if json.Unmarshal(raw, &seps) != nil { // perl holds an error object
			seps = nil
		}
		languages[Language(lang)] = seps
	}
	return ls.Default, languages
}

func TestPresetsMatchLangChain(t *testing.T) {
	defaults, languages := langchainSeparators(t)
	for preset, want := range map[string][]string{PresetDefault: defaults, PresetMarkdown: languages[LanguageMarkdown]} {
		got, isRegex, err := Separators(preset)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s separators %q, want %q", preset, got, want)
		}
		if isRegex != (preset == PresetMarkdown) {
			t.Errorf("%s: isRegex %v", preset, isRegex)
		}
	}
}

func TestLanguageSeparatorsMatchLangChain(t *testing.T) {
	_, want := langchainSeparators(t)
	if got := Languages(); len(got) != len(want) {
		t.Errorf("%d languages, LangChain has %d", len(got), len(want))
	}
	for _, lang := range Languages() {
		wantSeps, known := want[lang]
		if !known {
			t.Errorf("%s is not a LangChain language", lang)
			continue
		}
		got, err := LanguageSeparators(lang)
		if wantSeps == nil {
			if err == nil {
				t.Errorf("%s: separators %q, LangChain has none", lang, got)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, wantSeps) {
			t.Errorf("%s: separators %q (%v), want %q", lang, got, err, wantSeps)
		}
		if _, err := NewRecursive(Options{ChunkSize: 10, Separators: got, IsSeparatorRegex: true, KeepSeparator: KeepStart}); err != nil {
			t.Errorf("%s: %v", lang, err)
		}
		if preset, isRegex, err := Separators(string(lang)); err != nil || !isRegex || !reflect.DeepEqual(preset, got) {
			t.Errorf("preset %s: %q, regex %v, %v", lang, preset, isRegex, err)
		}
	}
}
