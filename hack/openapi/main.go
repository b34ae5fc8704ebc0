// Command openapi writes the query server's OpenAPI description to the
// file given (docs/api/openapi.json), so the published copy is the one the
// server serves at /openapi.json.
package main

import (
	"fmt"
	"os"

	"github.com/parentrag/parentrag/internal/server"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./hack/openapi docs/api/openapi.json")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], server.OpenAPIDocument(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
