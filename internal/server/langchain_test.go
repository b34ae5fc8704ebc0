package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// The wire shape is that of LangChain's RemoteLangChainRetriever with its
// defaults (langchain-ai/langchain,
// libs/community/langchain_community/retrievers/remote_retriever.py): it
// posts {input_key: query} with input_key "message", and reads the list
// under response_key "response", each item's page_content_key
// "page_content" and metadata_key "metadata".
func TestLangChainRetrieveAnswersAsRetrieve(t *testing.T) {
	s := New(Options{ShutdownDelay: -1})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts, _ := newValidatedServer(t, s)
	for _, q := range protocolQueries {
		want := retrieveFor(t, ts.Client(), ts.URL, mustJSON(t, map[string]string{"query": q}))
		code, data := doJSON(t, ts.Client(), "POST", ts.URL+LangChainPath, mustJSON(t, map[string]string{"message": q}))
		if code != http.StatusOK {
			t.Fatalf("%q: %d %s", q, code, data)
		}
		var resp struct {
			Response []struct {
				PageContent string            `json:"page_content"`
				Metadata    LangChainMetadata `json:"metadata"`
			} `json:"response"`
		}
		decodeStrict(t, data, &resp)
		got := make([]retrieve.Result, len(resp.Response))
		for i, d := range resp.Response {
			m := d.Metadata
			if m.Revision != "rev-a" || len(m.Matches) == 0 {
				t.Errorf("%q: document %d metadata %+v, want revision rev-a and matched children", q, i, m)
			}
			got[i] = retrieve.Result{ParentID: m.ParentID, DocID: m.DocID, Score: m.Score, Text: d.PageContent}
		}
		assertSameParents(t, "langchain "+q, got, want.Results)
	}
}

// Anything but {"message": "<query>"} is refused with a JSON error that
// says what is wrong, as /v1/retrieve refuses.
func TestLangChainRetrieveRefuses(t *testing.T) {
	s := New(Options{MaxBodyBytes: 256, ShutdownDelay: -1})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts, _ := newValidatedServer(t, s)
	for _, c := range []struct {
		method, body string
		code         int
		errPart      string
	}{
		{"POST", `{"message": ""}`, 400, "query is required"},
		{"POST", `{"query": "tomatoes"}`, 400, `unknown field "query": want one of message`},
		{"POST", `{"Message": "tomatoes"}`, 400, `did you mean "message"`},
		{"POST", `{"message": "a", "message": "b"}`, 400, `duplicate field "message"`},
		{"POST", `{"message": 3}`, 400, "invalid request body"},
		{"POST", ``, 400, `want a JSON object {"message": "<query>"}`},
		{"POST", `{"message": "x"} {}`, 400, "trailing data"},
		{"POST", `{"message": "` + strings.Repeat("tomato ", 50) + `"}`, 413, "over 256 bytes"},
		{"GET", ``, 405, "use POST"},
	} {
		code, data := doJSON(t, ts.Client(), c.method, ts.URL+LangChainPath, c.body)
		var e ErrorResponse
		if code != c.code || json.Unmarshal(data, &e) != nil || !strings.Contains(e.Error, c.errPart) {
			t.Errorf("%s %s: %d %s, want %d mentioning %q", c.method, c.body, code, data, c.code, c.errPart)
		}
	}
}
