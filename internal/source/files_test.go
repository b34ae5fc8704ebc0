package source

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/document/documenttest"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// writeTree creates files (slash paths relative to dir) with the given
// contents.
func writeTree(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func docIDs(docs []hierarchy.Document) []string {
	var ids []string
	for _, d := range docs {
		ids = append(ids, d.ID)
	}
	return ids
}

func TestLoadPathsFolderTree(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string][]byte{
		"z.md":                    []byte("# Zed\n\nlast by name"),
		"a.txt":                   []byte("plain text"),
		"guide/intro.markdown":    []byte("intro"),
		"guide/b.md":              []byte("## Not a title\n\n# Guide B\n"),
		"guide/deep/c.md":         []byte("deep"),
		"corpus.jsonl":            []byte(`{"_id":"j2","title":"J2","text":"two"}` + "\n\n" + `{"_id":"j1","text":"one","metadata":{"k":"v"}}` + "\n" + `{"id":"j3","text":"three"}` + "\n"),
		"more/corpus.jsonl.gz":    gzipped(t, []byte(`{"_id":"g1","title":"G","text":"gz text"}`+"\n")),
		"UPPER.MD":                []byte("upper-case extension"),
		"code.go":                 []byte("package main"),
		"ignored.json":            []byte(`{"_id":"x","text":"y"}`),
		"ignored.doc":             {0xd0, 0xcf, 0x11, 0xe0, 0},
		"guide/notes.md.bak":      []byte("backup"),
		"guide/deep/image.png":    {0x89, 'P', 'N', 'G', 0},
		"empty-dir-sibling/.keep": nil,
	})
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	docs, err := LoadPaths([]string{dir})
	if err != nil {
		t.Fatalf("LoadPaths: %v", err)
	}
	// Files in lexical order of their relative slash paths; a JSON Lines
	// file contributes its documents, in file order, at its place.
	want := []hierarchy.Document{
		{ID: "UPPER.MD", Text: "upper-case extension"},
		{ID: "a.txt", Text: "plain text"},
		{ID: "code.go", Text: "package main", Metadata: map[string]string{hierarchy.MetaLanguage: "go"}},
		{ID: "j2", Title: "J2", Text: "two"},
		{ID: "j1", Text: "one", Metadata: map[string]string{"k": "v"}},
		{ID: "j3", Text: "three"},
		{ID: "guide/b.md", Title: "Guide B", Text: "## Not a title\n\n# Guide B\n"},
		{ID: "guide/deep/c.md", Text: "deep"},
		{ID: "guide/intro.markdown", Text: "intro"},
		{ID: "g1", Title: "G", Text: "gz text"},
		{ID: "z.md", Title: "Zed", Text: "# Zed\n\nlast by name"},
	}
	if !reflect.DeepEqual(docs, want) {
		t.Errorf("documents\n got %+v\nwant %+v", docs, want)
	}
}

func TestLoadPathsFilesAndFolders(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string][]byte{
		"one/a.md":       []byte("a"),
		"two/b.md":       []byte("b"),
		"loose.data":     []byte("read whatever its extension"),
		"two/c/d.txt":    []byte("d"),
		"notes.JSONL":    []byte(`{"_id":"n1","text":"upper-case jsonl"}` + "\n"),
		"upper.JSONL.GZ": gzipped(t, []byte(`{"_id":"u1","text":"upper-case gz"}`+"\n")),
	})
	docs, err := LoadPaths([]string{
		filepath.Join(dir, "two"), filepath.Join(dir, "loose.data"), filepath.Join(dir, "one"),
		filepath.Join(dir, "notes.JSONL"), filepath.Join(dir, "upper.JSONL.GZ"),
	})
	if err != nil {
		t.Fatalf("LoadPaths: %v", err)
	}
	// Paths in the order given; ids relative to the folder, or the file
	// name for a file given directly.
	want := []string{"b.md", "c/d.txt", "loose.data", "a.md", "n1", "u1"}
	if got := docIDs(docs); !reflect.DeepEqual(got, want) {
		t.Errorf("ids %q, want %q", got, want)
	}
	if docs[2].Text != "read whatever its extension" {
		t.Errorf("loose file text %q", docs[2].Text)
	}
}

func TestLoadPathsErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string][]byte
		path  string   // relative to the temp dir; "" is the dir itself
		want  []string // substrings; "$DIR" is replaced by the temp dir
	}{
		{"binary file", map[string][]byte{"ok.md": []byte("fine"), "bin.txt": []byte("abc\x00def")},
			"", []string{"$DIR/bin.txt", "binary", "offset 3"}},
		{"invalid UTF-8", map[string][]byte{"latin1.md": []byte("caf\xe9 au lait")},
			"", []string{"$DIR/latin1.md", "invalid UTF-8", "byte offset 3"}},
		{"invalid UTF-8 after multi-byte text", map[string][]byte{"x.txt": []byte("héllo \xff")},
			"", []string{"$DIR/x.txt", "byte offset 7"}},
		{"truncated sequence at the end", map[string][]byte{"x.txt": []byte("ok \xe2\x82")},
			"", []string{"$DIR/x.txt", "byte offset 3"}},
		{"missing path", nil, "nope", []string{"$DIR/nope", "no such file or directory"}},
		{"empty folder", nil, "", []string{"no documents found in $DIR", ".md", ".pdf", "source code"}},
		{"only ignored files", map[string][]byte{"a.png": []byte("x"), "b.json": []byte("{}")},
			"", []string{"no documents found"}},
		{"JSONL without _id", map[string][]byte{"c.jsonl": []byte(`{"_id":"a","text":"x"}` + "\n\n" + `{"text":"no id"}` + "\n")},
			"", []string{"$DIR/c.jsonl:3:", `"id" (or "_id") and "text"`}},
		{"JSONL without text", map[string][]byte{"c.jsonl": []byte(`{"_id":"a"}` + "\n")},
			"", []string{"$DIR/c.jsonl:1:", `"id" (or "_id") and "text"`}},
		{"JSONL with null text", map[string][]byte{"c.jsonl": []byte(`{"_id":"a","text":null}` + "\n")},
			"", []string{"$DIR/c.jsonl:1:", `"id" (or "_id") and "text"`}},
		{"JSONL not an object", map[string][]byte{"c.jsonl": []byte(`{"_id":"a","text":"x"}` + "\n[1,2]\n")},
			"", []string{"$DIR/c.jsonl:2:", "not a JSON document object"}},
		{"JSONL broken line", map[string][]byte{"c.jsonl": []byte(`{"_id":"a","text":"x"`)},
			"", []string{"$DIR/c.jsonl:1:"}},
		{"gzip that is not gzip", map[string][]byte{"c.jsonl.gz": []byte(`{"_id":"a","text":"x"}`)},
			"", []string{"$DIR/c.jsonl.gz", "not gzip data"}},
		{"truncated gzip", map[string][]byte{"c.jsonl.gz": gzipped(t, []byte(strings.Repeat(`{"_id":"a","text":"x"}`+"\n", 50)))[:30]},
			"", []string{"$DIR/c.jsonl.gz", "unexpected EOF"}},
		{"binary inside gzip", map[string][]byte{"c.jsonl.gz": gzipped(t, []byte("{\x00}"))},
			"", []string{"$DIR/c.jsonl.gz", "binary"}},
		{"duplicate JSONL ids", map[string][]byte{"a.jsonl": []byte(`{"_id":"same","text":"x"}` + "\n"), "b.jsonl": []byte(`{"_id":"same","text":"y"}` + "\n")},
			"", []string{"$DIR/b.jsonl", `"same"`, "$DIR/a.jsonl"}},
		{"JSONL id equal to a file id", map[string][]byte{"a.md": []byte("x"), "b.jsonl": []byte(`{"_id":"a.md","text":"y"}` + "\n")},
			"", []string{"$DIR/b.jsonl", `"a.md"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tt.files)
			docs, err := LoadPaths([]string{filepath.Join(dir, tt.path)})
			if err == nil {
				t.Fatalf("LoadPaths = %d documents, want an error", len(docs))
			}
			for _, w := range tt.want {
				w = strings.ReplaceAll(w, "$DIR", dir)
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadPathsDuplicateIDsAcrossFolders(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string][]byte{"one/README.md": []byte("a"), "two/README.md": []byte("b")})
	_, err := LoadPaths([]string{filepath.Join(dir, "one"), filepath.Join(dir, "two")})
	if err == nil || !strings.Contains(err.Error(), `"README.md"`) || !strings.Contains(err.Error(), filepath.Join(dir, "one", "README.md")) {
		t.Errorf("err = %v, want a duplicate-id error naming both files", err)
	}
	// The same folder twice is the same documents twice.
	if _, err := LoadPaths([]string{filepath.Join(dir, "one"), filepath.Join(dir, "one")}); err == nil {
		t.Error("the same folder twice loaded without error")
	}
}

func TestFileErrorUnwraps(t *testing.T) {
	_, err := LoadPaths([]string{filepath.Join(t.TempDir(), "missing.md")})
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("err %T %v is not a *FileError", err, err)
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err %v does not unwrap to os.ErrNotExist", err)
	}
	if strings.Count(err.Error(), "missing.md") != 1 {
		t.Errorf("err %q names the path more or less than once", err)
	}
}

func TestLoadFileByteOrderMark(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string][]byte{
		"bom.md":    []byte("\xef\xbb\xbf# Title\n\nbody"),
		"bom.jsonl": []byte("\xef\xbb\xbf" + `{"_id":"a","text":"x"}` + "\n"),
	})
	docs, err := LoadPaths([]string{dir})
	if err != nil {
		t.Fatalf("LoadPaths: %v", err)
	}
	want := []hierarchy.Document{{ID: "a", Text: "x"}, {ID: "bom.md", Title: "Title", Text: "# Title\n\nbody"}}
	if !reflect.DeepEqual(docs, want) {
		t.Errorf("got %+v, want %+v", docs, want)
	}
}

func TestLoadFileEmptyJSONLines(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string][]byte{"e.jsonl": []byte("\n  \n"), "x.md": []byte("x")})
	docs, err := LoadPaths([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if got := docIDs(docs); !reflect.DeepEqual(got, []string{"x.md"}) {
		t.Errorf("ids %q, want only x.md", got)
	}
}

func TestReadFileGzip(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string][]byte{"a.txt.gz": gzipped(t, []byte("inflated")), "b.txt": []byte("plain")})
	for name, want := range map[string]string{"a.txt.gz": "inflated", "b.txt": "plain"} {
		got, err := ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != want {
			t.Errorf("ReadFile(%s) = %q, %v; want %q", name, got, err, want)
		}
	}
}

func TestLoadPathsUnreadable(t *testing.T) {
	t.Run("dangling link", func(t *testing.T) {
		dir := t.TempDir()
		writeTree(t, dir, map[string][]byte{"a.md": []byte("fine")})
		if err := os.Symlink(filepath.Join(dir, "gone.md"), filepath.Join(dir, "link.md")); err != nil {
			t.Skipf("no symlinks: %v", err)
		}
		_, err := LoadPaths([]string{dir})
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "link.md")) || !errors.Is(err, os.ErrNotExist) {
			t.Errorf("err = %v, want a not-exist error naming link.md", err)
		}
	})
	t.Run("no read permission", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads files whatever their mode")
		}
		dir := t.TempDir()
		writeTree(t, dir, map[string][]byte{"secret.md": []byte("x")})
		p := filepath.Join(dir, "secret.md")
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
		_, err := LoadPaths([]string{dir})
		if err == nil || !strings.Contains(err.Error(), p) || !errors.Is(err, os.ErrPermission) {
			t.Errorf("err = %v, want a permission error naming %s", err, p)
		}
	})
}

func TestLoadPathsSkipsIndexesAndHiddenFolders(t *testing.T) {
	root := t.TempDir()
	mustWrite := func(rel, text string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite("notes.md", "# Notes\n\nkept")
	mustWrite("index/manifest.json", "{}")
	mustWrite("index/parents.jsonl", `{"id":"p1","text":"not a corpus document"}`)
	mustWrite(".git/description.txt", "not a document either")
	docs, err := LoadPaths([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || docs[0].ID != "notes.md" {
		t.Fatalf("LoadPaths read %d documents (%v), want only notes.md", len(docs), docs)
	}
}

// TestLoadPathsReadsEveryFormat walks a folder of HTML, PDF, DOCX and
// reStructuredText files and reports a broken PDF without failing.
func TestLoadPathsReadsEveryFormat(t *testing.T) {
	dir := t.TempDir()
	manual := documenttest.Manual(t, documenttest.ManualOptions{})
	writeTree(t, dir, map[string][]byte{
		"site/page.htm":    []byte("<main><h1>Page</h1><p>Text.</p></main>"),
		"site/other.xhtml": []byte(`<html xmlns="http://www.w3.org/1999/xhtml"><body><p>XHTML.</p></body></html>`),
		"manual.pdf":       manual,
		"guide.docx":       documenttest.DOCX(t, documenttest.DOCXPart{Name: "word/document.xml", Data: documenttest.DOCXBody(documenttest.Para("", "Word."))}),
		"notes.rst":        []byte("Notes\n=====\n\nBody.\n"),
		"broken.pdf":       manual[:100],
	})
	l, err := LoadPathsReport(t.Context(), []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(docIDs(l.Docs), " "); got != "guide.docx manual.pdf notes.rst site/other.xhtml site/page.htm" {
		t.Errorf("documents %s", got)
	}
	if len(l.Refused) != 1 || !strings.Contains(l.Refused[0].Error(), filepath.Join(dir, "broken.pdf")+": truncated") {
		t.Errorf("refused %v, want broken.pdf, truncated", l.Refused)
	}
	for _, d := range l.Docs {
		if d.ID == "notes.rst" && d.Title != "Notes" {
			t.Errorf("notes.rst title %q", d.Title)
		}
	}
}

func TestLoadPathsReadsSourceCode(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string][]byte{
		"main.go":           []byte("// # Not a title\npackage main\n\nfunc main() {}\n"),
		"tools/report.py":   []byte("# Report tool\nimport sys\n"),
		"web/App.TSX":       []byte("export const App = () => null;\n"),
		"README.md":         []byte("# Readme\n"),
		"assets/logo.png":   []byte("\x89PNG"),
		"notes/guide.rst":   []byte("Guide\n=====\n"),
		"scripts/deploy.sh": []byte("#!/bin/sh\necho\n"),
	})
	docs, err := LoadPaths([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]hierarchy.Document{}
	for _, d := range docs {
		got[d.ID] = d
	}
	if ids := docIDs(docs); !reflect.DeepEqual(ids, []string{"README.md", "main.go", "notes/guide.rst", "tools/report.py", "web/App.TSX"}) {
		t.Fatalf("documents %q", ids)
	}
	for id, lang := range map[string]string{"main.go": "go", "tools/report.py": "python", "web/App.TSX": "ts"} {
		if d := got[id]; d.Metadata[hierarchy.MetaLanguage] != lang || d.Title != "" {
			t.Errorf("%s: language %q, title %q; want %q and no title (a comment is no heading)", id, d.Metadata[hierarchy.MetaLanguage], d.Title, lang)
		}
	}
	if d := got["README.md"]; d.Title != "Readme" || d.Metadata != nil {
		t.Errorf("README.md: title %q, metadata %v", d.Title, d.Metadata)
	}
}

func TestLoadFileDetectsAScriptByItsShebang(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string][]byte{"bin/tool": []byte("#!/usr/bin/env python3\nprint('hi')\n")})
	docs, err := LoadFile(filepath.Join(dir, "bin", "tool"), "tool")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || docs[0].Metadata[hierarchy.MetaLanguage] != "python" {
		t.Fatalf("documents %+v, want one in python", docs)
	}
}
