package documenttest

import "unicode"

// isLetterOrDigit reports whether r is a letter or a digit.
func isLetterOrDigit(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
