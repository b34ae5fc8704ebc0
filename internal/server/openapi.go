package server

import (
	_ "embed"
	"net/http"
)

// OpenAPIPath is where the server serves its OpenAPI description.
const OpenAPIPath = "/openapi.json"

// openAPIDocument is the OpenAPI 3.1 description of every endpoint; tests
// validate real requests and answers of each against it, and
// docs/api/openapi.json is a copy (go run ./hack/openapi).
//
//go:embed openapi.json
var openAPIDocument []byte

// OpenAPIDocument returns the server's OpenAPI 3.1 description, as JSON.
func OpenAPIDocument() []byte { return append([]byte(nil), openAPIDocument...) }

// serveOpenAPI answers GET /openapi.json.
func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed: use GET")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(openAPIDocument)
}
