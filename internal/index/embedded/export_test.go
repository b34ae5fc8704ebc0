package embedded

// PrunePaths names the pruned search paths for the external tests: the
// store's choice, windowed MaxScore alone and grouped search alone.
var PrunePaths = prunePaths

// SetPrunePath makes e's pruned searches take path (one of PrunePaths).
func (e *Store) SetPrunePath(path int32) { e.prunePath.Store(path) }
