package document

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/parentrag/parentrag/internal/document/pdfium"
)

// layoutPages joins the pages into one Markdown text and returns it with
// the code-point offset at which each page starts. The outline's entries
// become ATX headings of their level (level 6 for deeper ones) on their
// page: in place of the line that holds their title, when the page has
// one, else where the previous heading of the page ended (the top of the
// page for the first). Without a usable outline, every page starts with
// the heading "# Page N", so that section parents are pages. Lines that
// would read as Markdown headings or code fences are escaped.
func layoutPages(pages [][]string, outline []pdfium.Bookmark) (string, []int) {
	byPage := bookmarksByPage(outline, len(pages))
	var l pageLayout
	for i, lines := range pages {
		l.startPage()
		marks := byPage[i]
		if byPage == nil {
			marks = []pdfium.Bookmark{{Title: "Page " + strconv.Itoa(i+1), Level: 1, Page: i}}
		}
		pos := 0
		for _, b := range marks {
			at, span := findTitle(lines, pos, b.Title)
			heading := b.Title
			if at < 0 {
				at, span = pos, 0
			} else {
				heading = strings.Join(strings.Fields(strings.Join(lines[at:at+span], " ")), " ")
			}
			l.lines(lines[pos:at])
			l.heading(b.Level, heading)
			pos = at + span
		}
		l.lines(lines[pos:])
	}
	return l.text.String(), l.starts
}

// bookmarksByPage groups the entries that have a title and point at one
// of the pages by page, in outline order; nil when none does.
func bookmarksByPage(outline []pdfium.Bookmark, pages int) map[int][]pdfium.Bookmark {
	var byPage map[int][]pdfium.Bookmark
	for _, b := range outline {
		if b.Page < 0 || b.Page >= pages || titleKey(b.Title) == "" {
			continue
		}
		if byPage == nil {
			byPage = map[int][]pdfium.Bookmark{}
		}
		byPage[b.Page] = append(byPage[b.Page], b)
	}
	return byPage
}

// findTitle finds, from line from on, the line (or two lines) of a page
// that holds title: the same letters and digits, maybe after a section
// number the outline left out. It returns the index and the number of
// lines, or -1.
func findTitle(lines []string, from int, title string) (int, int) {
	want := titleKey(title)
	for i := from; i < len(lines); i++ {
		for span := 1; span <= 2 && i+span <= len(lines); span++ {
			if holdsTitle(titleKey(strings.Join(lines[i:i+span], " ")), want) {
				return i, span
			}
		}
	}
	return -1, 0
}

// holdsTitle reports whether a line's key is the title's, maybe with a
// section number before it.
func holdsTitle(line, title string) bool {
	rest, ok := strings.CutSuffix(line, title)
	return ok && strings.Trim(rest, "0123456789") == ""
}

// titleKey is s as titles are compared: its letters and digits, lower
// case.
func titleKey(s string) string {
	return strings.Map(func(r rune) rune {
		if isWordRune(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, s)
}

// pageLayout writes the pages' Markdown, counting code points.
type pageLayout struct {
	text   strings.Builder
	runes  int
	starts []int
}

// startPage records where the next page starts, after a blank line.
func (l *pageLayout) startPage() {
	if l.runes > 0 {
		l.write("\n")
	}
	l.starts = append(l.starts, l.runes)
}

// heading writes an ATX heading as a block of its own.
func (l *pageLayout) heading(level int, text string) {
	l.block(strings.Repeat("#", min(max(level, 1), 6)) + " " + text)
}

// lines writes lines of text as a block, escaping those Markdown would
// read as structure.
func (l *pageLayout) lines(lines []string) {
	var kept []string
	for _, line := range lines {
		if strings.TrimSpace(line) != "" {
			kept = append(kept, escapeMarkdownLine(line))
		}
	}
	if len(kept) > 0 {
		l.block(strings.Join(kept, "\n"))
	}
}

// block writes a block, separated from what comes before by a blank line.
func (l *pageLayout) block(s string) {
	if l.runes > 0 && !strings.HasSuffix(l.text.String(), "\n\n") {
		l.write(strings.Repeat("\n", 2-trailingNewlines(l.text.String())))
	}
	l.write(s)
}

// write appends s.
func (l *pageLayout) write(s string) {
	l.text.WriteString(s)
	l.runes += utf8.RuneCountInString(s)
}

// trailingNewlines counts the line breaks s ends with, up to 2.
func trailingNewlines(s string) int {
	n := 0
	for n < 2 && strings.HasSuffix(s[:len(s)-n], "\n") {
		n++
	}
	return n
}

// escapeMarkdownLine puts a backslash before a line of extracted text that
// Markdown would read as a heading or a code fence.
func escapeMarkdownLine(line string) string {
	trimmed := strings.TrimLeft(line, " ")
	if len(line)-len(trimmed) > 3 {
		return line
	}
	if strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
		return line[:len(line)-len(trimmed)] + `\` + trimmed
	}
	return line
}
