package controllers_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// tarGz builds a gzipped tar of the files, in order.
func tarGz(t *testing.T, files [][2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f[0], Mode: 0o644, Size: int64(len(f[1])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(f[1]))
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// archiveServer serves an archive at /docs.tar.gz with an ETag.
func archiveServer(t *testing.T, archive []byte) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/docs.tar.gz" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Write(archive)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestURLSourceIndexesAnArchiveAndReportsWhatItRejects(t *testing.T) {
	docs := sampleDocs()
	archive := tarGz(t, [][2]string{
		{"repo/README.md", docs[0].Text},
		{"repo/docs/tides.md", docs[1].Text},
		{"repo/docs/bread.txt", docs[2].Text},
		{"repo/../../etc/passwd.md", "root:x:0:0"},
		{"repo/docs/logo.md", "\x89PNG\r\n\x1a\n\x00\x00binary"},
		{"repo/main.go", "package main"},
	})
	srv := archiveServer(t, archive)
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := inlineCorpus(ns, p.Name)
	c.Spec.Sources = []v1alpha1.Source{{Name: "repo", URL: &v1alpha1.URLSource{URL: srv.URL + "/docs.tar.gz"}}}
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	if c.Status.ActiveRevision.Documents != 3 {
		t.Fatalf("indexed %d documents, want README.md, tides.md and bread.txt", c.Status.ActiveRevision.Documents)
	}
	var rejected []string
	for _, e := range c.Status.SourceErrors {
		rejected = append(rejected, e.Document+": "+e.Message)
	}
	all := strings.Join(rejected, "\n")
	if len(rejected) != 2 || !strings.Contains(all, "passwd") || !strings.Contains(all, "logo.md") {
		t.Fatalf("rejected documents:\n%s", all)
	}
	if condition(c, v1alpha1.ConditionSourcesReady).Status != "False" {
		t.Fatal("SourcesReady is not False with rejected documents")
	}
	// With failurePolicy Fail the same archive builds nothing.
	strict := inlineCorpus(ns, p.Name)
	strict.Spec.Sources = []v1alpha1.Source{{Name: "repo", URL: &v1alpha1.URLSource{URL: srv.URL + "/docs.tar.gz"}, FailurePolicy: v1alpha1.FailureFail}}
	if err := k8s.Create(context.Background(), strict); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the strict Corpus to stall", func() (bool, error) {
		get(t, strict)
		st := condition(strict, v1alpha1.ConditionStalled)
		return st.Status == "True" && strings.Contains(st.Message, "failurePolicy is Fail"), nil
	})
	if strict.Status.ActiveRevision != nil {
		t.Fatalf("a strict source with rejected documents built revision %s", strict.Status.ActiveRevision.Name)
	}
	// A server that fails is reported, not fatal to the other sources.
	broken := inlineCorpus(ns, p.Name, docs[0])
	broken.Spec.Sources = append(broken.Spec.Sources, v1alpha1.Source{Name: "gone", URL: &v1alpha1.URLSource{URL: srv.URL + "/missing.tar.gz"}})
	if err := k8s.Create(context.Background(), broken); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, broken, 30*time.Second)
	if broken.Status.ActiveRevision.Documents != 1 || len(broken.Status.SourceErrors) != 1 || !strings.Contains(broken.Status.SourceErrors[0].Message, "404") {
		t.Fatalf("documents %d, errors %+v", broken.Status.ActiveRevision.Documents, broken.Status.SourceErrors)
	}
}
