package server

import (
	"context"
	"net/http"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// LangChainPath is where LangChain's remote retriever posts its query.
const LangChainPath = "/v1/langchain/retrieve"

// LangChainRequest is the body LangChain's RemoteLangChainRetriever sends
// with its default input key.
type LangChainRequest struct {
	// Message is the query.
	Message string `json:"message"`
}

// LangChainResponse is what RemoteLangChainRetriever reads with its
// default response key: one document per parent, best first.
type LangChainResponse struct {
	Response []LangChainDocument `json:"response"`
}

// LangChainDocument is one parent as a LangChain Document, under the
// retriever's default page-content and metadata keys.
type LangChainDocument struct {
	PageContent string            `json:"page_content"`
	Metadata    LangChainMetadata `json:"metadata"`
}

// LangChainMetadata is what parentrag says of a parent beside its text.
type LangChainMetadata struct {
	ParentID string `json:"parentId"`
	DocID    string `json:"docId"`
	Title    string `json:"title,omitempty"`
	// HeadingPath, Level and Pages are the result's (see retrieve.Result).
	HeadingPath []string            `json:"headingPath,omitempty"`
	Level       hierarchy.Level     `json:"level"`
	Pages       *hierarchy.Pages    `json:"pages,omitempty"`
	Score       float32             `json:"score"`
	Revision    string              `json:"revision"`
	Start       int                 `json:"start"`
	Trimmed     bool                `json:"trimmed,omitempty"`
	Spans       []retrieve.Interval `json:"spans,omitempty"`
	Matches     []retrieve.Match    `json:"matches"`
}

// langChainShape is the request body, spelt exactly.
var langChainShape = &shape{
	want:   `a JSON object {"message": "<query>"}`,
	names:  []string{"message"},
	fields: map[string]*shape{"message": nil},
}

// langChainRetrieve answers POST /v1/langchain/retrieve.
func (s *Server) langChainRetrieve(w http.ResponseWriter, r *http.Request) {
	serveQuery(s, w, r, writeError, s.langChainAnswer)
}

// langChainAnswer retrieves for the message with the server's defaults.
func (s *Server) langChainAnswer(ctx context.Context, _ *http.Request, body []byte, l *loaded) (*LangChainResponse, error) {
	var req LangChainRequest
	if err := decodeStrictJSON(body, "", langChainShape, &req); err != nil {
		return nil, err
	}
	resp, err := s.query(ctx, l, &RetrieveRequest{Query: req.Message})
	if err != nil {
		return nil, err
	}
	return toLangChain(resp), nil
}

// toLangChain turns a retrieval's answer into LangChain documents.
func toLangChain(resp *RetrieveResponse) *LangChainResponse {
	docs := make([]LangChainDocument, len(resp.Results))
	for i, res := range resp.Results {
		docs[i] = LangChainDocument{PageContent: res.Text, Metadata: LangChainMetadata{
			ParentID: res.ParentID, DocID: res.DocID, Title: res.Title, HeadingPath: res.HeadingPath, Level: res.Level, Pages: res.Pages, Score: res.Score,
			Revision: resp.Revision, Start: res.Start, Trimmed: res.Trimmed, Spans: res.Spans, Matches: res.Matches,
		}}
	}
	return &LangChainResponse{Response: docs}
}
