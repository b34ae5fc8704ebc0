package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain points the user's cache directory, where `local index` keeps
// its unit cache and lock files by default, at a temporary directory, so
// tests never write the cache of whoever runs them. The go tool the tests
// run (buildBinary) keeps the build cache it had, which would otherwise
// move there too and build everything again.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "parentrag-cli-cache-*")
	if err != nil {
		panic(err)
	}
	if userCache, err := os.UserCacheDir(); err == nil && os.Getenv("GOCACHE") == "" {
		os.Setenv("GOCACHE", filepath.Join(userCache, "go-build"))
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
