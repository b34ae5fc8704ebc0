package document

import "strings"

// titleLines is how many lines MarkdownTitle looks at.
const titleLines = 50

// MarkdownTitle returns the text of the first level-one ATX heading ("# Title")
// among the first lines, if any. As in CommonMark, the heading may be
// indented up to three spaces and lose its closing #s, and lines inside
// fenced code blocks are not headings (a shell comment is no title). A
// leading byte-order mark is ignored.
func MarkdownTitle(text string) string {
	rest := strings.TrimPrefix(text, "\ufeff")
	fence := ""
	for n := 0; n < titleLines && rest != ""; n++ {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		line = strings.TrimRight(line, "\r")
		trimmed := strings.TrimLeft(line, " ")
		if len(line)-len(trimmed) > 3 {
			continue // indented code
		}
		if fence != "" {
			if closesFence(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if fence = opensFence(trimmed); fence != "" {
			continue
		}
		if title, ok := levelOneHeading(trimmed); ok && title != "" {
			return title
		}
	}
	return ""
}

// opensFence returns the run of three or more backticks or tildes a line
// opens a fenced code block with, or "".
func opensFence(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}

// closesFence reports whether line closes a block opened by fence: at
// least as many of the same character, then only white space.
func closesFence(line, fence string) bool {
	run := strings.TrimLeft(line, fence[:1])
	return len(line)-len(run) >= len(fence) && strings.TrimSpace(run) == ""
}

// levelOneHeading returns the text of a "# " heading line without its
// optional closing sequence of #s.
func levelOneHeading(line string) (string, bool) {
	if line != "#" && !strings.HasPrefix(line, "# ") && !strings.HasPrefix(line, "#\t") {
		return "", false
	}
	title := strings.TrimSpace(line[1:])
	if closed := strings.TrimRight(title, "#"); closed == "" {
		title = ""
	} else if strings.HasSuffix(closed, " ") || strings.HasSuffix(closed, "\t") {
		title = strings.TrimSpace(closed)
	}
	return title, true
}

// rstTitleLines is how many lines rstTitle looks at.
const rstTitleLines = 50

// rstTitle returns the first section title among the first lines of
// reStructuredText: a line of text underlined by a line of one repeated
// punctuation character at least as long (an overline may precede it).
func rstTitle(text string) string {
	lines := strings.SplitN(strings.TrimPrefix(text, "\ufeff"), "\n", rstTitleLines+1)
	for i := 0; i+1 < len(lines) && i < rstTitleLines; i++ {
		title := strings.TrimSpace(lines[i])
		under := strings.TrimRight(lines[i+1], " \t\r")
		if title != "" && !isAdornment(title) && isAdornment(under) && len([]rune(under)) >= len([]rune(title)) {
			return title
		}
	}
	return ""
}

// isAdornment reports whether line is two or more of one ASCII punctuation
// character, as reStructuredText section adornments are.
func isAdornment(line string) bool {
	if len(line) < 2 || !strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", rune(line[0])) {
		return false
	}
	return strings.Count(line, line[:1]) == len(line)
}
