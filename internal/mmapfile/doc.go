// Package mmapfile maps files read-only, so that the bytes a store serves
// are the page cache's own and cost the process no anonymous memory.
// Where mapping is unavailable, Map fails with errors.ErrUnsupported and
// callers read the file instead.
package mmapfile
