package document

import (
	"strings"
	"unicode"
)

// cleanPages prepares the text of each page: control characters out
// (PDFium marks a word it joined across a line-end hyphen with U+0002,
// which goes), a word still hyphenated at a line end ("con-" then
// "figure") joined, trailing white space trimmed, and running headers,
// footers and page numbers dropped (see runningLines).
func cleanPages(pages []string) [][]string {
	out := make([][]string, len(pages))
	for i, p := range pages {
		out[i] = joinHyphenated(strings.Split(strings.Map(keepPrintable, p), "\n"))
	}
	dropRunningLines(out)
	return out
}

// keepPrintable drops control characters but line breaks and tabs.
func keepPrintable(r rune) rune {
	if r == '\n' || r == '\t' || !unicode.IsControl(r) && r != '\ufffe' && r != '\uffff' {
		return r
	}
	return -1
}

// joinHyphenated trims the lines and joins a line that ends in a letter
// and a hyphen with the next when that starts with a lower-case letter.
func joinHyphenated(lines []string) []string {
	out := lines[:0]
	for _, line := range lines {
		line = strings.TrimRightFunc(line, unicode.IsSpace)
		if n := len(out); n > 0 && endsHyphenated(out[n-1]) && startsLower(line) {
			prev := out[n-1]
			out[n-1] = prev[:len(prev)-1] + line
			continue
		}
		out = append(out, line)
	}
	return out
}

// endsHyphenated reports whether line ends in a letter and a hyphen.
func endsHyphenated(line string) bool {
	body, ok := strings.CutSuffix(line, "-")
	if !ok || body == "" {
		return false
	}
	last := []rune(body[max(0, len(body)-4):])
	return unicode.IsLetter(last[len(last)-1])
}

// startsLower reports whether line starts with a lower-case letter.
func startsLower(line string) bool {
	for _, r := range line {
		return unicode.IsLower(r)
	}
	return false
}

// edgeLines is how many lines at the top and at the bottom of a page may
// be running headers or footers.
const edgeLines = 2

// dropRunningLines removes, from the first and last edgeLines non-blank
// lines of every page, the running headers and footers: lines that, with
// their digits masked, stand at the same edge of at least 3 pages and
// either of half the pages or more, or hold a number (a page number, a
// running head with its page number). With fewer than 3 pages nothing is
// dropped: no line can be told to repeat.
func dropRunningLines(pages [][]string) {
	if len(pages) < 3 {
		return
	}
	top, bottom := map[string]int{}, map[string]int{}
	for _, lines := range pages {
		for _, k := range edgeKeys(lines, true) {
			top[k]++
		}
		for _, k := range edgeKeys(lines, false) {
			bottom[k]++
		}
	}
	running := func(counts map[string]int, key string) bool {
		n := counts[key]
		return n >= 3 && (2*n >= len(pages) || strings.Contains(key, "#"))
	}
	for i, lines := range pages {
		pages[i] = dropEdges(lines, func(key string, atTop bool) bool {
			if atTop {
				return running(top, key)
			}
			return running(bottom, key)
		})
	}
}

// edgeKeys returns the keys of the first (top) or last edgeLines
// non-blank lines of a page, each once.
func edgeKeys(lines []string, top bool) []string {
	var keys []string
	seen := map[string]bool{}
	for _, i := range edgeIndexes(lines, top) {
		if k := lineKey(lines[i]); !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys
}

// edgeIndexes are the indexes of the first (top) or last edgeLines
// non-blank lines.
func edgeIndexes(lines []string, top bool) []int {
	var idx []int
	for n := 0; n < len(lines) && len(idx) < edgeLines; n++ {
		i := n
		if !top {
			i = len(lines) - 1 - n
		}
		if strings.TrimSpace(lines[i]) != "" {
			idx = append(idx, i)
		}
	}
	return idx
}

// dropEdges returns lines without the edge lines running reports.
func dropEdges(lines []string, running func(key string, atTop bool) bool) []string {
	drop := map[int]bool{}
	for _, atTop := range []bool{true, false} {
		for _, i := range edgeIndexes(lines, atTop) {
			if running(lineKey(lines[i]), atTop) {
				drop[i] = true
			}
		}
	}
	if len(drop) == 0 {
		return lines
	}
	out := make([]string, 0, len(lines)-len(drop))
	for i, l := range lines {
		if !drop[i] {
			out = append(out, l)
		}
	}
	return out
}

// lineKey is a line as running headers are compared: lower case, white
// space collapsed, every run of digits (and a lone Roman numeral, as
// front matter numbers its pages) as "#".
func lineKey(line string) string {
	fields := strings.Fields(strings.ToLower(line))
	for i, f := range fields {
		if strings.Trim(f, "ivxlc") == "" && len(fields) == 1 {
			fields[i] = "#"
			continue
		}
		fields[i] = maskDigits(f)
	}
	return strings.Join(fields, " ")
}

// maskDigits replaces every run of digits in s with "#".
func maskDigits(s string) string {
	var b strings.Builder
	inDigits := false
	for _, r := range s {
		if unicode.IsDigit(r) {
			if !inDigits {
				b.WriteByte('#')
			}
			inDigits = true
			continue
		}
		inDigits = false
		b.WriteRune(r)
	}
	return b.String()
}

// isWordRune reports whether r is a letter or a digit.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
