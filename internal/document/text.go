package document

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// utf8BOM is the byte-order mark some editors put at the start of UTF-8
// files; it is not part of the text.
var utf8BOM = []byte("\xef\xbb\xbf")

// CheckText refuses data that is binary (holds a NUL byte) or not valid
// UTF-8, naming the byte offset of the first bad byte.
func CheckText(data []byte) error { return checkTextAt(data, 0) }

// checkTextAt is CheckText for data that starts at byte offset base of its
// file: the offsets it names count from the start of the file.
func checkTextAt(data []byte, base int) error {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return fmt.Errorf("binary file (NUL byte at offset %d)", base+i)
	}
	if !utf8.Valid(data) {
		return fmt.Errorf("invalid UTF-8 at byte offset %d", base+firstInvalidUTF8(data))
	}
	return nil
}

// firstInvalidUTF8 returns the offset of the first byte that does not start
// a valid UTF-8 sequence.
func firstInvalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(data)
}

// plainText checks that data is UTF-8 text and returns it without a
// leading byte-order mark.
func plainText(data []byte) (string, error) {
	if err := CheckText(data); err != nil {
		return "", err
	}
	return string(bytes.TrimPrefix(data, utf8BOM)), nil
}
