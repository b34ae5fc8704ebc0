package remote

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzReadArchive reads arbitrary bytes as a download (tar, gzipped tar,
// zip, JSON Lines or a single file, told apart as Fetch tells them) with
// small limits: it never panics; it either fails the source or returns
// documents that are non-empty UTF-8, have unique ids under the source
// name, fit the limits, and never a path that leaves the archive.
func FuzzReadArchive(f *testing.F) {
	f.Add(tarGz(f, regular("a.md", "# A\n\ntext", "d/b.txt", "b", "e.md", "")), "/a.tgz")
	f.Add(tarOf(f, regular("../up.md", "x", "/abs.md", "y", "ok.md", "z")), "/a.tar")
	f.Add(zipOf(f, []zipFile{{Name: "a.md", Body: "# A"}, {Name: "b.jsonl", Body: `{"_id":"1","text":"t"}` + "\n"}}), "/a.zip")
	f.Add([]byte(`{"_id": "x", "text": "y"}`+"\n"+`{"text": 1}`+"\n"), "/docs.jsonl")
	f.Add(gz(f, []byte("plain text")), "/f.txt.gz")
	f.Add([]byte("\x00\x01binary"), "/f.md")
	f.Fuzz(func(t *testing.T, body []byte, urlPath string) {
		if !strings.HasPrefix(urlPath, "/") || strings.ContainsAny(urlPath, "?#% \x00") {
			urlPath = "/f"
		}
		s, err := Spec{URL: "http://127.0.0.1" + urlPath, MaxFileBytes: 1 << 12, MaxTotalBytes: 1 << 16, MaxFiles: 64, TempDir: t.TempDir()}.settle()
		if err != nil {
			return
		}
		resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
		res, err := readResponse(resp, "s", s)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		total := 0
		for _, d := range res.Documents {
			if !strings.HasPrefix(d.ID, "s/") || seen[d.ID] || strings.Contains(d.ID, "/../") || strings.HasPrefix(d.ID, "s//") {
				t.Fatalf("document id %q (duplicate %v)", d.ID, seen[d.ID])
			}
			seen[d.ID] = true
			if !utf8.ValidString(d.Text) || strings.TrimSpace(d.Text) == "" {
				t.Fatalf("document %s: text %q", d.ID, d.Text)
			}
			total += len(d.Text)
		}
		if int64(total) > s.MaxTotalBytes || len(res.Documents) > 64*1024 {
			t.Fatalf("%d documents of %d bytes past the limits", len(res.Documents), total)
		}
		if res.Bytes != int64(len(body)) {
			t.Fatalf("Bytes %d, downloaded %d", res.Bytes, len(body))
		}
	})
}
