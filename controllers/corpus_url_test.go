package controllers_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
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
	if c.Status.ActiveRevision.Documents != 4 {
		t.Fatalf("indexed %d documents, want README.md, tides.md, bread.txt and main.go", c.Status.ActiveRevision.Documents)
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

// largeArchive is a gzipped tar of files of size bytes of text each.
func largeArchive(t *testing.T, files, size int) []byte {
	t.Helper()
	var entries [][2]string
	for i := range files {
		var b strings.Builder
		fmt.Fprintf(&b, "# Part %d\n\n", i)
		for n := 0; b.Len() < size; n++ {
			fmt.Fprintf(&b, "Paragraph %d of part %d explains how glaciers carve valleys and why their ice flows downhill.\n\n", n, i)
		}
		entries = append(entries, [2]string{fmt.Sprintf("repo/part-%d.md", i), b.String()})
	}
	return tarGz(t, entries)
}

// Corpora indexed in the operator share its memory for remote documents
// (16 MiB in the suite): two whose URL sources unpack to 10 MiB each,
// created at once, both become Ready, the one that finds the memory taken
// retried until the other's reconcile is over; one whose source alone is
// over the memory is refused, saying so, and left to index in a Job.
func TestCorporaShareTheOperatorsRemoteMemory(t *testing.T) {
	srv := archiveServer(t, largeArchive(t, 4, 10<<20/4))
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(largeArchive(t, 4, 20<<20/4))
	}))
	t.Cleanup(big.Close)
	ns := newNamespace(t)
	p := newPolicy(t, 4000, 800)
	var corpora []*v1alpha1.Corpus
	for range 2 {
		c := inlineCorpus(ns, p.Name)
		c.Spec.Sources = []v1alpha1.Source{{Name: "repo", URL: &v1alpha1.URLSource{URL: srv.URL + "/docs.tar.gz"}}}
		if err := k8s.Create(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		corpora = append(corpora, c)
	}
	for _, c := range corpora {
		waitCurrent(t, c, 5*time.Minute)
		if c.Status.ActiveRevision.Documents != 4 || len(c.Status.SourceErrors) != 0 {
			t.Errorf("%s: %d documents, errors %+v; want the 4 parts", c.Name, c.Status.ActiveRevision.Documents, c.Status.SourceErrors)
		}
	}
	over := inlineCorpus(ns, p.Name, sampleDocs()[0])
	over.Spec.Sources = append(over.Spec.Sources, v1alpha1.Source{Name: "big", URL: &v1alpha1.URLSource{URL: big.URL + "/big.tar.gz"}})
	if err := k8s.Create(context.Background(), over); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, over, 2*time.Minute)
	if len(over.Status.SourceErrors) != 1 || !strings.Contains(over.Status.SourceErrors[0].Message, "over the 16 MiB of remote documents the operator keeps in memory") {
		t.Errorf("a source over the operator's memory: errors %+v, want it refused saying so", over.Status.SourceErrors)
	}
}
