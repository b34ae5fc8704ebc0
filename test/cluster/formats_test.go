//go:build cluster

package cluster_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/document/documenttest"
)

// TestArchiveOfHTMLPDFAndCodeAnswersWithPages serves, from this machine,
// an archive that holds a documentation page in HTML, a PDF manual with an
// outline, a Go file and a broken PDF. A claim-backed Corpus reads it by
// URL, an indexing Job builds it with section parents, and the Service
// answers with the heading path of each and the PDF's pages; the broken
// PDF is reported in status while the rest serves.
func TestArchiveOfHTMLPDFAndCodeAnswersWithPages(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "formats")
	applyKustomization(t, "config/samples", ns)
	manual := documenttest.Manual(t, documenttest.ManualOptions{})
	archive := tarGz(t, map[string][]byte{
		"site/proxy.html":      []byte(htmlPage),
		"manual.pdf":           manual,
		"broken.pdf":           manual[:len(manual)/2],
		"code/ratelimit.go":    []byte(goFile),
		"notes/unreadable.bin": {0x00, 0x01, 0x02},
	})
	url := serveFromHost(t, "/docs.tar.gz", archive)

	c := &v1alpha1.Corpus{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "manuals"}, Spec: v1alpha1.CorpusSpec{
		ChunkingPolicyRef: v1alpha1.PolicyReference{Name: "parentrag-sample-handbook"},
		Sources:           []v1alpha1.Source{{Name: "site", URL: &v1alpha1.URLSource{URL: url}}},
		ParentStore: &v1alpha1.ParentStore{PersistentVolumeClaim: &v1alpha1.PersistentVolumeClaimParentStore{
			Size: resource.MustParse("1Gi"), AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}}},
	}}
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	rt := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "manuals"}, Spec: v1alpha1.RetrieverSpec{
		CorpusRef: v1alpha1.LocalObjectReference{Name: c.Name}}}
	if err := k8s.Create(ctx, rt); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 10*time.Minute)
	waitCurrent(t, rt, 5*time.Minute)
	get(t, c)
	if lb := c.Status.LastBuild; lb == nil || lb.Mode != v1alpha1.IndexingJob || lb.Result != "Succeeded" {
		t.Fatalf("last build %+v, want a Job that succeeded", c.Status.LastBuild)
	}
	broken := slices.IndexFunc(c.Status.SourceErrors, func(e v1alpha1.SourceError) bool { return strings.HasSuffix(e.Document, "broken.pdf") })
	if broken < 0 {
		t.Fatalf("source errors %+v, want broken.pdf reported", c.Status.SourceErrors)
	}
	t.Logf("revision %s: %d documents, %d parents, %d children; source errors: %+v", c.Status.ActiveRevision.Name[:8],
		c.Status.ActiveRevision.Documents, c.Status.ActiveRevision.Parents, c.Status.ActiveRevision.Children, c.Status.SourceErrors)

	e := endpointOf(t, ns, rt.Name)
	e.waitAnswering(t)
	for _, q := range []struct{ question, doc, heading string }{
		{"How many times does the proxy retry another upstream when a connection is refused?", "manual.pdf", "4.2 Configuring the proxy"},
		{"Which header carries the client address to the upstream?", "proxy.html", "Forwarded headers"},
		{"How does the token bucket refill its tokens?", "ratelimit.go", "func (b *Bucket) refill"},
	} {
		resp, err := e.retrieve(ctx, q.question, 3)
		if err != nil || len(resp.Results) == 0 {
			t.Fatalf("%q: %+v, %v", q.question, resp, err)
		}
		top := resp.Results[0]
		if !strings.HasSuffix(top.DocID, q.doc) || !slices.Contains(top.HeadingPath, q.heading) {
			t.Errorf("%q answered first by %s %q, want %s under %q", q.question, top.DocID, top.HeadingPath, q.doc, q.heading)
			continue
		}
		if q.doc == "manual.pdf" && (top.Pages == nil || top.Pages.First < 1 || top.Pages.Last < top.Pages.First) {
			t.Errorf("%q: the PDF's parent carries no pages: %+v", q.question, top.Pages)
		}
		t.Logf("%q: %s %q pages %+v", q.question, top.DocID, top.HeadingPath, top.Pages)
	}
}

// serveFromHost serves body at path from this machine, on the address the
// node's pods reach it at (PARENTRAG_HOST_ADDR, default the one-node
// cluster's node address), until the test ends, and returns its URL.
func serveFromHost(t *testing.T, path string, body []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(envOr("PARENTRAG_HOST_ADDR", "10.244.0.1"), "0"))
	if err != nil {
		t.Fatalf("listening where pods can reach this machine: %v (set PARENTRAG_HOST_ADDR)", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/gzip")
		w.Write(body)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return fmt.Sprintf("http://%s%s", ln.Addr(), path)
}

// tarGz makes a gzipped tar archive of files.
func tarGz(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(files[name])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(files[name]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// htmlPage is a page of an exported documentation site: navigation,
// a footer and a script around the content.
const htmlPage = `<!doctype html>
<html><head><title>Acme Proxy: headers</title><script>var tracking = "navigation";</script></head>
<body>
<nav class="sidebar"><ul><li><a href="/">Home</a></li><li><a href="/install">Install</a></li></ul></nav>
<main>
<h1>Headers</h1>
<p>The proxy rewrites a few request headers before it forwards a request.</p>
<h2>Forwarded headers</h2>
<p>The proxy adds <code>X-Forwarded-For</code>, which carries the client address to the upstream, and
<code>X-Forwarded-Proto</code>, which names the scheme the client used.</p>
<table><tr><th>header</th><th>value</th></tr><tr><td>X-Forwarded-For</td><td>client address</td></tr></table>
<h2>Removed headers</h2>
<p>Hop-by-hop headers such as <code>Connection</code> and <code>Keep-Alive</code> are removed.</p>
</main>
<footer>Copyright Acme. All rights reserved.</footer>
</body></html>
`

// goFile is a small Go source file of a few top-level definitions.
const goFile = `// Package ratelimit limits how often a client may call the proxy.
package ratelimit

import "time"

// Bucket is a token bucket: each call takes a token; tokens come back at
// a fixed rate up to the bucket's size.
type Bucket struct {
	size, tokens int
	every        time.Duration
	last         time.Time
}

// Take takes a token, reporting whether one was left.
func (b *Bucket) Take(now time.Time) bool {
	b.refill(now)
	if b.tokens == 0 {
		return false
	}
	b.tokens--
	return true
}

// refill adds one token for each interval passed since the last refill,
// up to the bucket's size, and moves the refill time forward.
func (b *Bucket) refill(now time.Time) {
	n := int(now.Sub(b.last) / b.every)
	if n <= 0 {
		return
	}
	b.tokens = min(b.size, b.tokens+n)
	b.last = b.last.Add(time.Duration(n) * b.every)
}
`
