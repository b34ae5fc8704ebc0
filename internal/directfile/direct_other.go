//go:build !linux

package directfile

import (
	"errors"
	"os"
)

// setDirect fails to turn direct writes on, which only Linux's O_DIRECT
// gives here; turning them off does nothing.
func setDirect(_ *os.File, on bool) error {
	if on {
		return errors.ErrUnsupported
	}
	return nil
}
