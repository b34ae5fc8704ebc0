package source

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// Names that are not UTF-8 give distinct, stable ids that stay distinct
// once written as JSON (which turns each such byte into U+FFFD): every
// byte that is not UTF-8 is written %XX.
func TestLoadPathsNonUTF8NamesKeepDistinctIDs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("file names of any bytes are a Linux file system's")
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string][]byte{
		"\xff.md": []byte("first"), "\xfe.md": []byte("second"), "caf\xe9/menu.md": []byte("third"), "ok.md": []byte("fourth"),
	})
	docs, err := LoadPaths([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"%FE.md", "%FF.md", "caf%E9/menu.md", "ok.md"}
	got := docIDs(docs)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("ids %q, want %q", got, want)
	}
	seen := map[string]bool{}
	for _, id := range got {
		data, _ := json.Marshal(id)
		if seen[string(data)] {
			t.Errorf("id %q collides with another once written as JSON", id)
		}
		seen[string(data)] = true
	}
	again, err := LoadPaths([]string{dir})
	if err != nil || !slices.Equal(docIDs(again), docIDs(docs)) {
		t.Errorf("a second load gave %q (%v), want the same ids %q", docIDs(again), err, docIDs(docs))
	}
	// A UTF-8 name spelt as an escaped one is refused, naming both files.
	writeTree(t, dir, map[string][]byte{"%FF.md": []byte("fifth")})
	if _, err := LoadPaths([]string{dir}); err == nil || !strings.Contains(err.Error(), `document id "%FF.md" is also the id of a document in`) {
		t.Errorf("%%FF.md beside \\xff.md: %v, want the duplicate id refused", err)
	}
}

// A link in a folder is followed only when it leads to a file inside the
// folder; one that leads outside it or to something that is not a regular
// file is left out and reported, naming the link, as is a file that is
// not regular (a named pipe, which would block the read). A link that
// leads nowhere fails the load as an unreadable file does.
func TestLoadPathsFollowsLinksOnlyInsideTheFolder(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	root := filepath.Join(base, "docs")
	writeTree(t, outside, map[string][]byte{"secret.txt": []byte("the password is swordfish")})
	writeTree(t, root, map[string][]byte{"a.md": []byte("# A\n\nalpha"), "sub/b.md": []byte("beta")})
	links := map[string]string{
		"passwd.txt":     filepath.Join(outside, "secret.txt"),
		"escape.md":      "../outside/secret.txt",
		"sub/up.md":      "../a.md",
		"inside.md":      filepath.Join(root, "sub", "b.md"),
		"folder.md":      "sub",
		"sub/chain.md":   "../escape.md",
		"sub/twice.txt":  "../inside.md",
		"outer/x.md":     "../../outside/secret.txt",
		"outer/back.txt": "../a.md",
	}
	for name, target := range links {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "pipe.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadPathsReport(t.Context(), []string{root})
	if err != nil {
		t.Fatal(err)
	}
	docs, skipped := loaded.Docs, loaded.LeftOut
	if want := []string{"a.md", "inside.md", "outer/back.txt", "sub/b.md", "sub/twice.txt", "sub/up.md"}; !slices.Equal(docIDs(docs), want) {
		t.Errorf("documents %q, want %q", docIDs(docs), want)
	}
	for _, d := range docs {
		if strings.Contains(d.Text, "swordfish") {
			t.Errorf("%s holds the text of a file outside the folder", d.ID)
		}
	}
	reported := map[string]string{}
	for _, e := range skipped {
		var fe *FileError
		if !errors.As(e, &fe) {
			t.Fatalf("skipped %v is not a *FileError", e)
		}
		rel, _ := filepath.Rel(root, fe.Path)
		reported[filepath.ToSlash(rel)] = fe.Err.Error()
	}
	for name, part := range map[string]string{
		"passwd.txt": "outside", "escape.md": "outside", "sub/chain.md": "outside", "outer/x.md": "outside",
		"folder.md": "not a regular file", "pipe.md": "not a regular file",
	} {
		if msg, ok := reported[name]; !ok || !strings.Contains(msg, part) {
			t.Errorf("%s: reported %q (%v), want a problem saying %q", name, msg, ok, part)
		}
	}
	if len(reported) != 6 {
		t.Errorf("reported %d problems, want 6: %v", len(reported), reported)
	}
	// The folder given through a link of its own reads the same.
	viaLink := filepath.Join(base, "docs-link")
	if err := os.Symlink("docs", viaLink); err != nil {
		t.Fatal(err)
	}
	again, err := LoadPathsReport(t.Context(), []string{viaLink})
	if err != nil || !slices.Equal(docIDs(again.Docs), docIDs(docs)) || len(again.LeftOut) != len(skipped) {
		t.Errorf("through a link to the folder: %q, %d left out (%v), want %q and %d", docIDs(again.Docs), len(again.LeftOut), err, docIDs(docs), len(skipped))
	}
	if err := os.Symlink("loop.md", filepath.Join(root, "loop.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPaths([]string{root}); err == nil || !strings.Contains(err.Error(), "loop.md") {
		t.Errorf("a link to itself: %v, want the load to fail naming it", err)
	}
}
