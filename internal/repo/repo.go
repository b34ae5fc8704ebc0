// Package repo finds the repository a test or development tool runs in.
package repo

import (
	"fmt"
	"os"
	"path/filepath"
)

// Root returns the nearest directory at or above the working directory
// that holds go.mod: the module root.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod at or above the working directory")
		}
		dir = parent
	}
}
