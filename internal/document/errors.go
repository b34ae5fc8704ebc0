package document

import "fmt"

// FileError names the file (and line, for JSON Lines) a problem is in.
type FileError struct {
	Path string
	Line int
	Err  error
}

// Error gives the file, the line when known, and the problem.
func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// Reason is the problem of err without the file it names: the message of
// a *FileError's error, with its line when it has one, or err's own
// message. It serves callers that name the document themselves.
func Reason(err error) string {
	fe, ok := err.(*FileError)
	if !ok {
		return err.Error()
	}
	if fe.Line > 0 {
		return fmt.Sprintf("line %d: %v", fe.Line, fe.Err)
	}
	return fe.Err.Error()
}
