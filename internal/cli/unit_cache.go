package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/parentrag/parentrag/internal/retrieval/build"
)

// unitCacheFlags choose the unit cache of `local index`, which keeps each
// document's split and analyses between runs.
type unitCacheFlags struct {
	dir    string
	off    bool
	maxAge time.Duration
}

// register adds the unit cache flags to cmd.
func (f *unitCacheFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.dir, "unit-cache", "", "directory keeping each document's split and analyses between runs, so unchanged documents are not split again (default: parentrag/units in the user's cache directory, ~/.cache on Linux)")
	cmd.Flags().BoolVar(&f.off, "no-unit-cache", false, "split and analyse every document, reading and writing no unit cache")
	cmd.Flags().DurationVar(&f.maxAge, "unit-cache-max-age", build.DefaultUnitCacheMaxAge, "after a run, remove from the unit cache the units of the policies no run has used for this long (0: keep them all)")
}

// resolve returns the unit cache directory to use, "" for none.
func (f *unitCacheFlags) resolve() (string, error) {
	switch {
	case f.off && f.dir != "":
		return "", fmt.Errorf("--unit-cache and --no-unit-cache: choose one")
	case f.off:
		return "", nil
	case f.dir != "":
		return f.dir, nil
	}
	root, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory for the unit cache (%w): pass --unit-cache DIR or --no-unit-cache", err)
	}
	return filepath.Join(root, "parentrag", "units"), nil
}
