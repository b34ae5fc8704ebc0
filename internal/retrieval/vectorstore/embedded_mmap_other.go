//go:build !linux

package vectorstore

import (
	"errors"
	"os"
)

// mapFile is not available here: LoadEmbedded reads the file into memory.
func mapFile(*os.File, int64) ([]byte, error) { return nil, errors.ErrUnsupported }

// unmapFile is never reached, since mapFile maps nothing.
func unmapFile([]byte) error { return errors.ErrUnsupported }
