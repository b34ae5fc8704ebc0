package segment

import (
	"errors"
	"fmt"
	"os"

	"github.com/parentrag/parentrag/internal/mmapfile"
)

// OpenFiles opens the segment files at paths, in order, as a Store of
// the set NewSet makes of them with k1, b and contextWeight. Each file is
// mapped read-only where the system allows (its bytes are then the page
// cache's, not the heap's) and read into memory elsewhere; every segment
// is checked whole (see Open). Closing the store unmaps the files.
func OpenFiles(paths []string, k1, b float64, contextWeight float32) (*Store, error) {
	var maps [][]byte
	release := func() error {
		var errs []error
		for _, m := range maps {
			errs = append(errs, mmapfile.Unmap(m))
		}
		maps = nil
		return errors.Join(errs...)
	}
	segs := make([]*Segment, 0, len(paths))
	for _, path := range paths {
		data, mapped, err := readSegmentFile(path)
		if err != nil {
			return nil, errors.Join(err, release())
		}
		if mapped {
			maps = append(maps, data)
		}
		seg, err := Open(data)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("%s: %w", path, err), release())
		}
		segs = append(segs, seg)
	}
	set, err := NewSet(segs, k1, b, contextWeight)
	if err != nil {
		return nil, errors.Join(err, release())
	}
	return NewStore(set, release), nil
}

// readSegmentFile maps the file at path, or reads it where mapping is not
// available, and says which.
func readSegmentFile(path string) (data []byte, mapped bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, fmt.Errorf("opening segment: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, false, fmt.Errorf("opening segment: %w", err)
	}
	if data, err := mmapfile.Map(f, st.Size()); err == nil {
		return data, true, nil
	}
	data, err = os.ReadFile(path)
	if err != nil {
		return nil, false, fmt.Errorf("reading segment: %w", err)
	}
	return data, false, nil
}
