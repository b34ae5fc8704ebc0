//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package embed

import (
	"fmt"
	"os"
	"runtime"
)

// lockFile refuses: without flock a FileCache could not keep a second
// writer out of its directory.
func lockFile(string) (*os.File, error) {
	return nil, fmt.Errorf("file embedding cache needs flock, which %s lacks", runtime.GOOS)
}
