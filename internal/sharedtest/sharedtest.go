// Package sharedtest locates the test data shared between the projects of
// this workspace (the ../shared folder next to the repository root).
package sharedtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/parentrag/parentrag/internal/repo"
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
		if root, err := repo.Root(); err == nil {
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
