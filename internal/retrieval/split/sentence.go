package split

import (
	"strings"
	"unicode"
)

// abbreviations end with a period that does not end a sentence. Keys are
// lower-case and without the final period.
var abbreviations = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "sr": true, "jr": true,
	"st": true, "vs": true, "etc": true, "e.g": true, "i.e": true, "cf": true, "al": true,
	"inc": true, "ltd": true, "co": true, "corp": true, "no": true, "fig": true, "approx": true,
	"gen": true, "gov": true, "sen": true, "rep": true, "rev": true, "mt": true, "ft": true,
	"jan": true, "feb": true, "mar": true, "apr": true, "jun": true, "jul": true, "aug": true,
	"sep": true, "sept": true, "oct": true, "nov": true, "dec": true, "u.s": true, "u.k": true,
	"a.m": true, "p.m": true, "ph.d": true, "vol": true, "pp": true, "est": true, "dept": true,
}

// Sentences splits text into sentences. Each returned Chunk is trimmed of
// surrounding white space and carries its code-point offset in text, so
// text[Start:Start+len(Chunk)] (in code points) is the sentence itself.
//
// A sentence ends at '.', '!' or '?' (with any closing quotes or brackets)
// followed by white space and a plausible sentence start, unless the period
// belongs to a known abbreviation, an initial ("J. R. R.") or a number
// ("3.14" never matches, as no space follows). A blank line always ends a
// sentence, and so does a line break before a Markdown block (heading, list
// item, quote, table row or fence); other single line breaks are wrapped
// prose.
func Sentences(text string) []Chunk {
	runes := []rune(text)
	var out []Chunk
	start := 0
	for i := 0; i < len(runes); i++ {
		if end, ok := sentenceEnd(runes, i); ok {
			out = appendTrimmed(out, runes, start, end)
			start = end
		}
	}
	return appendTrimmed(out, runes, start, len(runes))
}

// sentenceEnd reports whether a sentence ends just before position end,
// where end is at or after i, deciding on the rune at i.
func sentenceEnd(runes []rune, i int) (int, bool) {
	switch r := runes[i]; {
	case r == '\n':
		return i + 1, breaksAtNewline(runes, i)
	case r == '.' || r == '!' || r == '?' || r == '…':
		end := i + 1
		for end < len(runes) && isCloser(runes[end]) {
			end++
		}
		if end < len(runes) && !unicode.IsSpace(runes[end]) {
			return 0, false
		}
		if r == '.' && isAbbreviation(runes, i) {
			return 0, false
		}
		return end, startsSentence(runes, end)
	}
	return 0, false
}

// breaksAtNewline reports whether the line break at i ends a sentence: a
// blank line follows, or the next line opens a Markdown block.
func breaksAtNewline(runes []rune, i int) bool {
	j := i + 1
	for j < len(runes) && (runes[j] == ' ' || runes[j] == '\t' || runes[j] == '\r') {
		j++
	}
	if j >= len(runes) || runes[j] == '\n' {
		return true
	}
	return opensBlock(runes[j:])
}

// opensBlock reports whether a line starting with rest is a Markdown block
// start: heading, bullet, numbered item, quote, table row or code fence.
func opensBlock(rest []rune) bool {
	switch rest[0] {
	case '#', '>', '|', '`', '~':
		return true
	case '-', '*', '+':
		return len(rest) > 1 && rest[1] == ' '
	}
	j := 0
	for j < len(rest) && j < 4 && unicode.IsDigit(rest[j]) {
		j++
	}
	return j > 0 && j+1 < len(rest) && (rest[j] == '.' || rest[j] == ')') && rest[j+1] == ' '
}

// isCloser reports whether r may follow sentence punctuation inside the
// sentence: closing quotes and brackets.
func isCloser(r rune) bool {
	return strings.ContainsRune(`"')]}’”»`, r)
}

// startsSentence reports whether the text after white space at pos can begin
// a sentence: the end of text, an upper-case letter, a digit, an opening
// quote or bracket, or any letter of a script without case.
func startsSentence(runes []rune, pos int) bool {
	for pos < len(runes) && unicode.IsSpace(runes[pos]) {
		pos++
	}
	if pos >= len(runes) {
		return true
	}
	r := runes[pos]
	if unicode.IsUpper(r) || unicode.IsDigit(r) || strings.ContainsRune(`"'([{“‘«¿¡#*-`, r) {
		return true
	}
	return unicode.IsLetter(r) && !unicode.IsLower(r)
}

// isAbbreviation reports whether the period at i closes an abbreviation or
// an initial rather than a sentence.
func isAbbreviation(runes []rune, i int) bool {
	j := i
	for j > 0 && (unicode.IsLetter(runes[j-1]) || runes[j-1] == '.') {
		j--
	}
	word := string(runes[j:i])
	if word == "" {
		return false
	}
	if len([]rune(word)) == 1 && unicode.IsUpper([]rune(word)[0]) {
		return true // an initial: "J. Smith"
	}
	return abbreviations[strings.ToLower(word)]
}

// appendTrimmed appends runes[from:to], trimmed of white space, unless it is
// empty.
func appendTrimmed(out []Chunk, runes []rune, from, to int) []Chunk {
	for from < to && unicode.IsSpace(runes[from]) {
		from++
	}
	for to > from && unicode.IsSpace(runes[to-1]) {
		to--
	}
	if from == to {
		return out
	}
	return append(out, Chunk{Text: string(runes[from:to]), Start: from})
}
