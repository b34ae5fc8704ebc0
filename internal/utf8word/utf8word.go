// Package utf8word reads UTF-8 text eight bytes at a time: a run of ASCII,
// the bulk of most text, is passed over a machine word at a time instead
// of a byte at a time.
package utf8word

import "unicode/utf8"

// high has the top bit of every byte of a word: the bits no ASCII byte
// sets.
const high = 0x8080808080808080

// Load returns the eight bytes of s from i, little endian (one load once
// compiled). It panics when s has fewer than eight bytes from i.
func Load(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// ASCII reports whether all eight bytes of x are ASCII.
func ASCII(x uint64) bool { return x&high == 0 }

// IsASCII reports whether s has no byte >= 0x80.
func IsASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if !ASCII(Load(s, i)) {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// RuneCount is utf8.RuneCountInString: the number of code points of s,
// each byte of invalid UTF-8 counting as one.
func RuneCount(s string) int {
	_, n := Skip(s, 0, len(s))
	return n
}

// Skip returns the byte offset n code points after byte offset i of s and
// the number of code points passed: n, or fewer when s ends first. Code
// points are counted as utf8.DecodeRuneInString reads them (each byte of
// invalid UTF-8 is one).
func Skip(s string, i, n int) (int, int) {
	passed := 0
	for passed < n && i < len(s) {
		if n-passed >= 8 && i+8 <= len(s) && ASCII(Load(s, i)) {
			i, passed = i+8, passed+8
			continue
		}
		if s[i] < utf8.RuneSelf {
			i++
		} else {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
		}
		passed++
	}
	return i, passed
}
