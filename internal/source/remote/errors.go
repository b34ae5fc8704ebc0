package remote

import (
	"errors"
	"fmt"
)

// ErrLimit is wrapped by the error of a source that is over MaxTotalBytes
// (downloaded or unpacked) or MaxFiles.
var ErrLimit = errors.New("source too large")

// ErrChecksum is wrapped by the error of a download whose sha256 is not
// the one the spec asks for.
var ErrChecksum = errors.New("checksum mismatch")

// StatusError is the error of a response with a status other than 2xx.
type StatusError struct {
	// StatusCode is the HTTP status code, such as 404.
	StatusCode int
	// Status is the status line, such as "404 Not Found".
	Status string
	// Excerpt is the start of the response body, on one line.
	Excerpt string
}

// Error names the status and, when the server sent one, the start of its
// explanation.
func (e *StatusError) Error() string {
	if e.Excerpt == "" {
		return "server answered " + e.Status
	}
	return fmt.Sprintf("server answered %s: %s", e.Status, e.Excerpt)
}

// DocumentError is one entry of a source that was refused.
type DocumentError struct {
	// Document is the id the entry would have had: the source name, a
	// slash and its path in the archive (its file name for a single file).
	Document string
	// Message says why it was refused.
	Message string
}

// Error gives the document and the reason on one line.
func (e DocumentError) Error() string {
	return e.Document + ": " + e.Message
}
