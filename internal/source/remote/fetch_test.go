package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

func TestFetchSingleFile(t *testing.T) {
	tests := []struct {
		name, path, contentType, body string
		want                          []hierarchy.Document
	}{{
		name: "markdown", path: "/docs/guide.md", body: "intro\n# Guide\n\ntext",
		want: []hierarchy.Document{{ID: "src/guide.md", Title: "Guide", Text: "intro\n# Guide\n\ntext"}},
	}, {
		name: "markdown without heading is titled by its file name", path: "/notes.markdown", body: "## second level",
		want: []hierarchy.Document{{ID: "src/notes.markdown", Title: "notes.markdown", Text: "## second level"}},
	}, {
		name: "text titled by its file name", path: "/a/readme.txt", body: "\xef\xbb\xbf# not a title",
		want: []hierarchy.Document{{ID: "src/readme.txt", Title: "readme.txt", Text: "# not a title"}},
	}, {
		name: "reStructuredText", path: "/intro.rst", body: ".. comment\n\n=====\nIntro\n=====\n\nSub\n---\n",
		want: []hierarchy.Document{{ID: "src/intro.rst", Title: "Intro", Text: ".. comment\n\n=====\nIntro\n=====\n\nSub\n---\n"}},
	}, {
		name: "type from Content-Type", path: "/raw/LICENSE", contentType: "text/markdown; charset=utf-8", body: "# MIT\n",
		want: []hierarchy.Document{{ID: "src/LICENSE", Title: "MIT", Text: "# MIT\n"}},
	}, {
		name: "JSON Lines give several documents", path: "/corpus.jsonl",
		body: `{"id":"b","title":"B","text":"two","metadata":{"k":"v"}}` + "\n\n" + `{"_id":"a","text":"one"}` + "\n",
		want: []hierarchy.Document{
			{ID: "src/a", Text: "one"},
			{ID: "src/b", Title: "B", Text: "two", Metadata: map[string]string{"k": "v"}},
		},
	}, {
		name: "gzipped file", path: "/corpus.md.gz", body: "\x00gz:# Zipped\n",
		want: []hierarchy.Document{{ID: "src/corpus.md", Title: "Zipped", Text: "# Zipped\n"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := []byte(tt.body)
			if b, ok := strings.CutPrefix(tt.body, "\x00gz:"); ok {
				body = gz(t, []byte(b))
			}
			srv, _ := serveBody(t, body, tt.contentType)
			res := fetchOK(t, "src", Spec{URL: srv.URL + tt.path})
			if !reflect.DeepEqual(res.Documents, tt.want) || len(res.Errors) != 0 {
				t.Errorf("documents %+v errors %v, want %+v", res.Documents, res.Errors, tt.want)
			}
			if res.Bytes != int64(len(body)) || res.Version.Checksum != sha256Of(body) {
				t.Errorf("bytes %d checksum %s, want %d %s", res.Bytes, res.Version.Checksum, len(body), sha256Of(body))
			}
		})
	}
}

func TestFetchSingleFileOfUnsupportedType(t *testing.T) {
	srv, _ := serveBody(t, []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), "image/png")
	res := fetchOK(t, "src", Spec{URL: srv.URL + "/page"})
	if len(res.Documents) != 0 {
		t.Errorf("documents %v, want none", ids(res.Documents))
	}
	wantContains(t, errorFor(t, res, "src/page").Message, "unsupported file type", "no extension")
}

// nestedTree is an archive with nested folders, hidden files and files of
// every readable type and one that is not.
var nestedTree = []tarFile{
	{Name: "docs/", Type: '5'},
	{Name: "README.md", Body: "# Project\n"},
	{Name: "docs/guide/install.md", Body: "# Install\n\nrun it"},
	{Name: "docs/guide/deep/more/faq.markdown", Body: "# FAQ\n"},
	{Name: "docs/notes.txt", Body: "notes"},
	{Name: "docs/ref.rst", Body: "Reference\n=========\n"},
	{Name: "docs/drafts/wip.md", Body: "# WIP\n"},
	{Name: "data/corpus.jsonl", Body: `{"id":"j1","text":"jay"}`},
	{Name: "logo.svgz", Body: "\x1f\x8b compressed"},
	{Name: ".github/ISSUE_TEMPLATE.md", Body: "# Issue\n"},
	{Name: "docs/.hidden.md", Body: "# Hidden\n"},
}

func TestFetchTarGzIncludeExclude(t *testing.T) {
	srv, _ := serveBody(t, tarGz(t, nestedTree), "application/gzip")
	tests := []struct {
		name string
		spec Spec
		want []string
	}{{
		name: "default include skips other types and dot-folders",
		want: []string{"s/README.md", "s/docs/drafts/wip.md", "s/docs/guide/deep/more/faq.markdown", "s/docs/guide/install.md", "s/docs/notes.txt", "s/docs/ref.rst", "s/j1"},
	}, {
		name: "exclude a folder",
		spec: Spec{Exclude: []string{"docs/drafts/**", "**/*.txt"}},
		want: []string{"s/README.md", "s/docs/guide/deep/more/faq.markdown", "s/docs/guide/install.md", "s/docs/ref.rst", "s/j1"},
	}, {
		name: "include a subtree",
		spec: Spec{Include: []string{"./docs/guide/**/*.md"}},
		want: []string{"s/docs/guide/install.md"},
	}, {
		name: "a dot pattern reaches hidden files",
		spec: Spec{Include: []string{".github/*.md", "docs/.*.md"}},
		want: []string{"s/.github/ISSUE_TEMPLATE.md", "s/docs/.hidden.md"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.URL = srv.URL + "/site.tar.gz"
			res := fetchOK(t, "s", tt.spec)
			if got := ids(res.Documents); !reflect.DeepEqual(got, tt.want) || len(res.Errors) != 0 {
				t.Errorf("ids %v errors %v, want %v", got, res.Errors, tt.want)
			}
		})
	}
}

func TestFetchTarGzTitlesAndText(t *testing.T) {
	srv, _ := serveBody(t, tarGz(t, nestedTree), "")
	res := fetchOK(t, "s", Spec{URL: srv.URL + "/a.tgz", Include: []string{"docs/guide/install.md", "docs/notes.txt", "docs/ref.rst"}})
	want := []hierarchy.Document{
		{ID: "s/docs/guide/install.md", Title: "Install", Text: "# Install\n\nrun it"},
		{ID: "s/docs/notes.txt", Title: "notes.txt", Text: "notes"},
		{ID: "s/docs/ref.rst", Title: "Reference", Text: "Reference\n=========\n"},
	}
	if !reflect.DeepEqual(res.Documents, want) {
		t.Errorf("documents %+v, want %+v", res.Documents, want)
	}
}

func TestFetchUnsupportedTypeThatMatchedInclude(t *testing.T) {
	srv, _ := serveBody(t, tarGz(t, nestedTree), "")
	res := fetchOK(t, "s", Spec{URL: srv.URL + "/a.tgz", Include: []string{"*"}})
	if got := ids(res.Documents); !reflect.DeepEqual(got, []string{"s/README.md"}) {
		t.Errorf("ids %v", got)
	}
	wantContains(t, errorFor(t, res, "s/logo.svgz").Message, "unsupported file type .svgz")
}

func TestFetchPlainTar(t *testing.T) {
	srv, _ := serveBody(t, tarOf(t, regular("a.md", "# A", "b/c.txt", "c")), "")
	res := fetchOK(t, "s", Spec{URL: srv.URL + "/download"}) // told by its magic
	if got := ids(res.Documents); !reflect.DeepEqual(got, []string{"s/a.md", "s/b/c.txt"}) {
		t.Errorf("ids %v", got)
	}
}

// v7Tar turns a one-entry ustar archive into the old V7 format, which
// has no magic: the header's magic and version are cleared and its
// checksum recomputed.
func v7Tar(t *testing.T, ustar []byte) []byte {
	t.Helper()
	b := bytes.Clone(ustar)
	clear(b[257:265])
	copy(b[148:156], "        ")
	sum := 0
	for _, c := range b[:512] {
		sum += int(c)
	}
	copy(b[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

func TestFetchTarWithoutMagic(t *testing.T) {
	archive := v7Tar(t, tarOf(t, regular("old.md", "# Old")))
	if magicKind(archive) != plainFile {
		t.Fatal("the test archive still has a magic")
	}
	srv, _ := serveBody(t, archive, "")
	res := fetchOK(t, "s", Spec{URL: srv.URL + "/old.tar"}) // trusted by its extension
	if got := ids(res.Documents); !reflect.DeepEqual(got, []string{"s/old.md"}) {
		t.Errorf("ids %v errors %v", got, res.Errors)
	}
}

// TestFetchHashesBytesAfterTheArchiveEnd checks that bytes after the end
// of a tar (record padding, as GNU tar writes) are downloaded and hashed.
func TestFetchHashesBytesAfterTheArchiveEnd(t *testing.T) {
	archive := append(tarOf(t, regular("a.md", "# A")), make([]byte, 200<<10)...)
	srv, _ := serveBody(t, archive, "")
	res := fetchOK(t, "s", Spec{URL: srv.URL + "/a.tar", Checksum: sha256Of(archive)})
	if res.Bytes != int64(len(archive)) || res.Version.Checksum != sha256Of(archive) || len(res.Documents) != 1 {
		t.Errorf("bytes %d checksum %s documents %d, want %d %s 1", res.Bytes, res.Version.Checksum, len(res.Documents), len(archive), sha256Of(archive))
	}
}

func TestFetchZip(t *testing.T) {
	archive := zipOf(t, []zipFile{
		{Name: "docs/", Mode: fs.ModeDir},
		{Name: "docs/a/b.md", Body: "# B\n"},
		{Name: "top.txt", Body: "top"},
		{Name: `win\path.md`, Body: "# Win\n"},
		{Name: "img.png", Body: "\x89PNG"},
	})
	for _, tt := range []struct{ name, path, contentType string }{
		{"by extension", "/a.zip", ""},
		{"by magic", "/download", "application/octet-stream"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := serveBody(t, archive, tt.contentType)
			res := fetchOK(t, "z", Spec{URL: srv.URL + tt.path, TempDir: t.TempDir()})
			want := []hierarchy.Document{
				{ID: "z/docs/a/b.md", Title: "B", Text: "# B\n"},
				{ID: "z/top.txt", Title: "top.txt", Text: "top"},
				{ID: "z/win/path.md", Title: "Win", Text: "# Win\n"},
			}
			if !reflect.DeepEqual(res.Documents, want) || len(res.Errors) != 0 {
				t.Errorf("documents %+v errors %v", res.Documents, res.Errors)
			}
		})
	}
}

func TestFetchZipLeavesNoTempFile(t *testing.T) {
	dir := t.TempDir()
	srv, _ := serveBody(t, zipOf(t, []zipFile{{Name: "a.md", Body: "a"}}), "")
	fetchOK(t, "z", Spec{URL: srv.URL + "/a.zip", TempDir: dir})
	if left, err := os.ReadDir(dir); err != nil || len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestFetchFluxArtifact reads a source-controller artifact as Flux builds
// it: a gzipped tar of a repository, with folder entries, served from the
// artifact server with its digest.
func TestFetchFluxArtifact(t *testing.T) {
	archive := tarGz(t, []tarFile{
		{Name: "README.md", Body: "# podinfo\n\nA demo."},
		{Name: "docs", Type: '5'},
		{Name: "docs/guide", Type: '5'},
		{Name: "docs/guide/install.md", Body: "# Install\n"},
		{Name: "docs/reference.md", Body: "no heading"},
		{Name: "kustomize/deployment.yaml", Body: "kind: Deployment"},
	})
	s := &served{body: archive, contentType: "application/gzip", lastModified: "Tue, 14 Nov 2023 22:13:20 GMT"}
	srv := serve(t, s)
	url := srv.URL + "/gitrepository/flux-system/podinfo/6b1f5bd0c1e5f6d6f0f0a1d3e0b1c2d3e4f5a6b7.tar.gz"
	res := fetchOK(t, "podinfo", Spec{URL: url, Checksum: sha256Of(archive)})
	want := []hierarchy.Document{
		{ID: "podinfo/README.md", Title: "podinfo", Text: "# podinfo\n\nA demo."},
		{ID: "podinfo/docs/guide/install.md", Title: "Install", Text: "# Install\n"},
		{ID: "podinfo/docs/reference.md", Title: "reference.md", Text: "no heading"},
	}
	if !reflect.DeepEqual(res.Documents, want) || len(res.Errors) != 0 {
		t.Errorf("documents %+v errors %v", res.Documents, res.Errors)
	}
	if res.Version.Checksum != sha256Of(archive) || res.Version.LastModified != s.lastModified {
		t.Errorf("version %+v", res.Version)
	}
}

func TestFetchVersionFromHeaders(t *testing.T) {
	body := []byte("# A\n")
	s := &served{body: body, etag: `"v1"`, lastModified: "Mon, 02 Jan 2006 15:04:05 GMT"}
	srv := serve(t, s)
	res := fetchOK(t, "s", Spec{URL: srv.URL + "/a.md"})
	want := Version{ETag: `"v1"`, LastModified: "Mon, 02 Jan 2006 15:04:05 GMT", Checksum: sha256Of(body)}
	if res.Version != want {
		t.Errorf("version %+v, want %+v", res.Version, want)
	}
	if got := s.last().Header.Get("Accept-Encoding"); got != "identity" {
		t.Errorf("Accept-Encoding %q, want identity (checksum of the stored bytes)", got)
	}
}

func TestFetchSendsHeaders(t *testing.T) {
	srv, s := serveBody(t, []byte("a"), "")
	fetchOK(t, "s", Spec{URL: srv.URL + "/a.txt", Header: http.Header{"Authorization": {"Bearer t0k"}}})
	if got := s.last().Header.Get("Authorization"); got != "Bearer t0k" {
		t.Errorf("Authorization %q", got)
	}
}

func TestFetchChecksum(t *testing.T) {
	archive := tarGz(t, regular("a.md", "# A"))
	srv, _ := serveBody(t, archive, "")
	sum := sha256Of(archive)
	for _, ok := range []string{sum, strings.TrimPrefix(sum, "sha256:"), "SHA256:" + strings.ToUpper(sum[7:])} {
		if res := fetchOK(t, "s", Spec{URL: srv.URL + "/a.tgz", Checksum: ok}); len(res.Documents) != 1 {
			t.Errorf("checksum %s: documents %v", ok, ids(res.Documents))
		}
	}
	wrong := "sha256:" + strings.Repeat("0", 64)
	res, err := Fetch(t.Context(), nil, "s", Spec{URL: srv.URL + "/a.tgz", Checksum: wrong})
	if !errors.Is(err, ErrChecksum) || len(res.Documents) != 0 {
		t.Fatalf("err %v documents %v, want ErrChecksum and nothing", err, ids(res.Documents))
	}
	wantContains(t, err.Error(), wrong, sum)
}

func TestFetchRefusesBadSpec(t *testing.T) {
	for _, spec := range []Spec{
		{URL: "ftp://example.com/a.tgz"},
		{URL: "/relative/a.tgz"},
		{URL: "https://example.com/a.tgz", Checksum: "md5:abc"},
		{URL: "https://example.com/a.tgz", Checksum: "sha256:abc"},
		{URL: "https://example.com/a.tgz", Include: []string{"docs/[.md"}},
		{URL: "https://example.com/a.tgz", Exclude: []string{""}},
		{URL: "https://example.com/a.tgz", MaxFiles: -1},
	} {
		if _, err := Fetch(t.Context(), nil, "s", spec); err == nil || !strings.HasPrefix(err.Error(), "remote source spec: ") {
			t.Errorf("%+v: err %v, want a spec error", spec, err)
		}
	}
}

func TestFetchStatusErrors(t *testing.T) {
	for _, tt := range []struct {
		code int
		body string
		want []string
	}{
		{http.StatusNotFound, "artifact   not\n found", []string{"404 Not Found", "artifact not found"}},
		{http.StatusInternalServerError, strings.Repeat("x", 5000), []string{"500 Internal Server Error", strings.Repeat("x", 200) + "…"}},
		{http.StatusBadGateway, "\x00\x01", []string{"502 Bad Gateway", "binary data"}},
	} {
		srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(tt.code)
			_, _ = w.Write([]byte(tt.body))
		}))
		_, err := Fetch(t.Context(), nil, "s", Spec{URL: srv.URL + "/a.tgz?token=s3cret"})
		var se *StatusError
		if !errors.As(err, &se) || se.StatusCode != tt.code {
			t.Fatalf("err %v, want a StatusError %d", err, tt.code)
		}
		wantContains(t, err.Error(), append(tt.want, "remote source "+srv.URL+"/a.tgz:")...)
		if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), strings.Repeat("x", 201)) {
			t.Errorf("error shows the query or too much body: %v", err)
		}
	}
}

func TestFetchTransportErrorRedactsURL(t *testing.T) {
	srv := serve(t, http.NotFoundHandler())
	srv.Close()
	_, err := Fetch(t.Context(), nil, "s", Spec{URL: srv.URL + "/a.tgz?sig=s3cret"})
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), srv.URL+"/a.tgz") {
		t.Errorf("err %v, want a transport error naming the URL without its query", err)
	}
}

func TestFetchNotAnArchive(t *testing.T) {
	srv, _ := serveBody(t, []byte("<!doctype html><title>Sign in</title>"), "text/html")
	_, err := Fetch(t.Context(), nil, "s", Spec{URL: srv.URL + "/a.tar.gz"})
	if err == nil {
		t.Fatal("a login page served for an archive was accepted")
	}
	wantContains(t, err.Error(), "expected a gzipped tar archive", "<!doctype html>")
}

func TestFetchSlowServerHonoursContext(t *testing.T) {
	stopped := make(chan struct{})
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000000")
		_, _ = w.Write(bytes.Repeat([]byte("a"), 1000))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			close(stopped)
		case <-time.After(10 * time.Second):
		}
	}))
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Fetch(ctx, nil, "s", Spec{URL: srv.URL + "/a.md"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Fetch took %v after the deadline", d)
	}
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Error("the request was not abandoned")
	}
}
