package indexjob

import (
	"path/filepath"
	"testing"
)

// TestUnitCacheDir checks where a Job keeps its units: where it is told,
// else beside the embedding cache on its volume, else nowhere.
func TestUnitCacheDir(t *testing.T) {
	tests := []struct {
		runner Runner
		want   string
	}{
		{Runner{}, ""},
		{Runner{EmbeddingCacheDir: "/var/cache/parentrag"}, filepath.Join("/var/cache/parentrag", UnitCacheSubdir)},
		{Runner{EmbeddingCacheDir: "/var/cache/parentrag", UnitCacheDir: "/units"}, "/units"},
		{Runner{UnitCacheDir: "/units"}, "/units"},
	}
	for _, tt := range tests {
		if got := tt.runner.unitCacheDir(); got != tt.want {
			t.Errorf("%+v: unit cache in %q, want %q", tt.runner, got, tt.want)
		}
	}
}
