package sourceset

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/source/remote"
)

func TestUnderMovesGlobsIntoThePath(t *testing.T) {
	for _, c := range []struct {
		dir  string
		in   []string
		want []string
	}{
		{"", []string{"**/*.md"}, []string{"**/*.md"}},
		{".", []string{"**/*.md"}, []string{"**/*.md"}},
		{"./docs", []string{"**/*.md", "./guide/*.txt"}, []string{"docs/**/*.md", "docs/guide/*.txt"}},
		{"docs/", []string{"/a.md"}, []string{"docs/a.md"}},
		{"docs/handbook", nil, nil},
	} {
		if got := under(c.dir, c.in); !slices.Equal(got, c.want) {
			t.Errorf("under(%q, %q) = %q, want %q", c.dir, c.in, got, c.want)
		}
	}
}

func TestCrossNamespaceSourceRefIsRefusedWhenDisabled(t *testing.T) {
	src := v1alpha1.Source{Name: "docs", SourceRef: &v1alpha1.SourceReference{Kind: v1alpha1.SourceRefGitRepository, Name: "handbook", Namespace: "flux-system"}}
	set, err := (&Reader{Namespace: "team-a", NoCrossNamespaceRefs: true}).Read(t.Context(), []v1alpha1.Source{src})
	if err != nil {
		t.Fatal(err)
	}
	b := set.Blocked
	if b == nil || !b.Stalled || b.Reason != v1alpha1.ReasonCrossNamespaceRefDenied || b.Source != "docs" ||
		!strings.Contains(b.Message, "GitRepository flux-system/handbook is in another namespace") || !strings.Contains(b.Message, "--no-cross-namespace-refs") {
		t.Fatalf("blocked %+v, want a stall that names the object and the flag", b)
	}
}

// TestArtifactsAreDownloadedOncePerDigest: an artifact is content-addressed,
// so reading the same digest again costs no request, a new digest replaces
// the stored read, and a forgotten Corpus's reads are dropped.
func TestArtifactsAreDownloadedOncePerDigest(t *testing.T) {
	v1, v2 := artifactTarGz(t, "docs/a.md", "# A\n\nFirst."), artifactTarGz(t, "docs/a.md", "# A\n\nSecond.")
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if strings.HasSuffix(r.URL.Path, "v2.tar.gz") {
			w.Write(v2)
			return
		}
		w.Write(v1)
	}))
	defer srv.Close()
	f := &Fetchers{}
	key := "team-a/docs/GitRepository team-a/handbook"
	read := func(file string, body []byte) string {
		t.Helper()
		spec := remote.Spec{URL: srv.URL + "/" + file, Checksum: digestOf(body), Include: []string{"docs/**/*.md"}}
		res, err := f.readArtifact(t.Context(), key, "docs", spec)
		if err != nil || len(res.Documents) != 1 {
			t.Fatalf("read %s: %+v, %v", file, res, err)
		}
		return res.Documents[0].Text
	}
	if got := read("v1.tar.gz", v1); !strings.Contains(got, "First") {
		t.Fatalf("read %q", got)
	}
	read("v1.tar.gz", v1)
	if n := requests.Load(); n != 1 {
		t.Fatalf("%d requests for one digest read twice, want 1", n)
	}
	if got := read("v2.tar.gz", v2); !strings.Contains(got, "Second") || requests.Load() != 2 {
		t.Fatalf("a new digest read %q with %d requests, want the second text and 2", got, requests.Load())
	}
	f.ForgetSourceRefs("team-a", []v1alpha1.Source{{Name: "docs", SourceRef: &v1alpha1.SourceReference{}}})
	read("v2.tar.gz", v2)
	if n := requests.Load(); n != 3 {
		t.Fatalf("%d requests after the Corpus was forgotten, want 3", n)
	}
}

// artifactTarGz is a Flux artifact holding one file.
func artifactTarGz(t *testing.T, name, text string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(text)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write([]byte(text))
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// digestOf is a Flux artifact digest of b.
func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
