// Package inspector is parentrag's page for people: a query's answer as a
// client's LLM receives it, the children that matched highlighted inside
// each parent, and a preview of how one or two ChunkingPolicies cut a
// document. The page is plain HTML, CSS and JavaScript modules embedded in
// the binary, with no build step; the query server serves it (see
// server.InspectorOptions) and it calls the server's POST /v1/retrieve and
// POST PreviewPath. This package holds the page and the preview's
// computation; the server bounds and guards both.
package inspector

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
)

// Where the server serves the page and its preview.
const (
	// Prefix is the page's folder: Prefix itself is the page.
	Prefix = "/inspector/"
	// PreviewPath answers a PreviewRequest with a Preview.
	PreviewPath = Prefix + "preview"
)

//go:embed static
var static embed.FS

// files is the page's files, as served under Prefix.
var files, _ = fs.Sub(static, "static")

// contentSecurityPolicy keeps the page to what it ships: its own scripts
// and styles, requests to its own origin, and no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// PagePaths lists the paths of the page's files as served: Prefix and
// each file under it. They hold no data of the index; what the page shows
// comes from the server's guarded endpoints.
func PagePaths() []string {
	out := []string{Prefix}
	fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, path.Join(Prefix, p))
		}
		return nil
	})
	return out
}

// Page serves the page's files under Prefix (Prefix itself is
// index.html) to GET and HEAD, with a Content-Security-Policy that runs
// only the page's own scripts and stops it from being framed.
func Page() http.Handler {
	fileServer := http.StripPrefix(Prefix, http.FileServerFS(files))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed: use GET", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		fileServer.ServeHTTP(w, r)
	})
}
