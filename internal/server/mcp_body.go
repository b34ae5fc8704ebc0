package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
)

// JSON-RPC 2.0 error codes of the answers given before the SDK reads a
// message.
const (
	jsonRPCParseError     = -32700
	jsonRPCInvalidRequest = -32600
	// jsonRPCServerBusy is in the range JSON-RPC leaves to servers.
	jsonRPCServerBusy = -32000
)

// mcpEndpoint serves /mcp: a POST's body is received as every protocol's
// is (see receiveBody: 413, 408, 503 and 400 for a body that is not
// UTF-8, here as JSON-RPC errors) before the SDK sees it, and a JSON-RPC
// batch, which MCP 2025-06-18 removed, is refused whole with "invalid
// request", none of its calls run: one POST is at most one search, whose
// slot the retrieve tool takes (see Server.query).
func (s *Server) mcpEndpoint() http.Handler {
	sdk := s.mcpHandler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			sdk.ServeHTTP(w, r)
			return
		}
		body, release, err := s.receiveBody(w, r)
		var over *overloadError
		switch {
		case errors.As(err, &over):
			s.overloaded(w, over, writeMCPError)
			return
		case err != nil:
			writeMCPError(w, statusOf(err), err.Error())
			return
		}
		defer release()
		if isJSONArray(body) {
			writeJSONRPCError(w, http.StatusBadRequest, jsonRPCInvalidRequest,
				"JSON-RPC batches are not supported (MCP 2025-06-18 removed them): send one message per POST")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		sdk.ServeHTTP(w, r)
	})
}

// isJSONArray reports whether body holds a JSON array: a JSON-RPC batch.
func isJSONArray(body []byte) bool {
	body = bytes.TrimLeft(body, " \t\r\n")
	return len(body) > 0 && body[0] == '['
}

// writeMCPError is the errorWriter of /mcp: a JSON-RPC error with id
// null, a parse error for a 400, the server's busy code for a 503 and
// "invalid request" otherwise.
func writeMCPError(w http.ResponseWriter, code int, msg string) {
	rpc := jsonRPCInvalidRequest
	switch code {
	case http.StatusBadRequest:
		rpc = jsonRPCParseError
	case http.StatusServiceUnavailable:
		rpc = jsonRPCServerBusy
	}
	writeJSONRPCError(w, code, rpc, msg)
}

// jsonRPCErrorAnswer is a JSON-RPC 2.0 error answer to a message whose id
// was not read: its id is null.
type jsonRPCErrorAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   jsonRPCError    `json:"error"`
}

// jsonRPCError is the error object of a JSON-RPC 2.0 answer.
type jsonRPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// writeJSONRPCError answers with HTTP status code and a JSON-RPC error.
func writeJSONRPCError(w http.ResponseWriter, code, rpc int, msg string) {
	writeJSON(w, code, jsonRPCErrorAnswer{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: jsonRPCError{Code: rpc, Message: msg}})
}
