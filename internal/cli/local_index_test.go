package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestLocalIndexIgnoresAndRemovesStaleTemps indexes a corpus folder that
// holds the temporary folders killed runs of the same --out left inside
// it: they are not read as documents, and with no other run of that --out
// alive they are removed, however recent, while a user folder that merely
// looks like one is kept.
func TestLocalIndexIgnoresAndRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	root := testCorpus(t, dir)
	out := filepath.Join(root, "ix")
	bad := `{"id": "p1"}` + "\n" // not a document: would fail the index if read
	writeFile(t, root, "ix.tmp-123/parents.jsonl", bad)
	writeFile(t, root, "ix.tmp-456.old/parents.jsonl", bad)
	writeFile(t, root, "ix.tmp-789/parents.jsonl", bad)
	writeFile(t, root, "ix.tmp-1/notes.md", "# Notes\n\nKept and indexed.\n")
	stdout, _ := mustExecute(t, "local", "index", "--quiet", "--out", out, root)
	if !strings.Contains(stdout, "indexed 4 documents") {
		t.Errorf("got %q, want the 3 corpus documents and the user's notes", stdout)
	}
	got := listDir(t, root)
	for _, name := range []string{"ix.tmp-123", "ix.tmp-456.old", "ix.tmp-789"} {
		if slices.Contains(got, name) {
			t.Errorf("stale %s was not removed: %v", name, got)
		}
	}
	for _, name := range []string{"ix.tmp-1", "ix"} {
		if !slices.Contains(got, name) {
			t.Errorf("%s was removed: %v", name, got)
		}
	}
	// A second index of the folder skips the index it made.
	stdout, _ = mustExecute(t, "local", "index", "--quiet", "--replace", "--out", out, root)
	if !strings.Contains(stdout, "indexed 4 documents") {
		t.Errorf("second run: %q", stdout)
	}
}

func TestLocalIndexSkipsEmptyDocuments(t *testing.T) {
	dir := t.TempDir()
	root := testCorpus(t, dir)
	writeFile(t, root, "empty.md", "")
	writeFile(t, root, "blank.txt", "  \n\t\n")
	stdout, stderr := mustExecute(t, "local", "index", "--quiet", "--out", filepath.Join(dir, "ix"), root)
	if !strings.Contains(stdout, "indexed 3 documents") {
		t.Errorf("got %q, want the 3 non-empty documents", stdout)
	}
	for _, id := range []string{"empty.md", "blank.txt"} {
		if !strings.Contains(stderr, "document "+id+" is empty") {
			t.Errorf("stderr %q does not report %s", stderr, id)
		}
	}
	_, _, err := execute(t, "local", "index", "--quiet", "--out", filepath.Join(dir, "ix2"), filepath.Join(root, "empty.md"))
	if err == nil || !strings.Contains(err.Error(), "1 left out: empty") {
		t.Errorf("only an empty file: %v", err)
	}
}

// TestLocalIndexIntoSegments checks that an index whose children are
// segments answers a query as the embedded one does, and that the flag
// refuses what it cannot build.
func TestLocalIndexIntoSegments(t *testing.T) {
	dir := t.TempDir()
	root := testCorpus(t, dir)
	embedded, segments := filepath.Join(dir, "embedded"), filepath.Join(dir, "segments")
	mustExecute(t, "local", "index", "--quiet", "--out", embedded, root)
	stdout, _ := mustExecute(t, "local", "index", "--quiet", "--child-index", "segments", "--out", segments, root)
	if !strings.Contains(stdout, "indexed 3 documents") {
		t.Fatalf("got %q", stdout)
	}
	_, want := queryJSONResults(t, embedded, "why do zebras have stripes")
	_, got := queryJSONResults(t, segments, "why do zebras have stripes")
	if !reflect.DeepEqual(got, want) || len(got) == 0 || got[0].DocID != "zebra.md" {
		t.Fatalf("segments answered\n%+v\nthe embedded index\n%+v", got, want)
	}
	for args, msg := range map[string][]string{
		"want embedded or segments": {"--child-index", "hnsw"},
		"cannot hold the vectors":   {"--child-index", "segments", "--embedding-endpoint", "http://127.0.0.1:1/v1"},
	} {
		_, _, err := execute(t, append([]string{"local", "index", "--quiet", "--out", filepath.Join(dir, "refused")}, append(msg, root)...)...)
		if err == nil || !strings.Contains(err.Error(), args) {
			t.Errorf("%v: error %v, want %q", msg, err, args)
		}
	}
}

// A link out of an indexed folder is not followed: the run reports it on
// standard error, naming the link, and indexes the rest.
func TestLocalIndexReportsLinksOutOfTheFolder(t *testing.T) {
	dir := t.TempDir()
	root := testCorpus(t, dir)
	secret := writeFile(t, dir, "outside/secret.txt", "the password is swordfish")
	if err := os.Symlink(secret, filepath.Join(root, "passwd.txt")); err != nil {
		t.Skipf("no symlinks: %v", err)
	}
	stdout, stderr := mustExecute(t, "local", "index", "--quiet", "--no-unit-cache", "--out", filepath.Join(dir, "ix"), root)
	if !strings.Contains(stdout, "indexed 3 documents") {
		t.Errorf("got %q, want the 3 documents of the folder", stdout)
	}
	if want := "skipped: " + filepath.Join(root, "passwd.txt") + ": a link to " + secret + ", outside the folder"; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
}
