package document

import (
	"bufio"
	"bytes"
	"io"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// ReadJSONLines reads the JSON Lines corpus r, the file called path, one
// document per non-blank line, a line at a time, so that loading a corpus
// holds its documents and one line, never the whole file, and makes no
// garbage of the lines that fit its buffer. Every line is checked as
// CheckText checks a file, with offsets counted from the start of the
// file; a byte-order mark before the first line is dropped. Errors are
// *FileError naming the file and, for a line that is not a document, the
// line.
func ReadJSONLines(r io.Reader, path string) ([]hierarchy.Document, error) {
	lines := bufio.NewReaderSize(r, 1<<20)
	var docs []hierarchy.Document
	offset := 0
	for line := 1; ; line++ {
		raw, readErr := readLine(lines)
		if readErr != nil && readErr != io.EOF {
			return nil, &FileError{Path: path, Err: readErr}
		}
		if err := checkTextAt(raw, offset); err != nil {
			return nil, &FileError{Path: path, Err: err}
		}
		offset += len(raw)
		if line == 1 {
			raw = bytes.TrimPrefix(raw, utf8BOM)
		}
		if raw = bytes.TrimSpace(raw); len(raw) > 0 {
			d, err := ParseJSONDocument(raw)
			if err != nil {
				return nil, &FileError{Path: path, Line: line, Err: err}
			}
			docs = append(docs, d)
		}
		if readErr == io.EOF {
			return docs, nil
		}
	}
}

// readLine returns the next line of r with its newline, as ReadBytes does,
// but in r's buffer (valid until the next read) unless the line is longer.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, err
	}
	line = bytes.Clone(line) // before the next read overwrites the buffer
	rest, err := r.ReadBytes('\n')
	return append(line, rest...), err
}

// EachJSONLine calls fn with every non-blank line of data, the contents of
// the JSON Lines file path. An error from fn is returned as a *FileError
// naming the file and the line.
func EachJSONLine(path string, data []byte, fn func(line []byte) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	for line := 1; sc.Scan(); line++ {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		if err := fn(raw); err != nil {
			return &FileError{Path: path, Line: line, Err: err}
		}
	}
	if err := sc.Err(); err != nil {
		return &FileError{Path: path, Err: err}
	}
	return nil
}
