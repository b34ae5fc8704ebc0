package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// newVectorStoreServer serves the test corpus as vector store "docs".
func newVectorStoreServer(t *testing.T, opts Options) (*Server, string, *http.Client) {
	t.Helper()
	opts.Corpus, opts.ShutdownDelay = "docs", -1
	s := New(opts)
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts, _ := newValidatedServer(t, s)
	return s, ts.URL, ts.Client()
}

// searchFor posts body to the search of store "docs" and returns its page.
func searchFor(t testing.TB, c *http.Client, base, body string) VectorStoreSearchPage {
	t.Helper()
	return postFor[VectorStoreSearchPage](t, c, base+"/v1/vector_stores/docs/search", body)
}

// resultsOf reads a page's results as parents.
func resultsOf(page VectorStoreSearchPage) []retrieve.Result {
	out := make([]retrieve.Result, len(page.Data))
	for i, d := range page.Data {
		out[i] = retrieve.Result{ParentID: d.Attributes["parentId"].(string), DocID: d.FileID, Score: d.Score, Text: d.Content[0].Text}
	}
	return out
}

func TestVectorStoreListAndGet(t *testing.T) {
	_, base, c := newVectorStoreServer(t, Options{})
	code, data := doJSON(t, c, "GET", base+VectorStoresPath, "")
	var list VectorStoreList
	decodeStrict(t, data, &list)
	if code != 200 || list.Object != "list" || len(list.Data) != 1 || list.FirstID != "docs" || list.HasMore {
		t.Fatalf("list: %d %s", code, data)
	}
	vs := list.Data[0]
	if vs.ID != "docs" || vs.Object != "vector_store" || vs.FileCounts.Total != len(corpus()) || vs.Metadata["revision"] != "rev-a" || vs.CreatedAt == 0 {
		t.Errorf("store %+v, want docs with %d files of revision rev-a", vs, len(corpus()))
	}
	code, data = doJSON(t, c, "GET", base+"/v1/vector_stores/docs", "")
	var got VectorStore
	decodeStrict(t, data, &got)
	if code != 200 || got.ID != "docs" || got.FileCounts != vs.FileCounts {
		t.Errorf("get docs: %d %s", code, data)
	}
}

// Unknown stores are 404 in OpenAI's error shape, naming the store served.
func TestVectorStoreUnknownID(t *testing.T) {
	_, base, c := newVectorStoreServer(t, Options{})
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/v1/vector_stores/vs_abc", ""}, {"POST", "/v1/vector_stores/vs_abc/search", `{"query": "tomatoes"}`},
	} {
		code, data := doJSON(t, c, r.method, base+r.path, r.body)
		var e OpenAIError
		decodeStrict(t, data, &e)
		if code != 404 || e.Error.Type != "invalid_request_error" || e.Error.Code == nil || *e.Error.Code != "not_found" ||
			!strings.Contains(e.Error.Message, `no vector store "vs_abc": this server serves "docs"`) {
			t.Errorf("%s %s: %d %s", r.method, r.path, code, data)
		}
	}
}

func TestVectorStoreSearchAnswersAsRetrieve(t *testing.T) {
	_, base, c := newVectorStoreServer(t, Options{})
	for _, q := range protocolQueries {
		want := retrieveFor(t, c, base, mustJSON(t, map[string]string{"query": q}))
		page := searchFor(t, c, base, mustJSON(t, map[string]string{"query": q}))
		if page.Object != "vector_store.search_results.page" || len(page.SearchQuery) != 1 || page.SearchQuery[0] != q || page.HasMore || page.NextPage != nil {
			t.Errorf("%q: page %+v", q, page)
		}
		assertSameParents(t, "search "+q, resultsOf(page), want.Results)
		for _, d := range page.Data {
			if d.Attributes["revision"] != "rev-a" || d.Filename != d.FileID || d.Content[0].Type != "text" {
				t.Errorf("%q: result %+v", q, d)
			}
		}
	}
	// A query array is searched as one query, its parts joined.
	want := retrieveFor(t, c, base, `{"query": "rollback\nrevision", "maxParents": 3}`)
	page := searchFor(t, c, base, `{"query": ["rollback", "revision"], "max_num_results": 3}`)
	assertSameParents(t, "query array", resultsOf(page), want.Results)
	if strings.Join(page.SearchQuery, "|") != "rollback|revision" {
		t.Errorf("search_query %q", page.SearchQuery)
	}
	// Past 20, max_num_results returns the 20 parents /v1/retrieve caps at.
	want = retrieveFor(t, c, base, `{"query": "the", "maxParents": 20}`)
	assertSameParents(t, "max_num_results 50", resultsOf(searchFor(t, c, base, `{"query": "the", "max_num_results": 50}`)), want.Results)
}

// Filters of eq and and map onto the metadata filter: the same parents
// as /v1/retrieve's filter, and the attributes show the metadata.
func TestVectorStoreSearchFilters(t *testing.T) {
	_, base, c := newVectorStoreServer(t, Options{})
	for _, f := range []struct{ openAI, parentrag string }{
		{`{"type": "eq", "key": "team", "value": "search"}`, `{"metadata": {"team": "search"}}`},
		{`{"type": "eq", "key": "file_id", "value": "garden.md"}`, `{"docId": "garden.md"}`},
		{`{"type": "and", "filters": [{"type": "eq", "key": "lang", "value": "en"}, {"type": "and", "filters": [{"type": "eq", "key": "team", "value": "platform"}]}]}`,
			`{"metadata": {"lang": "en", "team": "platform"}}`},
	} {
		want := retrieveFor(t, c, base, `{"query": "revision", "filter": `+f.parentrag+`}`)
		page := searchFor(t, c, base, `{"query": "revision", "filters": `+f.openAI+`}`)
		if len(want.Results) == 0 {
			t.Fatalf("filter %s keeps nothing: a useless case", f.parentrag)
		}
		assertSameParents(t, "filter "+f.openAI, resultsOf(page), want.Results)
	}
	page := searchFor(t, c, base, `{"query": "rollback", "filters": {"type": "eq", "key": "team", "value": "search"}}`)
	if len(page.Data) == 0 || page.Data[0].Attributes["team"] != "search" || page.Data[0].Attributes["lang"] != "en" {
		t.Errorf("attributes %+v, want the document's metadata", page.Data)
	}
}

// What cannot be mapped is refused with a 400 in OpenAI's shape that
// says why.
func TestVectorStoreSearchRefuses(t *testing.T) {
	_, base, c := newVectorStoreServer(t, Options{MaxBodyBytes: 512})
	for _, r := range []struct {
		body    string
		code    int
		errPart string
	}{
		{`{"query": ""}`, 400, "query is required"},
		{`{"query": []}`, 400, "want a string or a non-empty array of strings"},
		{`{"query": ["a", " "]}`, 400, "query[1] is blank"},
		{`{"query": "x", "max_num_results": 0}`, 400, "max_num_results 0: want 1 to 50"},
		{`{"query": "x", "rewrite_query": true}`, 400, "does not rewrite queries"},
		{`{"query": "x", "ranking_options": {"ranker": "best"}}`, 400, `ranker "best"`},
		{`{"query": "x", "ranking_options": {"score_threshold": -1}}`, 400, "score_threshold -1"},
		{`{"query": "x", "ranking_options": {"rank": "auto"}}`, 400, `unknown field "ranking_options.rank"`},
		{`{"query": "x", "top_k": 3}`, 400, `unknown field "top_k"`},
		{`{"query": "x", "filters": {"type": "ne", "key": "team", "value": "a"}}`, 400, `filters: filter type "ne" cannot be mapped`},
		{`{"query": "x", "filters": {"type": "or", "filters": [{"type": "eq", "key": "a", "value": "b"}]}}`, 400, `filter type "or" cannot be mapped`},
		{`{"query": "x", "filters": {"type": "and", "filters": [{"type": "gt", "key": "n", "value": 3}]}}`, 400, `filters.filters[0]: filter type "gt"`},
		{`{"query": "x", "filters": {"type": "eq", "key": "year", "value": 2024}}`, 400, "filters.value: want a string"},
		{`{"query": "x", "filters": {"type": "eq", "key": "team", "value": "a", "Key": "b"}}`, 400, `unknown field "filters.Key"`},
		{`{"query": "x", "filters": {"type": "and", "filters": [{"type": "eq", "key": "t", "value": "a"}, {"type": "eq", "key": "t", "value": "b"}]}}`, 400, `key "t" is already compared to "a"`},
		{`{"query": "x", "filters": {"type": "eq", "value": "a"}}`, 400, "filters.key is required"},
		{`{"query": "x", "filters": {"type": "like"}}`, 400, `filters.type "like": want eq or and`},
		{`{"query": "x", "filters": {"type": "and", "filters": []}}`, 400, "an and filter needs filters"},
		{`{"query": "x", "filters": []}`, 400, "invalid filters"},
		{`{"query": "` + strings.Repeat("tomato ", 80) + `"}`, 413, "over 512 bytes"},
	} {
		code, data := doJSON(t, c, "POST", base+"/v1/vector_stores/docs/search", r.body)
		var e OpenAIError
		if code != r.code || json.Unmarshal(data, &e) != nil || e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, r.errPart) {
			t.Errorf("%s: %d %s, want %d mentioning %q", r.body, code, data, r.code, r.errPart)
		}
	}
}

// score_threshold leaves out the results scoring under it; every ranker
// ranks alike.
func TestVectorStoreSearchRankingOptions(t *testing.T) {
	_, base, c := newVectorStoreServer(t, Options{})
	const query = "rollback revision"
	all := searchFor(t, c, base, `{"query": "`+query+`", "ranking_options": {"ranker": "none"}}`)
	if len(all.Data) < 2 || all.Data[0].Score == all.Data[len(all.Data)-1].Score {
		t.Fatalf("%+v: too few distinct scores to set a threshold between", all.Data)
	}
	threshold := (all.Data[0].Score + all.Data[len(all.Data)-1].Score) / 2
	kept := searchFor(t, c, base, mustJSON(t, map[string]any{"query": query, "ranking_options": map[string]any{"ranker": "auto", "score_threshold": threshold}}))
	if len(kept.Data) == 0 || len(kept.Data) >= len(all.Data) {
		t.Fatalf("threshold %.4f kept %d of %d", threshold, len(kept.Data), len(all.Data))
	}
	for i, d := range kept.Data {
		if d.Score < threshold || d.FileID != all.Data[i].FileID {
			t.Errorf("kept result %d: %+v under %.4f or out of order", i, d, threshold)
		}
	}
}
