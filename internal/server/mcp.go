package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// MCPPath is the Model Context Protocol endpoint (Streamable HTTP).
const MCPPath = "/mcp"

// MCPRetrieveTool is the name of the MCP tool that retrieves.
const MCPRetrieveTool = "retrieve"

// MCPRetrieveInput is the arguments of the retrieve tool. Omitted fields
// take the server's defaults.
type MCPRetrieveInput struct {
	Query      string  `json:"query" jsonschema:"the question to find passages for"`
	MaxParents *int    `json:"maxParents,omitempty" jsonschema:"most passages returned, 1 to 20 (default: the server's)"`
	Budget     int     `json:"budget,omitempty" jsonschema:"cap on the returned text in the index's length unit; 0 means no cap"`
	Filter     *Filter `json:"filter,omitempty" jsonschema:"keep only passages of this document (docId), of documents under this id prefix (docIdPrefix), or whose metadata holds every given key and value (metadata)"`
	Mode       string  `json:"mode,omitempty" jsonschema:"Parents: each passage is the parent of a matching child; Adaptive: each passage is the unit (section, parent, child or sentence window) that holds enough of the evidence (default: the server's)"`
}

// mcpHandler serves MCP over Streamable HTTP (the retrieve tool and the
// parents as resources), stateless: every request
// stands alone, so any replica behind a Service can answer it. Answers
// are JSON rather than event streams, since the one tool answers at once.
// The SDK's refusal of loopback requests with a non-loopback Host is off:
// a mesh sidecar or a proxy in the pod forwards from 127.0.0.1 with the
// Service's host name, and /mcp serves nothing /v1/retrieve does not.
func (s *Server) mcpHandler() http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "parentrag", Title: "parentrag Retriever Service", Version: "v1"}, &mcp.ServerOptions{
		Instructions: "Call retrieve with a question to get the passages of the indexed documents that answer it, each with its source document.",
	})
	mcp.AddTool(srv, &mcp.Tool{
		Name:        MCPRetrieveTool,
		Title:       "Retrieve passages",
		Description: "Find the passages (parents) of the indexed documents that best answer a question, best first, each with its document id and score.",
	}, s.mcpRetrieve)
	s.addParentResources(srv)
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless: true, JSONResponse: true, MaxRequestBodyBytes: s.opts.MaxBodyBytes, DisableLocalhostProtection: true,
	})
}

// mcpRetrieve is the retrieve tool: the retrieval of /v1/retrieve, its
// answer as structured content and each parent as a text content naming
// its source. A refused or failed retrieval is a tool error whose text
// says why, as /v1/retrieve's error would.
func (s *Server) mcpRetrieve(ctx context.Context, _ *mcp.CallToolRequest, in MCPRetrieveInput) (*mcp.CallToolResult, *RetrieveResponse, error) {
	l := s.loaded.Load()
	if l == nil {
		return nil, nil, errors.New("no index loaded yet")
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	resp, err := s.query(ctx, l, &RetrieveRequest{Query: in.Query, MaxParents: in.MaxParents, Budget: in.Budget, Filter: in.Filter, Mode: in.Mode})
	var over *overloadError
	if errors.As(err, &over) {
		return nil, nil, errors.New(s.refusal(over))
	}
	if err != nil {
		return nil, nil, err
	}
	return &mcp.CallToolResult{Content: mcpContent(resp)}, resp, nil
}

// unitName names where a result's text comes from: "parent ID" (or
// "section ID", ...) for a stored unit, "window of parent ID" for pieces
// cut from one.
func unitName(res retrieve.Result) string {
	switch res.Level {
	case hierarchy.LevelWindow, hierarchy.LevelChild, hierarchy.LevelSentence:
		return fmt.Sprintf("%s of parent %s", res.Level, res.ParentID)
	}
	return fmt.Sprintf("%s %s", res.Level, res.ParentID)
}

// mcpContent is one text content per parent, best first, each headed by
// its rank, source document (and title), section (its heading path) and
// pages when it has them, level, parent id and score; a note when none
// matched.
func mcpContent(resp *RetrieveResponse) []mcp.Content {
	if len(resp.Results) == 0 {
		return []mcp.Content{&mcp.TextContent{Text: "No passage matches the query."}}
	}
	content := make([]mcp.Content, len(resp.Results))
	for i, res := range resp.Results {
		var head strings.Builder
		fmt.Fprintf(&head, "[%d] source: %s", i+1, res.DocID)
		if res.Title != "" {
			fmt.Fprintf(&head, " (%s)", res.Title)
		}
		if where := Location(res); where != "" {
			fmt.Fprintf(&head, ", %s", where)
		}
		fmt.Fprintf(&head, ", %s, score %.4g", unitName(res), res.Score)
		content[i] = &mcp.TextContent{Text: head.String() + "\n\n" + res.Text}
	}
	return content
}
