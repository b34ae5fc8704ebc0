package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
)

// MCPParentURIPrefix starts the URI of a parent resource; the parent id
// follows it. The retrieve tool's results name parents by id, so a client
// reads a whole parent (one trimmed by a budget, say) by its URI.
const MCPParentURIPrefix = "parentrag://parents/"

// addParentResources offers every parent of the loaded bundle as a
// resource through one template.
func (s *Server) addParentResources(srv *mcp.Server) {
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "parent",
		Title:       "Parent passage",
		Description: "The whole text of a parent passage, by the parentId the retrieve tool returns.",
		URITemplate: MCPParentURIPrefix + "{parentId}",
		MIMEType:    "text/plain",
	}, s.readParent)
}

// readParent answers resources/read of a parent URI with the parent's
// text, or the protocol's resource-not-found error.
func (s *Server) readParent(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	l := s.loaded.Load()
	if l == nil {
		return nil, errors.New("no index loaded yet")
	}
	id := strings.TrimPrefix(uri, MCPParentURIPrefix)
	parents, err := l.bundle.Retriever.Parents.Get(ctx, []string{id})
	if errors.Is(err, parentstore.ErrNotFound) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, fmt.Errorf("reading parent %s: %w", id, err)
	}
	p := parents[0]
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
		URI: uri, MIMEType: "text/plain", Text: p.Text,
		Meta: mcp.Meta{"docId": p.DocID, "title": p.Title, "start": p.Start, "revision": l.bundle.Manifest.Revision},
	}}}, nil
}
