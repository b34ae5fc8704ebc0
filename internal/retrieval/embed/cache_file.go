package embed

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/parentrag/parentrag/internal/index/vector"
)

// The files of a FileCache directory.
const (
	cacheLogFile  = "vectors.log"
	cacheLockFile = "LOCK"
)

// I/O sizes: Get reads neighbouring records in one call of at most
// maxSpanBytes; Put writes at most maxPutChunk bytes per call.
const (
	maxSpanBytes = 1 << 20
	maxPutChunk  = 4 << 20
)

// ErrCacheLocked is returned by OpenFileCache when another FileCache, in
// this process or another, holds the directory.
var ErrCacheLocked = errors.New("embedding cache is in use by another FileCache")

// FileCache is a CacheStore kept in a directory: an append-only log of
// checksummed records and, in memory, only an index from key to record (a
// 32-byte key and an 8-byte offset and length; about 63 bytes per entry
// with the map's overhead), so vectors are read back from disk when asked
// for. Put returns once its records are fsynced. Opening reads and checks
// the whole log; the first damaged record ends it, and it and everything
// after it are cut off, so a crash mid-Put loses only that Put's entries. A
// record damaged later is caught by its checksum when read, reported
// missing and may be stored again. A lock file keeps a second FileCache, in
// any process, out of the directory while one is open. FileCache is safe
// for concurrent use.
type FileCache struct {
	dir     string
	lock    *os.File
	log     *os.File
	dropped int64

	wmu  sync.Mutex // serialises appends and Close; guards size
	size int64      // end of the last intact record

	mu     sync.RWMutex // guards index and closed
	index  map[[32]byte]indexEntry
	closed bool
}

var _ CacheStore = (*FileCache)(nil)

// OpenFileCache opens the cache in dir, creating dir and the cache when
// missing. It indexes every intact record and truncates a torn or corrupt
// tail (see Dropped) rather than failing. It fails with ErrCacheLocked when
// another FileCache holds dir, and when dir's log is not a cache log.
func OpenFileCache(dir string) (*FileCache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("opening embedding cache: %w", err)
	}
	lock, err := lockFile(filepath.Join(dir, cacheLockFile))
	if err != nil {
		return nil, fmt.Errorf("opening embedding cache %s: %w", dir, err)
	}
	log, err := os.OpenFile(filepath.Join(dir, cacheLogFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		_ = lock.Close()
		return nil, fmt.Errorf("opening embedding cache: %w", err)
	}
	c := &FileCache{dir: dir, lock: lock, log: log, index: map[[32]byte]indexEntry{}}
	if err := c.load(); err != nil {
		_ = log.Close()
		_ = lock.Close()
		return nil, fmt.Errorf("opening embedding cache %s: %w", dir, err)
	}
	return c, nil
}

// load readies the log (see initLog), indexes its intact records and cuts
// off whatever follows the last of them, so appends continue from there.
func (c *FileCache) load() error {
	size, err := c.initLog()
	if err != nil {
		return err
	}
	base := int64(len(cacheMagic))
	end, err := scanRecords(io.NewSectionReader(c.log, base, size-base), base, c.index)
	if err != nil {
		return fmt.Errorf("reading %s: %w", c.log.Name(), err)
	}
	if end < size {
		if err := c.truncate(end); err != nil {
			return err
		}
		c.dropped = size - end
	}
	c.size = end
	return nil
}

// initLog returns the log's size after making sure it starts with
// cacheMagic: an empty log, or one torn while its magic was written, gets
// the magic; a log starting with anything else is refused untouched.
func (c *FileCache) initLog() (int64, error) {
	info, err := c.log.Stat()
	if err != nil {
		return 0, err
	}
	head := make([]byte, min(info.Size(), int64(len(cacheMagic))))
	if _, err := c.log.ReadAt(head, 0); err != nil {
		return 0, fmt.Errorf("reading %s: %w", c.log.Name(), err)
	}
	if string(head) != cacheMagic[:len(head)] {
		return 0, fmt.Errorf("%s is not a parentrag embedding cache log", c.log.Name())
	}
	if len(head) == len(cacheMagic) {
		return info.Size(), nil
	}
	if _, err := c.log.WriteAt([]byte(cacheMagic), 0); err != nil {
		return 0, fmt.Errorf("writing %s: %w", c.log.Name(), err)
	}
	if err := c.log.Sync(); err != nil {
		return 0, fmt.Errorf("syncing %s: %w", c.log.Name(), err)
	}
	return int64(len(cacheMagic)), nil
}

// truncate cuts the log to size and makes the cut durable.
func (c *FileCache) truncate(size int64) error {
	if err := c.log.Truncate(size); err != nil {
		return fmt.Errorf("truncating %s: %w", c.log.Name(), err)
	}
	if err := c.log.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", c.log.Name(), err)
	}
	return nil
}

// Dropped returns how many bytes of torn or corrupt tail OpenFileCache cut
// off the log; 0 after a clean shutdown.
func (c *FileCache) Dropped() int64 {
	return c.dropped
}

// Len returns how many vectors the cache indexes.
func (c *FileCache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.index)
}

// Close waits for a Put in progress, then closes the log and releases the
// directory's lock. Later calls fail with ErrCacheClosed; closing twice is
// harmless.
func (c *FileCache) Close() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	wasClosed := c.closed
	c.closed, c.index = true, nil
	c.mu.Unlock()
	if wasClosed {
		return nil
	}
	return errors.Join(c.log.Close(), c.lock.Close())
}

// Get returns the vectors stored under keys. Records are read from disk,
// neighbours in one call, and each is checked against its key and CRC: a
// record that fails is reported missing and forgotten, so a later Put can
// store it again.
func (c *FileCache) Get(keys [][32]byte) ([]vector.Vector, []bool, error) {
	entries, err := c.lookup(keys)
	if err != nil {
		return nil, nil, err
	}
	vecs, found := make([]vector.Vector, len(keys)), make([]bool, len(keys))
	var buf []byte
	for _, s := range planSpans(entries) {
		buf = grow(buf, int(s.size))
		if _, err := c.log.ReadAt(buf, s.off); err != nil {
			return nil, nil, c.ioError("reading", err)
		}
		for _, i := range s.keys {
			e := entries[i]
			rec := buf[e.offset()-s.off:][:e.size()]
			if d, ok := decodeRecord(rec, keys[i]); ok {
				vecs[i], found[i] = vector.Vector{Dense: d}, true
			} else {
				c.forget(keys[i], e)
			}
		}
	}
	return vecs, found, nil
}

// lookup returns the index entry of each key, zero when absent.
func (c *FileCache) lookup(keys [][32]byte) ([]indexEntry, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return nil, ErrCacheClosed
	}
	entries := make([]indexEntry, len(keys))
	for i, k := range keys {
		entries[i] = c.index[k]
	}
	return entries, nil
}

// forget drops key from the index if it still points at the bad record e.
func (c *FileCache) forget(key [32]byte, e indexEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.index[key] == e {
		delete(c.index, key)
	}
}

// ioError wraps an I/O error on the log, reporting a log closed under a
// running call as ErrCacheClosed.
func (c *FileCache) ioError(op string, err error) error {
	if errors.Is(err, os.ErrClosed) {
		return ErrCacheClosed
	}
	return fmt.Errorf("embedding cache: %s %s: %w", op, c.log.Name(), err)
}

// Put appends a record for every key not yet stored (the first of any
// repeated key), fsyncs them, and only then indexes them, so Get never
// reads a record that is not durable. It stores nothing when any vector is
// not cacheable or the write fails.
func (c *FileCache) Put(keys [][32]byte, vecs []vector.Vector) error {
	if err := checkCacheable(keys, vecs); err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	fresh, err := c.absent(keys)
	if err != nil || len(fresh) == 0 {
		return err
	}
	added, err := c.append(keys, vecs, fresh)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range added {
		c.index[k] = e
	}
	return nil
}

// absent returns the positions of the keys that are neither indexed nor
// repeated from earlier in keys.
func (c *FileCache) absent(keys [][32]byte) ([]int, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return nil, ErrCacheClosed
	}
	var fresh []int
	seen := make(map[[32]byte]bool, len(keys))
	for i, k := range keys {
		if _, ok := c.index[k]; !ok && !seen[k] {
			seen[k] = true
			fresh = append(fresh, i)
		}
	}
	return fresh, nil
}

// append writes the records of the fresh positions after the last intact
// record and fsyncs them, returning their index entries. Called with wmu
// held. On failure it cuts the log back to where it was, so no partial
// record stays behind.
func (c *FileCache) append(keys [][32]byte, vecs []vector.Vector, fresh []int) (map[[32]byte]indexEntry, error) {
	end := c.size
	for _, i := range fresh {
		end += recordSize(len(vecs[i].Dense))
	}
	if end > maxCacheOffset {
		return nil, fmt.Errorf("embedding cache %s is full: the log may not exceed %d bytes", c.dir, int64(maxCacheOffset))
	}
	added, err := c.writeRecords(keys, vecs, fresh)
	if err == nil {
		err = c.log.Sync()
	}
	if err != nil {
		_ = c.log.Truncate(c.size)
		return nil, c.ioError("appending to", err)
	}
	c.size = end
	return added, nil
}

// writeRecords writes the fresh records contiguously from c.size, in
// chunks of about maxPutChunk bytes, and returns where each one starts.
func (c *FileCache) writeRecords(keys [][32]byte, vecs []vector.Vector, fresh []int) (map[[32]byte]indexEntry, error) {
	added := make(map[[32]byte]indexEntry, len(fresh))
	off := c.size
	buf := make([]byte, 0, min(maxPutChunk, recordSize(len(vecs[fresh[0]].Dense))*int64(len(fresh))))
	for n, i := range fresh {
		added[keys[i]] = newIndexEntry(off+int64(len(buf)), len(vecs[i].Dense))
		buf = appendRecord(buf, keys[i], vecs[i].Dense)
		if len(buf) < maxPutChunk && n < len(fresh)-1 {
			continue
		}
		if _, err := c.log.WriteAt(buf, off); err != nil {
			return nil, err
		}
		off, buf = off+int64(len(buf)), buf[:0]
	}
	return added, nil
}
