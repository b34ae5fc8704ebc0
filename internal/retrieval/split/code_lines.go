package split

import (
	"math"
	"strings"
	"unicode/utf8"
)

// codeLine is one line of a source text as the definition finder sees it,
// in 24 bytes (texts are shorter than 2 GiB: maxCodeText).
type codeLine struct {
	// start and end are the byte offsets of the line, end before its "\n".
	start, end int32
	// runeStart is the code-point offset of start.
	runeStart int32
	// depth is the bracket depth at the start of the line, counting (, [
	// and { outside strings and comments; never negative.
	depth int32
	// indent is the width of the line's leading white space, a tab
	// reaching the next multiple of 8.
	indent int32
	// inside: the line starts inside a string or comment of earlier lines.
	inside bool
	// blank: the line holds only white space.
	blank bool
	// comment: the line holds comments and white space, no code.
	comment bool
}

// lexer walks a text once, tracking the string or comment it is in.
type lexer struct {
	syn   *codeSyntax
	text  string
	open  *delimiter // the string or comment the lexer is in, nil in code
	isCom bool       // open is a comment
	depth int
}

// maxCodeText is the longest text scanLines takes, in bytes: its offsets
// are 32-bit.
const maxCodeText = math.MaxInt32

// scanLines cuts text (at most maxCodeText bytes) into lines and
// classifies each by syn, in one pass over the text: time linear in its
// length, memory 24 bytes a line.
func scanLines(text string, syn *codeSyntax) []codeLine {
	lx := lexer{syn: syn, text: text}
	lines := make([]codeLine, 0, strings.Count(text, "\n")+1)
	runes := 0
	for start := 0; start <= len(text); {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		line := codeLine{start: int32(start), end: int32(end), runeStart: int32(runes), depth: int32(lx.depth), inside: lx.open != nil}
		indent, blank := indentOf(text[start:end])
		line.indent, line.blank = int32(indent), blank
		line.comment = !lx.scanLine(start, end) && !line.blank
		lines = append(lines, line)
		runes += utf8.RuneCountInString(text[start:end]) + 1
		start = end + 1
	}
	return lines
}

// indentOf returns the width of a line's leading white space and whether
// the line is only white space.
func indentOf(line string) (width int, blank bool) {
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case ' ':
			width++
		case '\t':
			width += 8 - width%8
		case '\r', '\f', '\v':
		default:
			return width, false
		}
	}
	return width, true
}

// scanLine advances the lexer over text[start:end], one line, and reports
// whether the line holds code outside strings and comments (string
// contents count as code).
func (lx *lexer) scanLine(start, end int) (code bool) {
	for i := start; i < end; {
		if lx.open != nil {
			code = code || !lx.isCom
			i = lx.scanOpen(i, end)
			continue
		}
		c := lx.text[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case !lx.syn.special[c]:
			code = true
			i++
		case lx.blockComment(i, start): // before line comments: Lua's "--[[" starts with "--"
			i += len(lx.open.open)
		case lx.lineComment(i):
			return code
		default:
			code = true
			i = lx.scanCode(i, c)
		}
	}
	if lx.open != nil && !lx.open.multiline {
		lx.open = nil // an unclosed one-line string ends with its line
	}
	return code
}

// scanOpen advances inside the open string or comment from i, up to its
// close or the end of the line, and returns where it stopped.
func (lx *lexer) scanOpen(i, end int) int {
	d := lx.open
	for i < end {
		c := lx.text[i]
		if d.escapes && c == '\\' {
			i += 2
			continue
		}
		if c == d.close[0] && strings.HasPrefix(lx.text[i:end], d.close) {
			lx.open = nil
			return i + len(d.close)
		}
		i++
	}
	return end
}

// lineComment reports whether a line comment starts at i.
func (lx *lexer) lineComment(i int) bool {
	for _, c := range lx.syn.lineComments {
		if strings.HasPrefix(lx.text[i:], c) {
			return true
		}
	}
	return false
}

// blockComment reports whether a block comment starts at i (lineStart is
// the start of its line), and enters it if so.
func (lx *lexer) blockComment(i, lineStart int) bool {
	for k := range lx.syn.blockComments {
		d := &lx.syn.blockComments[k]
		// "=begin" and "=pod" open a comment only at the start of a line.
		if strings.HasPrefix(lx.text[i:], d.open) && (d.open[0] != '=' || i == lineStart) {
			lx.open, lx.isCom = d, true
			return true
		}
	}
	return false
}

// scanCode consumes the code byte c at i: a string opening, a bracket or
// any other byte, and returns the next offset.
func (lx *lexer) scanCode(i int, c byte) int {
	for k := range lx.syn.strings {
		d := &lx.syn.strings[k]
		if strings.HasPrefix(lx.text[i:], d.open) {
			lx.open, lx.isCom = d, false
			return i + len(d.open)
		}
	}
	switch c {
	case '(', '[', '{':
		lx.depth++
	case ')', ']', '}':
		lx.depth = max(0, lx.depth-1)
	}
	return i + 1
}
