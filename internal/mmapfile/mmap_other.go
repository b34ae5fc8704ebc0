//go:build !linux

package mmapfile

import (
	"errors"
	"os"
)

// Map is not available here: callers read the file into memory.
func Map(*os.File, int64) ([]byte, error) { return nil, errors.ErrUnsupported }

// Unmap is never reached, since Map maps nothing.
func Unmap([]byte) error { return errors.ErrUnsupported }
