package bundle

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
)

// Save writes ix as a bundle into dir. It builds the bundle in a sibling
// temporary directory and renames it into place only when complete, so an
// interrupted or failed save leaves no partial index under dir. An existing
// dir is refused unless replace is set; then the old bundle is removed only
// after the new one is in place.
func Save(dir string, ix *indexer.Index, m Manifest, replace bool) (Manifest, error) {
	if _, err := os.Stat(dir); err == nil && !replace {
		return m, fmt.Errorf("%s already exists: choose another output or replace it", dir)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dir)), filepath.Base(dir)+".tmp-*")
	if err != nil {
		return m, fmt.Errorf("creating bundle: %w", err)
	}
	m, err = writeContents(tmp, ix, m)
	if err != nil {
		os.RemoveAll(tmp)
		return m, err
	}
	if err := swapInto(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		return m, err
	}
	return m, nil
}

// writeContents writes parents, children, embedder state and, last, the
// manifest into dir.
func writeContents(dir string, ix *indexer.Index, m Manifest) (Manifest, error) {
	if err := writeParents(dir, ix); err != nil {
		return m, err
	}
	if err := ix.Store.Save(filepath.Join(dir, ChildrenDir)); err != nil {
		return m, fmt.Errorf("writing child index: %w", err)
	}
	if lex, ok := ix.Embedder.(*embed.Lexical); ok {
		stats, err := lex.MarshalStats()
		if err != nil {
			return m, fmt.Errorf("encoding lexical statistics: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, LexicalFile), stats, 0o644); err != nil {
			return m, fmt.Errorf("writing lexical statistics: %w", err)
		}
	}
	m.FormatVersion = FormatVersion
	m.Documents, m.Parents, m.Children = ix.Documents, len(ix.Parents), len(ix.Children)
	size, err := dirSize(dir)
	if err != nil {
		return m, err
	}
	m.Bytes = size
	if err := writeManifest(dir, m); err != nil {
		return m, fmt.Errorf("writing manifest: %w", err)
	}
	return m, nil
}

// writeParents writes every parent into the files store in dir.
func writeParents(dir string, ix *indexer.Index) error {
	w, err := parentstore.NewFileWriter(dir)
	if err != nil {
		return err
	}
	for _, p := range ix.Parents {
		if err := w.Add(p); err != nil {
			return err
		}
	}
	return w.Close()
}

// swapInto moves the complete bundle tmp to dir, replacing any old one.
func swapInto(tmp, dir string) error {
	old := ""
	if _, err := os.Stat(dir); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("moving old index aside: %w", err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			os.Rename(old, dir)
		}
		return fmt.Errorf("moving index into place: %w", err)
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}

// dirSize returns the total size of the regular files under dir.
func dirSize(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			total += info.Size()
		}
		return err
	})
	return total, err
}
