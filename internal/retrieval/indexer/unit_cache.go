package indexer

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// UnitCache keeps units between builds as files in a directory, one per
// unit, named by its key (see keyOf). Files are written to a temporary
// name and renamed into place, so readers never see half a file and
// concurrent builders writing the same unit both leave a whole one. A
// file whose frame, key or checksum is wrong is never trusted: it counts
// as a miss and the unit is made and written again.
//
// File layout: magic "PRUNIT3\n" | key (32 bytes) | payload length (8
// bytes, little endian) | CRC-32C of the payload (4 bytes, little endian)
// | payload (the Unit, see encodeUnitPayload).
type UnitCache struct {
	dir    string
	writes unitWrites
}

// unitMagic starts every unit file; its digit is the layout's version.
const unitMagic = "PRUNIT3\n"

// unitHeaderSize is the size of a unit file before its payload.
const unitHeaderSize = len(unitMagic) + sha256.Size + 8 + 4

// unitFileExt ends the name of every unit file.
const unitFileExt = ".unit"

// OpenUnitCache opens, creating it and its 256 subdirectories when
// missing, the unit cache in dir.
func OpenUnitCache(dir string) (*UnitCache, error) {
	for b := range 256 {
		if err := os.MkdirAll(filepath.Join(dir, hex.EncodeToString([]byte{byte(b)})), 0o755); err != nil {
			return nil, fmt.Errorf("unit cache: %w", err)
		}
	}
	return &UnitCache{dir: dir}, nil
}

// Dir returns the cache's directory.
func (c *UnitCache) Dir() string { return c.dir }

// UnitFiles lists the unit files of the cache in dir.
func UnitFiles(dir string) ([]string, error) {
	return filepath.Glob(filepath.Join(dir, "*", "*"+unitFileExt))
}

// path is where the unit of key lives: in a directory named by its first
// byte, so no directory grows too large.
func (c *UnitCache) path(key unitKey) string {
	name := hex.EncodeToString(key[:])
	return filepath.Join(c.dir, name[:2], name+unitFileExt)
}

// unitTouchAge is how old a unit file's modification time must be before
// a hit refreshes it: refreshing on every hit would write an inode per
// reused document per build. Prune allows for it.
const unitTouchAge = 24 * time.Hour

// load returns the unit of key, or false when there is none or its file
// is damaged (see loadPayload).
func (c *UnitCache) load(key unitKey) (*Unit, bool) {
	payload, ok := c.loadPayload(key)
	if !ok {
		return nil, false
	}
	u, err := decodeUnitPayload(payload, decodeOwned)
	return u, err == nil
}

// loadPayload returns the checked payload of the unit of key, or false
// when there is none or its frame, key or checksum is wrong. A hit
// refreshes the file's modification time, which Prune reads as its last
// use, when it is older than unitTouchAge.
func (c *UnitCache) loadPayload(key unitKey) ([]byte, bool) {
	path := c.path(key)
	data, modified, err := readUnitFile(path)
	if err != nil {
		return nil, false
	}
	payload, err := unframeUnit(data, key)
	if err != nil {
		return nil, false
	}
	if now := time.Now(); now.Sub(modified) > unitTouchAge {
		_ = os.Chtimes(path, now, now) // best effort: only pruning reads it
	}
	return payload, true
}

// readUnitFile returns the bytes of the file at path and its modification
// time.
func readUnitFile(path string) ([]byte, time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, err
	}
	data := make([]byte, info.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, time.Time{}, err
	}
	return data, info.ModTime(), nil
}

// store queues the unit of key to be written, replacing any damaged file,
// by the cache's writers (see Wait).
func (c *UnitCache) store(key unitKey, u *Unit) { c.storePayload(key, encodeUnitPayload(u)) }

// storePayload is store for a unit already encoded.
func (c *UnitCache) storePayload(key unitKey, payload []byte) {
	c.writes.add(c.path(key), frameUnit(payload, key))
}

// Wait returns once every unit stored so far is written or has failed,
// with how many failed and the first failure. A build calls it before it
// reports; no store may run concurrently with it.
func (c *UnitCache) Wait() (int, error) { return c.writes.wait() }

// frameUnit frames the payload of a unit under key.
func frameUnit(payload []byte, key unitKey) []byte {
	out := make([]byte, 0, unitHeaderSize+len(payload))
	out = append(out, unitMagic...)
	out = append(out, key[:]...)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(payload)))
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(payload, castagnoli))
	return append(out, payload...)
}

// castagnoli is the CRC-32C table: the checksum catches truncation and
// corruption at memory speed; the file's name and stored key, not the
// checksum, say which unit it is.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errDamagedUnit is returned for a unit file that is not whole and sound.
var errDamagedUnit = errors.New("damaged unit file")

// unframeUnit checks the frame of data against key and returns its
// payload.
func unframeUnit(data []byte, key unitKey) ([]byte, error) {
	if len(data) < unitHeaderSize || string(data[:len(unitMagic)]) != unitMagic {
		return nil, errDamagedUnit
	}
	rest := data[len(unitMagic):]
	if !bytes.Equal(rest[:sha256.Size], key[:]) {
		return nil, errDamagedUnit
	}
	n := binary.LittleEndian.Uint64(rest[sha256.Size:])
	sum, payload := binary.LittleEndian.Uint32(rest[sha256.Size+8:]), rest[sha256.Size+12:]
	if n != uint64(len(payload)) || crc32.Checksum(payload, castagnoli) != sum {
		return nil, errDamagedUnit
	}
	return payload, nil
}

// Prune removes the units not used (made or reused by a build) since
// before, and temporary files of interrupted writes older than that, and
// returns how many files it removed. Since a hit refreshes a unit's time
// only once it is a day old (unitTouchAge), a unit is removed only when
// its file is a day older than before. Units a running build still needs
// are safe as long as before is earlier than that build's start.
func (c *UnitCache) Prune(before time.Time) (int, error) {
	before = before.Add(-unitTouchAge)
	removed := 0
	err := filepath.WalkDir(c.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || !(strings.HasSuffix(path, unitFileExt) || strings.HasPrefix(d.Name(), ".tmp-")) {
			return nil
		}
		info, err := d.Info()
		if err != nil || !info.ModTime().Before(before) {
			return nil
		}
		if os.Remove(path) == nil {
			removed++
		}
		return nil
	})
	if err != nil {
		return removed, fmt.Errorf("pruning unit cache: %w", err)
	}
	return removed, nil
}
