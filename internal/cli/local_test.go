package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parentrag/parentrag/internal/retrieval/bundle"
)

type queryJSON struct {
	Query    string            `json:"query"`
	Revision string            `json:"revision"`
	Results  []json.RawMessage `json:"results"`
}

type resultJSON struct {
	ParentID string  `json:"parentId"`
	DocID    string  `json:"docId"`
	Score    float64 `json:"score"`
	Text     string  `json:"text"`
	Trimmed  bool    `json:"trimmed"`
	Matches  []struct {
		ChildID string  `json:"childId"`
		Score   float64 `json:"score"`
		Start   int     `json:"start"`
		End     int     `json:"end"`
	} `json:"matches"`
}

// queryJSONResults runs local query --json and decodes its results, checking
// that each carries the documented keys.
func queryJSONResults(t *testing.T, dir string, args ...string) (queryJSON, []resultJSON) {
	t.Helper()
	out, _ := mustExecute(t, append([]string{"local", "query", "--index", dir, "--json"}, args...)...)
	var q queryJSON
	if err := json.Unmarshal([]byte(out), &q); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if !strings.Contains(out, `"results": [`) {
		t.Errorf("results is not a list: %s", out)
	}
	var results []resultJSON
	for _, raw := range q.Results {
		keys := keysOf(t, raw)
		for _, k := range []string{"parentId", "docId", "score", "text", "matches"} {
			if !slices.Contains(keys, k) {
				t.Errorf("result lacks %q: %s", k, raw)
			}
		}
		var r resultJSON
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		results = append(results, r)
	}
	return q, results
}

func TestLocalIndexAndQuery(t *testing.T) {
	dir := t.TempDir()
	corpus := testCorpus(t, dir)
	policy := writeFile(t, dir, "policy.yaml", testPolicy)
	index := filepath.Join(dir, "index")
	out, stderr := mustExecute(t, "local", "index", "--policy", policy, "--out", index, corpus)
	if !regexp.MustCompile(`^indexed 3 documents into \d+ parents and \d+ children \(revision [0-9a-f]+, .*\) in ` + regexp.QuoteMeta(index) + "\n$").MatchString(out) {
		t.Errorf("index output: %q", out)
	}
	if !strings.Contains(stderr, "embed") {
		t.Errorf("no progress on stderr: %q", stderr)
	}
	m, err := bundle.ReadManifest(index)
	if err != nil {
		t.Fatal(err)
	}
	if m.Documents != 3 || m.Parents < 3 || m.Children <= m.Parents {
		t.Fatalf("manifest counts: %+v", m)
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{"corpus", "index", "policy.yaml"}) {
		t.Errorf("left beside the index: %v", got)
	}

	t.Run("json", func(t *testing.T) {
		q, res := queryJSONResults(t, index, "zebra", "stripes")
		if q.Query != "zebra stripes" || q.Revision != m.Revision {
			t.Errorf("query %q revision %q, want %q %q", q.Query, q.Revision, "zebra stripes", m.Revision)
		}
		if len(res) == 0 || len(res) > 3 {
			t.Fatalf("%d results, want 1 to 3", len(res))
		}
		if res[0].DocID != "zebra.md" || !strings.Contains(strings.ToLower(res[0].Text), "stripe") {
			t.Errorf("first result %s %q", res[0].DocID, res[0].Text)
		}
		for _, r := range res {
			if r.Score <= 0 || len(r.Matches) == 0 || r.ParentID == "" {
				t.Errorf("result %+v", r)
			}
			runes := []rune(r.Text)
			for _, mt := range r.Matches {
				if mt.ChildID == "" || mt.Start < 0 || mt.End > len(runes) || mt.Start >= mt.End {
					t.Errorf("match %+v in a parent of %d code points", mt, len(runes))
				}
			}
		}
	})
	t.Run("human", func(t *testing.T) {
		out, _ := mustExecute(t, "local", "query", "--index", index, "zebra stripes")
		if !regexp.MustCompile(`(?m)^1\. Zebras \(zebra\.md\)  score \d+\.\d{3}  \d+ matching children$`).MatchString(out) {
			t.Errorf("human output lacks the first result line:\n%s", out)
		}
		if !strings.Contains(out, "   | ") || strings.Contains(out, `"parentId"`) {
			t.Errorf("human output:\n%s", out)
		}
		out, _ = mustExecute(t, "local", "query", "--index", index, "qwzxv")
		if out != "no parent matches \"qwzxv\"\n" {
			t.Errorf("no match: %q", out)
		}
	})
	t.Run("no match json", func(t *testing.T) {
		_, res := queryJSONResults(t, index, "qwzxv")
		if len(res) != 0 {
			t.Errorf("%d results", len(res))
		}
	})
	t.Run("max parents", func(t *testing.T) {
		_, all := queryJSONResults(t, index, "--max-parents", "5", "savanna water")
		if len(all) < 2 {
			t.Fatalf("premise: %d parents match", len(all))
		}
		_, one := queryJSONResults(t, index, "--max-parents", "1", "savanna water")
		if len(one) != 1 || one[0].ParentID != all[0].ParentID {
			t.Errorf("--max-parents 1: %d results", len(one))
		}
	})
	t.Run("budget", func(t *testing.T) {
		for _, budget := range []string{"30", "60", "120"} {
			_, res := queryJSONResults(t, index, "--budget", budget, "--max-parents", "5", "zebra stripes savanna")
			total, trimmed := 0, false
			for _, r := range res {
				total += utf8.RuneCountInString(r.Text)
				trimmed = trimmed || r.Trimmed
			}
			if want := atoi(t, budget); total > want || len(res) == 0 || !trimmed {
				t.Errorf("--budget %s: %d code points in %d results (trimmed %v)", budget, total, len(res), trimmed)
			}
		}
	})
	t.Run("bad query flags", func(t *testing.T) {
		for _, args := range [][]string{{"--budget", "-1"}, {"--max-parents", "0"}, {"--aggregation", "Median"}} {
			_, _, err := execute(t, append([]string{"local", "query", "--index", index}, append(args, "zebra")...)...)
			if err == nil || !strings.Contains(err.Error(), args[0]) {
				t.Errorf("%v: %v", args, err)
			}
		}
	})
	t.Run("replace", func(t *testing.T) {
		before, err := os.ReadFile(filepath.Join(index, bundle.ManifestFile))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = execute(t, "local", "index", "--quiet", "--policy", policy, "--out", index, corpus)
		if err == nil || !strings.Contains(err.Error(), index) || !strings.Contains(err.Error(), "--replace") {
			t.Fatalf("existing --out: %v", err)
		}
		after, _ := os.ReadFile(filepath.Join(index, bundle.ManifestFile))
		if string(before) != string(after) {
			t.Error("a refused index changed the existing one")
		}
		writeFile(t, corpus, "giraffe.md", "# Giraffes\n\nGiraffes have long necks and eat acacia leaves.\n")
		mustExecute(t, "local", "index", "--quiet", "--replace", "--policy", policy, "--out", index, corpus)
		m2, err := bundle.ReadManifest(index)
		if err != nil || m2.Documents != 4 {
			t.Fatalf("replaced index: %+v, %v", m2, err)
		}
		if got := listDir(t, dir); !slices.Equal(got, []string{"corpus", "index", "policy.yaml"}) {
			t.Errorf("left beside the index: %v", got)
		}
		_, res := queryJSONResults(t, index, "giraffe necks")
		if len(res) == 0 || res[0].DocID != "giraffe.md" {
			t.Errorf("replaced index does not answer from the new document: %+v", res)
		}
	})
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, r := range s {
		n = n*10 + int(r-'0')
	}
	return n
}

// badInputCase is one bad invocation and what its error must say.
type badInputCase struct {
	name string
	// args builds the arguments in a fresh directory; out, when not
	// empty, is the --out that must not be left behind.
	args func(t *testing.T, dir string) (args []string, out string)
	// want are substrings of the one error: the file and the problem.
	want func(dir string) []string
}

func badInputCases() []badInputCase {
	index := func(dir string, extra ...string) ([]string, string) {
		out := filepath.Join(dir, "index")
		return append([]string{"local", "index", "--out", out}, extra...), out
	}
	return []badInputCase{
		{
			name: "missing file",
			args: func(t *testing.T, dir string) ([]string, string) {
				return index(dir, filepath.Join(dir, "nope.md"))
			},
			want: func(dir string) []string { return []string{filepath.Join(dir, "nope.md"), "no such file"} },
		},
		{
			name: "binary file",
			args: func(t *testing.T, dir string) ([]string, string) {
				return index(dir, writeFile(t, dir, "blob.txt", "abc\x00\x01\x02"))
			},
			want: func(dir string) []string {
				return []string{filepath.Join(dir, "blob.txt"), "binary file (NUL byte at offset 3)"}
			},
		},
		{
			name: "JSON Lines line without text",
			args: func(t *testing.T, dir string) ([]string, string) {
				return index(dir, writeFile(t, dir, "docs.jsonl", `{"_id":"a","text":"x"}`+"\n"+`{"_id":"b"}`+"\n"))
			},
			want: func(dir string) []string { return []string{filepath.Join(dir, "docs.jsonl") + ":2", `"text"`} },
		},
		{
			name: "empty corpus",
			args: func(t *testing.T, dir string) ([]string, string) {
				empty := filepath.Join(dir, "empty")
				if err := os.Mkdir(empty, 0o755); err != nil {
					t.Fatal(err)
				}
				return index(dir, empty)
			},
			want: func(dir string) []string { return []string{filepath.Join(dir, "empty"), "no documents found"} },
		},
		{
			name: "child not smaller than parent",
			args: func(t *testing.T, dir string) ([]string, string) {
				p := writeFile(t, dir, "policy.yaml", "apiVersion: parentrag.io/v1alpha1\nkind: ChunkingPolicy\nmetadata: {name: x}\nspec:\n  parent: {chunkSize: 100}\n  child: {chunkSize: 100, chunkOverlap: 10}\n")
				return index(dir, "--policy", p, writeFile(t, dir, "a.md", "text\n"))
			},
			want: func(dir string) []string {
				return []string{filepath.Join(dir, "policy.yaml"), "child.chunkSize must be smaller than parent.chunkSize (100)"}
			},
		},
		{
			name: "unknown policy field",
			args: func(t *testing.T, dir string) ([]string, string) {
				p := writeFile(t, dir, "policy.yaml", "apiVersion: parentrag.io/v1alpha1\nkind: ChunkingPolicy\nmetadata: {name: x}\nspec:\n  parent: {chunkSzie: 100}\n")
				return index(dir, "--policy", p, writeFile(t, dir, "a.md", "text\n"))
			},
			want: func(dir string) []string {
				return []string{filepath.Join(dir, "policy.yaml"), "unknown field", "chunkSzie"}
			},
		},
		{
			name: "missing policy file",
			args: func(t *testing.T, dir string) ([]string, string) {
				return index(dir, "--policy", filepath.Join(dir, "nope.yaml"), writeFile(t, dir, "a.md", "text\n"))
			},
			want: func(dir string) []string { return []string{filepath.Join(dir, "nope.yaml"), "no such file"} },
		},
		{
			name: "out missing",
			args: func(t *testing.T, dir string) ([]string, string) {
				return []string{"local", "index", writeFile(t, dir, "a.md", "text\n")}, ""
			},
			want: func(string) []string { return []string{"--out is required"} },
		},
		{
			name: "replace a folder that is not an index",
			args: func(t *testing.T, dir string) ([]string, string) {
				writeFile(t, dir, "precious/notes.md", "keep me\n")
				return []string{"local", "index", "--replace", "--out", filepath.Join(dir, "precious"), writeFile(t, dir, "a.md", "text\n")}, ""
			},
			want: func(dir string) []string {
				return []string{filepath.Join(dir, "precious"), "not a parentrag index", "refusing to replace"}
			},
		},
		{
			name: "query without manifest",
			args: func(t *testing.T, dir string) ([]string, string) {
				writeFile(t, dir, "half/parents.jsonl", "")
				return []string{"local", "query", "--index", filepath.Join(dir, "half"), "zebra"}, ""
			},
			want: func(dir string) []string {
				return []string{filepath.Join(dir, "half"), "not a complete parentrag index", "manifest.json"}
			},
		},
		{
			name: "query on a missing index",
			args: func(t *testing.T, dir string) ([]string, string) {
				return []string{"local", "query", "--index", filepath.Join(dir, "nope"), "zebra"}, ""
			},
			want: func(dir string) []string {
				return []string{"--index " + filepath.Join(dir, "nope"), "no such file or directory"}
			},
		},
		{
			name: "query without --index",
			args: func(t *testing.T, dir string) ([]string, string) {
				return []string{"local", "query", "zebra"}, ""
			},
			want: func(string) []string { return []string{"--index is required"} },
		},
	}
}

// TestLocalIndexSkipsUnreadableFiles checks that files that cannot be read
// are reported one by one, each with its reason, and the rest is indexed.
func TestLocalIndexSkipsUnreadableFiles(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus")
	writeFile(t, dir, "corpus/a.md", "fine text\n")
	writeFile(t, dir, "corpus/b.md", "caf\xe9 latin-1\n")
	writeFile(t, dir, "corpus/c.pdf", "%PDF-1.7\ntruncated")
	// A dangling link cannot be read, even by root.
	if err := os.Symlink(filepath.Join(dir, "gone.md"), filepath.Join(corpus, "d.md")); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := execute(t, "local", "index", "--out", filepath.Join(dir, "index"), corpus)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"skipped: " + filepath.Join(corpus, "b.md") + ": invalid UTF-8 at byte offset 3\n",
		"skipped: " + filepath.Join(corpus, "c.pdf") + ": ",
		"skipped: " + filepath.Join(corpus, "d.md") + ": open: no such file",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q does not say %q", stderr, want)
		}
	}
	if !strings.Contains(stdout, "indexed 1 documents") || !strings.Contains(stdout, "(3 unreadable files skipped: see above)") {
		t.Errorf("summary %q does not count 1 document and 3 skipped files", stdout)
	}
}

func TestLocalBadInput(t *testing.T) {
	for _, tc := range badInputCases() {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args, out := tc.args(t, dir)
			before := listDir(t, dir)
			stdout, stderr, err := execute(t, args...)
			if err == nil {
				t.Fatalf("no error; stdout %q", stdout)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			for _, w := range tc.want(dir) {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if stdout != "" || stderr != "" {
				t.Errorf("printed besides the error: stdout %q stderr %q", stdout, stderr)
			}
			if out != "" {
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Errorf("--out %s left behind (%v)", out, err)
				}
			}
			if after := listDir(t, dir); !slices.Equal(before, after) {
				t.Errorf("directory changed from %v to %v", before, after)
			}
		})
	}
}

func TestLocalIndexKeepsExistingOut(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "index")
	writeFile(t, out, "mine.txt", "not an index")
	_, stderr, err := execute(t, "local", "index", "--out", out, writeFile(t, dir, "a.md", "text\n"))
	if err == nil || !strings.Contains(err.Error(), out+" already exists") || !strings.Contains(err.Error(), "--replace") {
		t.Fatalf("got %v", err)
	}
	if stderr != "" {
		t.Errorf("work started before the refusal: %q", stderr)
	}
	if got := listDir(t, out); !slices.Equal(got, []string{"mine.txt"}) {
		t.Errorf("existing --out now holds %v", got)
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{"a.md", "index"}) {
		t.Errorf("left beside --out: %v", got)
	}
}

func TestLocalDemo(t *testing.T) {
	dir := t.TempDir()
	index := filepath.Join(dir, "demo")
	out, stderr := mustExecute(t, "local", "demo", "--quiet", "--out", index, "--json", "How does parentrag roll out a new chunk size safely?")
	var q queryJSON
	if err := json.Unmarshal([]byte(out), &q); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(q.Results) == 0 {
		t.Fatal("the demo found nothing")
	}
	for _, raw := range q.Results {
		var r resultJSON
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(r.DocID, "docs/") || !strings.HasSuffix(r.DocID, ".md") || r.Text == "" {
			t.Errorf("result from %q: %q", r.DocID, r.Text)
		}
	}
	if !strings.Contains(stderr, "indexed") || !strings.Contains(stderr, "Q: How does parentrag roll out") {
		t.Errorf("stderr: %q", stderr)
	}
	if _, err := bundle.ReadManifest(index); err != nil {
		t.Errorf("demo index: %v", err)
	}
	// A second run replaces its own index; the human form prints results.
	out, _ = mustExecute(t, "local", "demo", "--quiet", "--out", index, "revision rollback")
	if !strings.HasPrefix(out, "1. ") || !strings.Contains(out, "(docs/") {
		t.Errorf("human demo output:\n%s", out)
	}
	// It never replaces a folder that is not an index.
	precious := filepath.Join(dir, "precious")
	writeFile(t, precious, "notes.md", "keep me\n")
	if _, _, err := execute(t, "local", "demo", "--quiet", "--out", precious); err == nil || !strings.Contains(err.Error(), "refusing to replace") {
		t.Errorf("demo over a folder of notes: %v", err)
	}
	if got := listDir(t, precious); !slices.Equal(got, []string{"notes.md"}) {
		t.Errorf("the folder now holds %v", got)
	}
}
