package split

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// codeUnit is a run of lines [first, last) of a source text: a statement
// at one level of nesting (a definition) with the comments and decorators
// right above it, or, when head is -1, the lines before the first one.
type codeUnit struct {
	first, last int
	head        int    // the line the statement starts on; -1 for the lines before
	name        string // the definition's signature up to its parameters; "" for no definition
}

// codeFinder finds the statements of a scanned source text.
type codeFinder struct {
	text  string
	lines []codeLine
	syn   *codeSyntax
}

// level is how deep line i is nested: its indentation where blocks are
// indented, its bracket depth otherwise.
func (f *codeFinder) level(i int) int {
	if f.syn.indented {
		return int(f.lines[i].indent)
	}
	return int(f.lines[i].depth)
}

// lineText returns line i without its leading and trailing white space.
func (f *codeFinder) lineText(i int) string {
	return strings.TrimSpace(f.text[f.lines[i].start:f.lines[i].end])
}

// isCode reports whether line i holds code that starts on it.
func (f *codeFinder) isCode(i int) bool {
	l := f.lines[i]
	return !l.blank && !l.comment && !l.inside
}

// units cuts lines [from, to) at the statements of the outermost level
// deeper than above (-1 for the whole text): each unit runs from a
// statement, with the comments and decorators right above it, to the next
// one. Lines before the first statement make a unit of their own. Lines
// that continue a block (closing brackets, "else", "end") start nothing.
func (f *codeFinder) units(from, to, above int) []codeUnit {
	at, ok := f.outermost(from, to, above)
	if !ok {
		return nil
	}
	var heads []int
	var names []string
	for i := from; i < to; i++ {
		if !f.startsStatement(i, at) {
			continue
		}
		name := f.name(i, above >= 0)
		if n := len(names); n > 0 && name != "" && name == names[n-1] {
			continue // another clause of the same definition: an overload, a Haskell equation
		}
		heads, names = append(heads, i), append(names, name)
	}
	var out []codeUnit
	prev := from
	for k, h := range heads {
		first := f.attachedAbove(h, max(prev, from), at.level)
		if k == 0 && first > from {
			out = append(out, codeUnit{first: from, last: first, head: -1})
		} else if k > 0 {
			out = f.endUnit(out, first, at.level)
		}
		out = append(out, codeUnit{first: first, last: to, head: h, name: names[k]})
		prev = h + 1
	}
	if len(out) > 0 {
		out = f.endUnit(out, to, at.level)
	}
	return out
}

// endUnit ends the last unit of units at line last. Comment lines at the
// unit's own level that close it, after a blank line (a comment about
// what follows), become a unit of their own, which belongs to no
// definition.
func (f *codeFinder) endUnit(units []codeUnit, last, level int) []codeUnit {
	u := &units[len(units)-1]
	u.last = last
	if u.head < 0 {
		return units
	}
	end := last
	for end > u.head+1 && f.lines[end-1].blank {
		end--
	}
	tail := end
	for tail > u.head+1 && f.lines[tail-1].comment && f.level(tail-1) == level {
		tail--
	}
	if tail == end || !f.lines[tail-1].blank {
		return units
	}
	u.last = tail
	return append(units, codeUnit{first: tail, last: last, head: -1})
}

// position is where a line stands in the nesting of its text.
type position struct{ level, depth, indent int }

// outermost returns the position of the outermost statements of lines
// [from, to) deeper than above: the least level, then the least bracket
// depth and indentation at that level (lines indented deeper there
// continue an expression, as in Kotlin's "fun f() =" bodies).
func (f *codeFinder) outermost(from, to, above int) (at position, ok bool) {
	for i := from; i < to; i++ {
		if !f.isCode(i) || f.continues(i) || f.level(i) <= above {
			continue
		}
		p := position{f.level(i), int(f.lines[i].depth), int(f.lines[i].indent)}
		if !ok || p.level < at.level || (p.level == at.level && (p.depth < at.depth || (p.depth == at.depth && p.indent < at.indent))) {
			at, ok = p, true
		}
	}
	return at, ok
}

// startsStatement reports whether line i starts a statement at position
// at, one that does not continue the block above and is not a decorator
// of the next one.
func (f *codeFinder) startsStatement(i int, at position) bool {
	l := f.lines[i]
	return f.isCode(i) && f.level(i) == at.level && int(l.depth) == at.depth && int(l.indent) == at.indent &&
		!f.continues(i) && !f.isAttached(i)
}

// continues reports whether line i continues or closes the block above:
// it opens with a closing bracket or one of the language's closers.
func (f *codeFinder) continues(i int) bool {
	s := f.lineText(i)
	if s == "" {
		return false
	}
	// A line opening with "{" continues too: the body of a definition
	// whose brace goes on the next line.
	if strings.ContainsRune(")]}{", rune(s[0])) {
		return true
	}
	word := strings.ToLower(firstWord(s))
	for _, c := range f.syn.closers {
		if word == c {
			return true
		}
	}
	return false
}

// isAttached reports whether line i belongs to the statement below it: a
// decorator, annotation or attribute.
func (f *codeFinder) isAttached(i int) bool {
	s := f.lineText(i)
	for _, p := range f.syn.attached {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// attachedAbove returns the first line of the statement at head: head, or
// the first of the comment and decorator lines right above it (no blank
// line between) at its level, not before floor. Lines that continue a
// decorator over several lines (its arguments) come along with it.
func (f *codeFinder) attachedAbove(head, floor, level int) int {
	first := head
	for i := head - 1; i >= floor; i-- {
		l := f.lines[i]
		switch {
		case l.blank:
			return first
		case f.level(i) == level && (l.comment || f.isAttached(i)):
			first = i
		case l.inside || f.level(i) > level || f.continues(i):
			// inside a comment or a decorator's arguments: keep looking
		default:
			return first
		}
	}
	return first
}

// name returns the name of the definition line i starts, "" for none.
// Inside another definition (member) only a declaration is named, not an
// assignment or a call.
func (f *codeFinder) name(i int, member bool) string {
	line := f.lineText(i)
	if f.syn.nameIsFirstWord {
		return firstWordName(line)
	}
	return definitionName(line, member)
}

// firstWordName names a definition by its first word, or two for a
// declaration keyword ("data Queue"), as in Haskell, where a function's
// type signature and its equations start with its name.
func firstWordName(line string) string {
	word := firstWord(line)
	if word == "" || notDefinitions[word] {
		return ""
	}
	switch word {
	case "data", "type", "newtype", "class", "instance", "module":
		if next := firstWord(strings.TrimSpace(line[len(word):])); next != "" {
			return word + " " + next
		}
	}
	return word
}

// firstWord returns the leading run of letters, digits and '_' of s.
func firstWord(s string) string {
	for i, r := range s {
		if !isIdentRune(r) {
			return s[:i]
		}
	}
	return s
}

// isIdentRune reports whether r may be part of an identifier.
func isIdentRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// notDefinitions are the first words (lower case) of statements that
// define nothing a reader would look up by name.
var notDefinitions = map[string]bool{
	"if": true, "else": true, "elif": true, "elsif": true, "for": true, "foreach": true, "while": true,
	"do": true, "switch": true, "case": true, "when": true, "match": true, "loop": true, "unless": true,
	"until": true, "repeat": true, "return": true, "try": true, "catch": true, "except": true,
	"finally": true, "rescue": true, "begin": true, "end": true, "with": true, "import": true,
	"from": true, "package": true, "using": true, "use": true, "require": true, "include": true,
	"library": true, "syntax": true, "option": true, "pragma": true, "param": true, "defer": true,
	"go": true, "select": true, "break": true, "continue": true, "throw": true, "raise": true,
	"yield": true, "print": true, "puts": true, "echo": true, "assert": true, "emit": true,
}

// maxNameLength is the most code points of a definition's name.
const maxNameLength = 100

// definitionName returns the name of the definition a statement line
// starts: its signature up to its parameters or body ("func (r *R)
// Reconcile", "class Foo", "def bar", "public int size"), or "" for a
// statement that defines nothing (control flow, imports, a string). For a
// member of another definition, assignments and one-word statements (calls)
// are no definitions either.
func definitionName(line string, member bool) string {
	r, _ := utf8.DecodeRuneInString(line)
	if !(r == '_' || r == '$' || unicode.IsLetter(r)) || notDefinitions[strings.ToLower(firstWord(line))] {
		return ""
	}
	end, assignment := signatureEnd(line)
	name := strings.TrimRight(strings.TrimSpace(line[:end]), " \t(:,=.;")
	if end == len(line) { // a line that ends by opening a block: "defmodule Stack do"
		for _, opener := range []string{" do", " where", " then"} {
			name = strings.TrimSuffix(name, opener)
		}
	}
	if member && (assignment || !strings.ContainsAny(name, " \t")) {
		return ""
	}
	if utf8.RuneCountInString(name) > maxNameLength {
		name = string([]rune(name)[:maxNameLength]) + "…"
	}
	return name
}

// signatureEnd returns where a definition's name ends in its line: at the
// first parameter list (a "(" right after a name, a ">" or a "]"; or a
// "[" right after a name, which opens type parameters), body
// ("{"), assignment (" =", ":=", "=>"; assignment is then true) or ";", or
// at a trailing ":".
func signatureEnd(line string) (end int, assignment bool) {
	parens := 0 // inside a receiver such as Go's "(l *list[T])"
	angles := 0 // inside type parameters such as Rust's "<T: Debug>"
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case '<':
			if i > 0 && isIdentByte(line[i-1]) {
				angles++
			}
		case '>':
			if angles > 0 && line[i-1] != '-' && line[i-1] != '=' {
				angles--
			}
		case '(':
			if i > 0 && (isIdentByte(line[i-1]) || line[i-1] == '>' || line[i-1] == ']' || namesBefore(line[:i])) {
				return i, false
			}
			parens++
		case ')':
			parens = max(0, parens-1)
		case '[':
			if parens == 0 && i > 0 && isIdentByte(line[i-1]) {
				return i, false
			}
		case '{', ';':
			return i, false
		case '=':
			if (i > 0 && (line[i-1] == ' ' || line[i-1] == ':')) || (i+1 < len(line) && line[i+1] == '>') {
				return i, true
			}
		case ':':
			// "class Foo:", "class Absent: pass", "val x: Int", "class A : B";
			// not "::" (paths, Haskell signatures).
			if parens == 0 && angles == 0 && (i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\t') && (i == 0 || line[i-1] != ':') {
				return i, false
			}
		}
	}
	return len(line), false
}

// namesBefore reports whether before, the line up to a "(", ends in a
// name and white space, as in "def newer (source, target)"; a keyword
// there ("func (r *R)", "function (x)") opens a receiver or an anonymous
// function instead.
func namesBefore(before string) bool {
	trimmed := strings.TrimRight(before, " \t")
	if len(trimmed) == len(before) || trimmed == "" || !isIdentByte(trimmed[len(trimmed)-1]) {
		return false
	}
	word := trimmed[strings.LastIndexFunc(trimmed, func(r rune) bool { return !isIdentRune(r) })+1:]
	switch word {
	case "func", "function", "fn", "fun", "def", "sub", "lambda", "async":
		return false
	}
	return !notDefinitions[strings.ToLower(word)]
}

// isIdentByte reports whether an ASCII byte may end an identifier (any
// byte of a multi-byte rune counts as a letter).
func isIdentByte(c byte) bool {
	return c == '_' || c >= utf8.RuneSelf || (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

// trimmedSpan returns the code-point span of lines [first, last) without
// the blank lines before it and the white space after it; the first line
// keeps its indentation. start == end when the lines are blank.
func (f *codeFinder) trimmedSpan(first, last int) (start, end int) {
	for first < last && f.lines[first].blank {
		first++
	}
	for last > first && f.lines[last-1].blank {
		last--
	}
	if first == last {
		return 0, 0
	}
	l := f.lines[last-1]
	body := trimRightPythonSpace(f.text[l.start:l.end])
	return int(f.lines[first].runeStart), int(l.runeStart) + utf8.RuneCountInString(body)
}

// trimRightPythonSpace drops the white space Python's str.strip drops from
// the end of s.
func trimRightPythonSpace(s string) string {
	for s != "" {
		r, size := utf8.DecodeLastRuneInString(s)
		if !IsPythonSpace(r) {
			break
		}
		s = s[:len(s)-size]
	}
	return s
}

// spanText returns the text between two code-point offsets.
func (f *codeFinder) spanText(start, end int) string {
	return f.text[f.byteOffset(start):f.byteOffset(end)]
}

// byteOffset converts a code-point offset into a byte offset of the text.
func (f *codeFinder) byteOffset(runeOff int) int {
	i, _ := slices.BinarySearchFunc(f.lines, runeOff, func(l codeLine, r int) int { return cmp.Compare(int(l.runeStart), r) })
	if i == len(f.lines) || int(f.lines[i].runeStart) > runeOff {
		i-- // runeOff falls inside line i-1
	}
	l := f.lines[i]
	b := int(l.start)
	for n := runeOff - int(l.runeStart); n > 0 && b < len(f.text); n-- {
		_, size := utf8.DecodeRuneInString(f.text[b:])
		b += size
	}
	return b
}
