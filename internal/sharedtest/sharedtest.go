// Package sharedtest locates the test data shared between the projects of
// this workspace (the ../shared folder next to the repository root).
package sharedtest

import (
	"os"
	"path/filepath"
	"testing"
)

// EnvDir names the environment variable that, when set, overrides where the
// shared folder is.
const EnvDir = "PARENTRAG_SHARED"

// Dir returns the path of parts inside the shared test-data folder: $PARENTRAG_SHARED
// when set, otherwise ../shared relative to the repository root (the
// nearest directory above the test's working directory holding go.mod).
// When that path does not exist the test is skipped, or, under CI=true,
// fails naming the missing path.
func Dir(tb testing.TB, parts ...string) string {
	tb.Helper()
	base := os.Getenv(EnvDir)
	if base == "" {
		if root := repoRoot(); root != "" {
			base = filepath.Join(root, "..", "shared")
		} else {
			base = filepath.Join("..", "shared")
		}
	}
	p := filepath.Join(append([]string{base}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("shared test data missing at %s: %v", p, err)
		}
		tb.Skipf("shared test data not found at %s", p)
	}
	return p
}

// repoRoot returns the nearest directory at or above the working directory
// that holds go.mod, or "".
func repoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
