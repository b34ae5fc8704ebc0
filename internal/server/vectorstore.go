package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// The OpenAI vector-store endpoints: the server is one vector store, named
// after the Corpus it serves, whose files are the Corpus's documents.
const (
	VectorStoresPath      = "/v1/vector_stores"
	VectorStorePath       = "/v1/vector_stores/{vector_store_id}"
	VectorStoreSearchPath = "/v1/vector_stores/{vector_store_id}/search"
	// MaxNumResults is the largest max_num_results OpenAI accepts; past
	// MaxMaxParents the server returns MaxMaxParents results.
	MaxNumResults = 50
)

// VectorStore is the OpenAI vector store object of the loaded bundle.
type VectorStore struct {
	ID           string            `json:"id"`
	Object       string            `json:"object"`
	CreatedAt    int64             `json:"created_at"`
	Name         string            `json:"name"`
	UsageBytes   int64             `json:"usage_bytes"`
	FileCounts   FileCounts        `json:"file_counts"`
	Status       string            `json:"status"`
	LastActiveAt int64             `json:"last_active_at"`
	ExpiresAfter *struct{}         `json:"expires_after"`
	ExpiresAt    *int64            `json:"expires_at"`
	Metadata     map[string]string `json:"metadata"`
}

// FileCounts counts a vector store's files by state: every document of a
// loaded bundle is completed.
type FileCounts struct {
	InProgress int `json:"in_progress"`
	Completed  int `json:"completed"`
	Failed     int `json:"failed"`
	Cancelled  int `json:"cancelled"`
	Total      int `json:"total"`
}

// VectorStoreList is the answer to GET /v1/vector_stores: the one store.
type VectorStoreList struct {
	Object  string        `json:"object"`
	Data    []VectorStore `json:"data"`
	FirstID string        `json:"first_id"`
	LastID  string        `json:"last_id"`
	HasMore bool          `json:"has_more"`
}

// VectorStoreSearchRequest is OpenAI's search request.
type VectorStoreSearchRequest struct {
	// Query is a string or an array of strings, searched as one query.
	Query json.RawMessage `json:"query"`
	// MaxNumResults is 1 to 50; the server returns at most MaxMaxParents.
	MaxNumResults *int `json:"max_num_results,omitempty"`
	// Filters is a comparison or compound filter on file attributes.
	Filters json.RawMessage `json:"filters,omitempty"`
	// RankingOptions choose a ranker and a least score.
	RankingOptions *RankingOptions `json:"ranking_options,omitempty"`
	// RewriteQuery must be false or absent: queries are not rewritten.
	RewriteQuery *bool `json:"rewrite_query,omitempty"`
}

// RankingOptions of a search. Every ranker ranks by parentrag's own
// parent score; results scoring under ScoreThreshold are left out.
type RankingOptions struct {
	Ranker         string   `json:"ranker,omitempty"`
	ScoreThreshold *float64 `json:"score_threshold,omitempty"`
}

// VectorStoreSearchPage is OpenAI's search answer: one page holding every
// result.
type VectorStoreSearchPage struct {
	Object      string              `json:"object"`
	SearchQuery []string            `json:"search_query"`
	Data        []VectorStoreResult `json:"data"`
	HasMore     bool                `json:"has_more"`
	NextPage    *string             `json:"next_page"`
}

// VectorStoreResult is one parent as an OpenAI search result: the file is
// its document, the attributes its document's metadata and where the
// parent comes from.
type VectorStoreResult struct {
	FileID     string         `json:"file_id"`
	Filename   string         `json:"filename"`
	Score      float32        `json:"score"`
	Attributes map[string]any `json:"attributes"`
	Content    []TextContent  `json:"content"`
}

// TextContent is a piece of a search result's content.
type TextContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// OpenAIError is the body of every error of the vector-store endpoints.
type OpenAIError struct {
	Error OpenAIErrorDetail `json:"error"`
}

// OpenAIErrorDetail says what went wrong, as OpenAI's API does.
type OpenAIErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// rankers are the ranking_options.ranker values OpenAI defines.
var rankers = []string{"auto", "default-2024-11-15", "none"}

// searchShape is the search request, spelt exactly; filters are checked
// as they are mapped (see mapOpenAIFilter).
var searchShape = &shape{
	want:  "a JSON object with a query",
	names: []string{"query", "max_num_results", "filters", "ranking_options", "rewrite_query"},
	fields: map[string]*shape{
		"query": nil, "max_num_results": nil, "filters": nil, "rewrite_query": nil,
		"ranking_options": {
			names:  []string{"ranker", "score_threshold"},
			fields: map[string]*shape{"ranker": nil, "score_threshold": nil},
		},
	},
}

// writeOpenAIError writes an OpenAIError: invalid_request_error for 4xx,
// server_error for 5xx.
func writeOpenAIError(w http.ResponseWriter, code int, msg string) {
	typ := "invalid_request_error"
	if code >= 500 {
		typ = "server_error"
	}
	var errCode *string
	if code == http.StatusNotFound {
		c := "not_found"
		errCode = &c
	}
	writeJSON(w, code, OpenAIError{Error: OpenAIErrorDetail{Message: msg, Type: typ, Code: errCode}})
}

// vectorStores answers GET /v1/vector_stores.
func (s *Server) vectorStores(w http.ResponseWriter, r *http.Request) {
	serveDescription(s, w, r, writeOpenAIError, func(_ *http.Request, l *loaded) (*VectorStoreList, error) {
		vs := s.vectorStoreOf(l)
		return &VectorStoreList{Object: "list", Data: []VectorStore{vs}, FirstID: vs.ID, LastID: vs.ID}, nil
	})
}

// vectorStore answers GET /v1/vector_stores/{vector_store_id}.
func (s *Server) vectorStore(w http.ResponseWriter, r *http.Request) {
	serveDescription(s, w, r, writeOpenAIError, func(r *http.Request, l *loaded) (*VectorStore, error) {
		if err := s.checkStoreID(r); err != nil {
			return nil, err
		}
		vs := s.vectorStoreOf(l)
		return &vs, nil
	})
}

// vectorStoreOf describes the loaded bundle as a vector store.
func (s *Server) vectorStoreOf(l *loaded) VectorStore {
	m := &l.bundle.Manifest
	created := m.CreatedAt.Unix()
	return VectorStore{
		ID: s.opts.Corpus, Object: "vector_store", CreatedAt: created, Name: s.opts.Corpus,
		UsageBytes: m.Bytes, Status: "completed", LastActiveAt: created,
		FileCounts: FileCounts{Completed: m.Documents, Total: m.Documents},
		Metadata:   map[string]string{"revision": m.Revision, "parents": fmt.Sprint(m.Parents), "children": fmt.Sprint(m.Children)},
	}
}

// checkStoreID refuses (404) a store id other than the Corpus served.
func (s *Server) checkStoreID(r *http.Request) error {
	if id := r.PathValue("vector_store_id"); id != s.opts.Corpus {
		return &httpError{code: http.StatusNotFound, msg: fmt.Sprintf("no vector store %q: this server serves %q", id, s.opts.Corpus)}
	}
	return nil
}

// vectorStoreSearch answers POST /v1/vector_stores/{vector_store_id}/search.
func (s *Server) vectorStoreSearch(w http.ResponseWriter, r *http.Request) {
	serveQuery(s, w, r, writeOpenAIError, s.vectorStoreAnswer)
}

// vectorStoreAnswer maps the search onto a retrieval and its answer onto
// a search results page.
func (s *Server) vectorStoreAnswer(ctx context.Context, r *http.Request, body []byte, l *loaded) (*VectorStoreSearchPage, error) {
	if err := s.checkStoreID(r); err != nil {
		return nil, err
	}
	var search VectorStoreSearchRequest
	if err := decodeStrictJSON(body, "", searchShape, &search); err != nil {
		return nil, err
	}
	queries, req, err := retrieveRequestOf(&search)
	if err != nil {
		return nil, err
	}
	resp, err := s.query(ctx, l, req)
	if err != nil {
		return nil, err
	}
	metadata, err := parentMetadata(ctx, l, resp.Results)
	if err != nil {
		return nil, s.retrievalError(ctx, err)
	}
	return searchPage(queries, resp, metadata, search.RankingOptions), nil
}

// retrieveRequestOf maps an OpenAI search onto a RetrieveRequest,
// refusing (400) what parentrag cannot do as asked.
func retrieveRequestOf(search *VectorStoreSearchRequest) ([]string, *RetrieveRequest, error) {
	queries, err := searchQueries(search.Query)
	if err != nil {
		return nil, nil, err
	}
	req := &RetrieveRequest{Query: strings.Join(queries, "\n")}
	if n := search.MaxNumResults; n != nil {
		if *n < 1 || *n > MaxNumResults {
			return nil, nil, badRequest("max_num_results %d: want 1 to %d", *n, MaxNumResults)
		}
		req.MaxParents = new(min(*n, MaxMaxParents))
	}
	if search.RewriteQuery != nil && *search.RewriteQuery {
		return nil, nil, badRequest("rewrite_query true: this vector store does not rewrite queries; send false or leave it out")
	}
	if err := checkRanking(search.RankingOptions); err != nil {
		return nil, nil, err
	}
	if len(search.Filters) > 0 && string(search.Filters) != "null" {
		f := &Filter{}
		if err := mapOpenAIFilter(search.Filters, "filters", f); err != nil {
			return nil, nil, err
		}
		req.Filter = f
	}
	return queries, req, nil
}

// searchQueries reads query: a string or a non-empty array of strings,
// none blank.
func searchQueries(raw json.RawMessage) ([]string, error) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if strings.TrimSpace(one) == "" {
			return nil, badRequest("query is required")
		}
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil || len(many) == 0 {
		return nil, badRequest("query: want a string or a non-empty array of strings")
	}
	for i, q := range many {
		if strings.TrimSpace(q) == "" {
			return nil, badRequest("query[%d] is blank", i)
		}
	}
	return many, nil
}

// checkRanking refuses a ranker OpenAI does not define and a negative
// score threshold.
func checkRanking(o *RankingOptions) error {
	if o == nil {
		return nil
	}
	if o.Ranker != "" && !slices.Contains(rankers, o.Ranker) {
		return badRequest("ranking_options.ranker %q: want one of %s", o.Ranker, strings.Join(rankers, ", "))
	}
	if o.ScoreThreshold != nil && *o.ScoreThreshold < 0 {
		return badRequest("ranking_options.score_threshold %g: want 0 or more", *o.ScoreThreshold)
	}
	return nil
}

// parentMetadata returns the metadata of each result's parent.
func parentMetadata(ctx context.Context, l *loaded, results []retrieve.Result) ([]map[string]string, error) {
	if len(results) == 0 {
		return nil, nil
	}
	ids := make([]string, len(results))
	for i, res := range results {
		ids[i] = res.ParentID
	}
	parents, err := l.bundle.Retriever.Parents.Get(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("reading parent metadata: %w", err)
	}
	metadata := make([]map[string]string, len(parents))
	for i, p := range parents {
		metadata[i] = p.Metadata
	}
	return metadata, nil
}

// searchPage turns a retrieval's answer into one page of search results,
// leaving out those under the score threshold.
func searchPage(queries []string, resp *RetrieveResponse, metadata []map[string]string, ranking *RankingOptions) *VectorStoreSearchPage {
	page := &VectorStoreSearchPage{Object: "vector_store.search_results.page", SearchQuery: queries, Data: []VectorStoreResult{}}
	for i, res := range resp.Results {
		if ranking != nil && ranking.ScoreThreshold != nil && float64(res.Score) < *ranking.ScoreThreshold {
			continue
		}
		page.Data = append(page.Data, VectorStoreResult{
			FileID: res.DocID, Filename: res.DocID, Score: res.Score,
			Attributes: attributesOf(res, resp.Revision, metadata[i]),
			Content:    []TextContent{{Type: "text", Text: res.Text}},
		})
	}
	return page
}

// attributesOf are a result's attributes: its document's metadata, then
// parentId, level, revision and, when it has them, title, headingPath
// (the headings joined by " > ") and pages ("31-32", or "31" for one
// page), which win over metadata keys of the same name.
func attributesOf(res retrieve.Result, revision string, metadata map[string]string) map[string]any {
	attrs := make(map[string]any, len(metadata)+3)
	for k, v := range metadata {
		attrs[k] = v
	}
	attrs["parentId"] = res.ParentID
	attrs["level"] = string(res.Level)
	attrs["revision"] = revision
	if res.Title != "" {
		attrs["title"] = res.Title
	}
	if len(res.HeadingPath) > 0 {
		attrs["headingPath"] = strings.Join(res.HeadingPath, HeadingPathSeparator)
	}
	if res.Pages != nil {
		attrs["pages"] = pageRange(res.Pages)
	}
	return attrs
}
