package cli

import (
	"os"
	"testing"
)

// TestMain points the user's cache directory, where `local index` keeps
// its unit cache and lock files by default, at a temporary directory, so
// tests never write the cache of whoever runs them.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "parentrag-cli-cache-*")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
