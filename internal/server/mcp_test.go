package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectMCP connects the official Go SDK's client to the server's /mcp
// over Streamable HTTP, closing the session when the test ends.
func connectMCP(t *testing.T, base string, c *http.Client) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "parentrag-test", Version: "v0"}, nil)
	session, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + MCPPath, HTTPClient: c}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", MCPPath, err)
	}
	t.Cleanup(func() { session.Close() })
	return session
}

// callRetrieve calls the retrieve tool with args.
func callRetrieve(t *testing.T, session *mcp.ClientSession, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: MCPRetrieveTool, Arguments: args})
	if err != nil {
		t.Fatalf("calling retrieve %v: %v", args, err)
	}
	return res
}

// toolText joins a result's text contents.
func toolText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n---\n")
}

func TestMCPListsRetrieveTool(t *testing.T) {
	s := New(Options{ShutdownDelay: -1})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts, _ := newValidatedServer(t, s)
	tools, err := connectMCP(t, ts.URL, ts.Client()).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 1 || tools.Tools[0].Name != MCPRetrieveTool || tools.Tools[0].InputSchema == nil || tools.Tools[0].OutputSchema == nil {
		t.Fatalf("tools %+v, want retrieve with input and output schemas", tools.Tools)
	}
	schema, _ := json.Marshal(tools.Tools[0].InputSchema)
	for _, want := range []string{`"query"`, `"maxParents"`, `"budget"`, `"filter"`, `"required":["query"]`, `"additionalProperties":false`} {
		if !strings.Contains(string(schema), want) {
			t.Errorf("input schema %s lacks %s", schema, want)
		}
	}
}

// The tool answers the parents of /v1/retrieve for the same arguments:
// as structured content and as one text per parent naming its source.
func TestMCPRetrieveAnswersAsRetrieve(t *testing.T) {
	s := New(Options{ShutdownDelay: -1})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts, _ := newValidatedServer(t, s)
	session := connectMCP(t, ts.URL, ts.Client())
	for _, args := range []map[string]any{
		{"query": "tomatoes"},
		{"query": "rollback revision", "maxParents": 2},
		{"query": "revision", "filter": map[string]any{"metadata": map[string]string{"team": "platform"}}},
		{"query": "tomatoes", "budget": 30},
	} {
		want := retrieveFor(t, ts.Client(), ts.URL, mustJSON(t, args))
		res := callRetrieve(t, session, args)
		if res.IsError {
			t.Fatalf("%v: tool error %s", args, toolText(res))
		}
		var got RetrieveResponse
		decodeStrict(t, []byte(mustJSON(t, res.StructuredContent)), &got)
		assertSameParents(t, "mcp "+mustJSON(t, args), got.Results, want.Results)
		if len(res.Content) != len(want.Results) {
			t.Fatalf("%v: %d text contents for %d parents", args, len(res.Content), len(want.Results))
		}
		for i, r := range want.Results {
			text := res.Content[i].(*mcp.TextContent).Text
			if !strings.Contains(text, "source: "+r.DocID) || !strings.Contains(text, r.ParentID) || !strings.HasSuffix(text, r.Text) {
				t.Errorf("%v: text %d %q does not name %s/%s and hold its text", args, i, text, r.DocID, r.ParentID)
			}
		}
	}
}

// Bad arguments are refused, before or by the retrieval, with a message
// that says what is wrong.
func TestMCPRetrieveRefuses(t *testing.T) {
	s := New(Options{ShutdownDelay: -1})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts, _ := newValidatedServer(t, s)
	session := connectMCP(t, ts.URL, ts.Client())
	for _, c := range []struct {
		args    map[string]any
		errPart string
	}{
		{map[string]any{"query": " "}, "query is required"},
		{map[string]any{"query": "x", "maxParents": 21}, "maxParents 21: want 1 to 20"},
		{map[string]any{"query": "x", "budget": -1}, "budget -1"},
		{map[string]any{"query": "x", "topK": 3}, "topK"},
		{map[string]any{"query": "x", "filter": map[string]any{"docID": "a"}}, "docID"},
		{map[string]any{"maxParents": 2}, "query"},
	} {
		res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: MCPRetrieveTool, Arguments: c.args})
		msg := ""
		switch {
		case err != nil:
			msg = err.Error()
		case res.IsError:
			msg = toolText(res)
		default:
			t.Errorf("%v: answered %s, want a refusal", c.args, toolText(res))
			continue
		}
		if !strings.Contains(msg, c.errPart) {
			t.Errorf("%v: %q, want it to mention %q", c.args, msg, c.errPart)
		}
	}
}

// A parent the tool returns reads whole as a resource; an unknown one is
// the protocol's resource-not-found error.
func TestMCPReadsParentResources(t *testing.T) {
	s := New(Options{ShutdownDelay: -1})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts, _ := newValidatedServer(t, s)
	session := connectMCP(t, ts.URL, ts.Client())
	templates, err := session.ListResourceTemplates(context.Background(), nil)
	if err != nil || len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != MCPParentURIPrefix+"{parentId}" {
		t.Fatalf("templates %+v (%v)", templates, err)
	}
	// A budget trims the parent the tool returns; the resource is whole.
	var got RetrieveResponse
	decodeStrict(t, []byte(mustJSON(t, callRetrieve(t, session, map[string]any{"query": "tomatoes", "maxParents": 1, "budget": 40}).StructuredContent)), &got)
	want := retrieveFor(t, ts.Client(), ts.URL, `{"query": "tomatoes", "maxParents": 1}`).Results[0]
	if len(got.Results) != 1 || !got.Results[0].Trimmed || got.Results[0].ParentID != want.ParentID {
		t.Fatalf("budgeted result %+v, want %s trimmed", got.Results, want.ParentID)
	}
	res, err := session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: MCPParentURIPrefix + want.ParentID})
	if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != want.Text || res.Contents[0].Meta["docId"] != want.DocID {
		t.Fatalf("reading %s: %+v (%v), want the whole text of %s", want.ParentID, res, err, want.DocID)
	}
	if _, err := session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: MCPParentURIPrefix + "nope"}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("reading an unknown parent: %v, want resource not found", err)
	}
}

// A request a sidecar forwards from loopback with the Service's host name
// is answered, as /v1/retrieve answers it.
func TestMCPAnswersThroughALocalProxy(t *testing.T) {
	s := New(Options{ShutdownDelay: -1})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts, _ := newValidatedServer(t, s)
	req, _ := http.NewRequest("POST", ts.URL+MCPPath, strings.NewReader(`{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}`))
	req.Host = "handbook.support.svc:8080"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("Host %s from loopback: %d, want 200", req.Host, resp.StatusCode)
	}
}
