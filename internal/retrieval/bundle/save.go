package bundle

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"

	"github.com/parentrag/parentrag/internal/filesum"
	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/embedded"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
)

// Pending is a bundle being built in a temporary directory beside its
// destination, moved into place only once complete (Commit), so that an
// interrupted or failed build leaves no partial index at the destination.
// A build may write the child index there as it goes (see ChildrenDir)
// instead of holding it in memory until Commit.
type Pending struct {
	dir, tmp string
	parents  *parentstore.FileWriter // set by Parents
}

// Begin checks that dir may take a bundle and creates the temporary
// directory the bundle is built in. An existing dir is refused unless
// replace is set, and even then unless it is empty or holds a bundle (it
// has a manifest), so that a mistaken dir never wipes other files. The
// caller ends it with Commit or Abort.
func Begin(dir string, replace bool) (*Pending, error) {
	if err := checkReplaceable(dir, replace); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dir)), filepath.Base(dir)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("creating bundle: %w", err)
	}
	return &Pending{dir: dir, tmp: tmp}, nil
}

// ChildrenDir is where the embedded child index of the pending bundle
// goes: an embedded.FileWriter finished there before Commit is the
// bundle's child index, byte for byte what Commit writes from an
// embedded.Store.
func (p *Pending) ChildrenDir() string { return filepath.Join(p.tmp, ChildrenDir) }

// Dir is the directory the pending bundle is written in: a build may keep
// temporary files there, removed before Commit.
func (p *Pending) Dir() string { return p.tmp }

// Parents starts the bundle's parent store for a build that hands over
// its parents as it goes (indexer.Options.OnParent), in order: Commit then
// finishes that store instead of writing the index's Parents.
func (p *Pending) Parents() (*parentstore.FileWriter, error) {
	if p.parents == nil {
		w, err := parentstore.NewFileWriter(p.tmp)
		if err != nil {
			return nil, err
		}
		p.parents = w
	}
	return p.parents, nil
}

// Commit writes ix's parents, children (unless ix.Store is a FileWriter,
// whose finished file is already in ChildrenDir), embedder state and
// manifest, then moves the bundle into place. A replaced bundle stays
// complete and readable under dir until the new one takes its place (on
// Linux the two are exchanged atomically), and is removed after. On
// failure the temporary directory is removed and dir is left as it was.
func (p *Pending) Commit(ix *indexer.Index, m Manifest) (Manifest, error) {
	m, err := writeContents(p.tmp, ix, m, p.parents)
	if err == nil {
		err = swapInto(p.tmp, p.dir)
	}
	if err != nil {
		p.Abort()
	}
	return m, err
}

// Abort removes the pending bundle; dir is left as it was.
func (p *Pending) Abort() {
	if p.parents != nil {
		p.parents.Abort()
	}
	os.RemoveAll(p.tmp)
}

// writeContents writes parents, children, embedder state and, last, the
// manifest into dir.
func writeContents(dir string, ix *indexer.Index, m Manifest, parents *parentstore.FileWriter) (Manifest, error) {
	parents, err := finishParents(dir, ix, parents)
	if err != nil {
		return m, err
	}
	embedded, err := writeChildren(dir, ix.Store)
	if err != nil {
		return m, err
	}
	if embedded {
		m.VectorStore = VectorStoreRef{Kind: VectorStoreEmbedded}
	} else if !m.VectorStore.External() {
		return m, fmt.Errorf("the children are in %T, but the manifest names no external store", ix.Store)
	}
	if lex := embed.LexicalPart(ix.Embedder); lex != nil {
		stats, err := lex.MarshalStats()
		if err != nil {
			return m, fmt.Errorf("encoding lexical statistics: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, LexicalFile), stats, 0o644); err != nil {
			return m, fmt.Errorf("writing lexical statistics: %w", err)
		}
	}
	m.FormatVersion = FormatVersion
	m.Documents, m.Parents, m.Children = ix.Documents, ix.ParentCount, ix.ChildCount
	size, err := dirSize(dir)
	if err != nil {
		return m, err
	}
	m.Bytes = size
	if m.Files, err = sumFiles(dir, writtenSums(parents, ix.Store)); err != nil {
		return m, fmt.Errorf("summing bundle files: %w", err)
	}
	if err := writeManifest(dir, m); err != nil {
		return m, fmt.Errorf("writing manifest: %w", err)
	}
	return m, nil
}

// writeChildren writes the child index of an embedded store into dir, or
// checks that a file writer's finished index is there, and reports whether
// the bundle holds the children; an external store writes nothing.
func writeChildren(dir string, store index.Writer) (bool, error) {
	switch s := store.(type) {
	case *embedded.Store:
		if err := s.Save(filepath.Join(dir, ChildrenDir)); err != nil {
			return true, fmt.Errorf("writing child index: %w", err)
		}
		return true, nil
	case *embedded.FileWriter:
		if _, err := os.Stat(filepath.Join(dir, ChildrenDir, embedded.File)); err != nil {
			return true, fmt.Errorf("the child index was not written into the bundle: %w", err)
		}
		return true, nil
	}
	return false, nil
}

// finishParents finishes the files store in dir, and returns its writer:
// the one the build filled as it went when there is one, or a new one of
// the index's Parents.
func finishParents(dir string, ix *indexer.Index, filled *parentstore.FileWriter) (*parentstore.FileWriter, error) {
	if filled != nil {
		return filled, filled.Close()
	}
	w, err := parentstore.NewFileWriter(dir)
	if err != nil {
		return nil, err
	}
	for _, p := range ix.Parents {
		if err := w.Add(p); err != nil {
			return nil, err
		}
	}
	return w, w.Close()
}

// writtenSums is the size and SHA-256 of each bundle file whose writer
// hashed it as it wrote it (the parent store's, and the child index a
// file writer finished), by path in the bundle.
func writtenSums(parents *parentstore.FileWriter, store index.Writer) map[string]filesum.Sum {
	sums := map[string]filesum.Sum{}
	maps.Copy(sums, parents.Written())
	if w, ok := store.(*embedded.FileWriter); ok {
		if sum, ok := w.Written(); ok {
			sums[path.Join(ChildrenDir, embedded.File)] = sum
		}
	}
	return sums
}

// checkReplaceable refuses an existing dir unless replace is set and dir is
// a directory that is empty or holds a bundle of any format.
func checkReplaceable(dir string, replace bool) error {
	info, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checking %s: %w", dir, err)
	}
	if !replace {
		return fmt.Errorf("%s already exists: choose another output or replace it", dir)
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is not a directory: refusing to replace it with an index", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestFile)); err == nil {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("checking %s: %w", dir, err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s is not a parentrag index (no %s): refusing to replace it", dir, ManifestFile)
	}
	return nil
}

// swapInto moves the complete bundle tmp to dir, replacing any old one.
// Where the system can exchange two directories atomically, dir holds the
// old bundle until the instant it holds the new one; elsewhere the old one
// is moved aside first.
func swapInto(tmp, dir string) error {
	syncDir(tmp)
	if _, err := os.Lstat(dir); err == nil {
		if err := exchange(tmp, dir); err == nil {
			syncDir(filepath.Dir(dir))
			// tmp now holds the old bundle.
			if err := os.RemoveAll(tmp); err != nil {
				return fmt.Errorf("removing the replaced index: %w", err)
			}
			return nil
		}
	}
	old := ""
	if _, err := os.Lstat(dir); err == nil {
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
	syncDir(filepath.Dir(dir))
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("removing the replaced index: %w", err)
		}
	}
	return nil
}

// syncDir flushes a directory's entries to disk, best effort: renames are
// durable once their directory is synced.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
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
