package split

import "unicode/utf8"

// pyASCIISpace marks the ASCII bytes Python's str.isspace accepts: \t \n
// \v \f \r, the separators \x1c-\x1f, and the space.
var pyASCIISpace = [128]bool{
	'\t': true, '\n': true, '\v': true, '\f': true, '\r': true,
	0x1c: true, 0x1d: true, 0x1e: true, 0x1f: true, ' ': true,
}

// IsPythonSpace reports whether Python's str.isspace() is true for r, the
// set str.strip() removes: \t-\r, \x1c-\x1f, space, U+0085, U+00A0,
// U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F and U+3000. It
// differs from unicode.IsSpace, which lacks \x1c-\x1f. U+200B and U+FEFF
// are not spaces.
func IsPythonSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 0 && pyASCIISpace[r]
	}
	switch r {
	case 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// TrimPythonSpace returns s without its leading and trailing Python
// whitespace: exactly what Python's s.strip() returns. The result is a
// substring of s (no copy). Invalid UTF-8 is never stripped.
func TrimPythonSpace(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if !pyASCIISpace[c] {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !IsPythonSpace(r) || r == utf8.RuneError {
			break
		}
		i += n
	}
	j := len(s)
	for j > i {
		c := s[j-1]
		if c < utf8.RuneSelf {
			if !pyASCIISpace[c] {
				break
			}
			j--
			continue
		}
		r, n := utf8.DecodeLastRuneInString(s[i:j])
		if !IsPythonSpace(r) || r == utf8.RuneError {
			break
		}
		j -= n
	}
	return s[i:j]
}
