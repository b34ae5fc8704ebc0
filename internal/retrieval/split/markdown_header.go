package split

import (
	"maps"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// HeaderToSplitOn is one entry of headers_to_split_on: a line that starts
// with Marker followed by a space (or is Marker alone) is a header, and
// its text is recorded in the metadata under Name.
type HeaderToSplitOn struct {
	Marker string // e.g. "#", "##"
	Name   string // e.g. "Header 1"
}

// MarkdownHeaderOptions configures a MarkdownHeaderSplitter.
type MarkdownHeaderOptions struct {
	// Headers are the headers to split on (headers_to_split_on).
	Headers []HeaderToSplitOn
	// ReturnEachLine returns one section per line instead of aggregating
	// the lines that share metadata (return_each_line).
	ReturnEachLine bool
	// KeepHeaders keeps header lines in the section text; the zero value
	// strips them, LangChain's default (strip_headers=True).
	KeepHeaders bool
	// CustomHeaderLevels maps markers that enclose a header, such as "**"
	// for **Header**, to their level (custom_header_patterns). Other
	// markers' level is their count of '#'.
	CustomHeaderLevels map[string]int
}

// Section is one piece of a Markdown text with the headers it falls under
// (LangChain's Document from MarkdownHeaderTextSplitter): Metadata maps
// each header's Name to its text.
type Section struct {
	Text     string
	Metadata map[string]string
}

// MarkdownHeaderSplitter is LangChain's MarkdownHeaderTextSplitter: it
// splits a Markdown text at the configured headers, outside fenced code
// blocks, and returns sections with their header metadata, byte for byte as
// LangChain's split_text does (line numbers are not reported). It is
// immutable and safe for concurrent use.
type MarkdownHeaderSplitter struct {
	headers []HeaderToSplitOn // longest marker first
	each    bool
	strip   bool
	custom  map[string]int
}

// NewMarkdownHeaderSplitter returns a splitter for o. Headers are tried
// longest marker first (in code points, ties in the given order), as
// LangChain sorts them.
func NewMarkdownHeaderSplitter(o MarkdownHeaderOptions) *MarkdownHeaderSplitter {
	hs := append([]HeaderToSplitOn(nil), o.Headers...)
	sort.SliceStable(hs, func(i, j int) bool {
		return utf8.RuneCountInString(hs[i].Marker) > utf8.RuneCountInString(hs[j].Marker)
	})
	return &MarkdownHeaderSplitter{headers: hs, each: o.ReturnEachLine, strip: !o.KeepHeaders, custom: maps.Clone(o.CustomHeaderLevels)}
}

type mdLine struct {
	content  string
	metadata map[string]string
}

type mdHeader struct {
	level int
	name  string
	data  string
}

// headerScanner walks the lines of a Markdown text as LangChain's
// split_text does: it tracks fenced code blocks and the stack of headers
// the current line falls under.
type headerScanner struct {
	m      *MarkdownHeaderSplitter
	stack  []mdHeader
	inCode bool
	fence  string
}

// scan classifies one line, already stripped of Python white space and
// non-printable characters. It reports whether the line is inside (or
// opens or closes) a fenced code block; otherwise, when the line is a
// header, it returns that header, now on top of the stack, and the headers
// it popped off the stack, top first.
func (s *headerScanner) scan(line string) (h *mdHeader, popped []mdHeader, inCode bool) {
	if !s.inCode {
		if strings.HasPrefix(line, "```") && strings.Count(line, "```") == 1 {
			s.inCode, s.fence = true, "```"
		} else if strings.HasPrefix(line, "~~~") {
			s.inCode, s.fence = true, "~~~"
		}
	} else if strings.HasPrefix(line, s.fence) {
		s.inCode, s.fence = false, ""
	}
	if s.inCode {
		return nil, nil, true
	}
	for _, hd := range s.m.headers {
		sep := hd.Marker
		standard := strings.HasPrefix(line, sep) && (len(line) == len(sep) || line[len(sep)] == ' ')
		custom := s.m.isCustomHeader(line, sep)
		if !standard && !custom {
			continue
		}
		level, ok := s.m.custom[sep]
		if !ok {
			level = strings.Count(sep, "#")
		}
		for len(s.stack) > 0 && s.stack[len(s.stack)-1].level >= level {
			popped = append(popped, s.stack[len(s.stack)-1])
			s.stack = s.stack[:len(s.stack)-1]
		}
		var data string
		if custom {
			data = TrimPythonSpace(line[len(sep) : len(line)-len(sep)])
		} else {
			data = TrimPythonSpace(line[len(sep):])
		}
		s.stack = append(s.stack, mdHeader{level: level, name: hd.Name, data: data})
		return &s.stack[len(s.stack)-1], popped, false
	}
	return nil, nil, false
}

// cleanLine is the line LangChain inspects: stripped of Python white space
// and of non-printable characters.
func cleanLine(raw string) string { return printableOnly(TrimPythonSpace(raw)) }

// SplitText is LangChain's MarkdownHeaderTextSplitter.split_text. Lines are
// stripped of Python whitespace and of non-printable characters; empty
// lines end a section's paragraph; lines of a section are joined with
// "  \n" when aggregated.
func (m *MarkdownHeaderSplitter) SplitText(text string) []Section {
	var (
		lines       []mdLine
		content     []string
		currentMeta = map[string]string{}
		initialMeta = map[string]string{}
		scanner     = headerScanner{m: m}
	)
	flush := func() {
		lines = append(lines, mdLine{content: strings.Join(content, "\n"), metadata: maps.Clone(currentMeta)})
		content = content[:0]
	}
	for _, raw := range strings.Split(text, "\n") {
		line := cleanLine(raw)
		h, popped, inCode := scanner.scan(line)
		switch {
		case inCode:
			content = append(content, line)
			continue
		case h != nil:
			for _, p := range popped {
				delete(initialMeta, p.name)
			}
			initialMeta[h.name] = h.data
			if len(content) > 0 {
				flush()
			}
			if !m.strip {
				content = append(content, line)
			}
		case line != "":
			content = append(content, line)
		case len(content) > 0:
			flush()
		}
		currentMeta = maps.Clone(initialMeta)
	}
	if len(content) > 0 {
		flush()
	}

	if m.each {
		out := make([]Section, len(lines))
		for i, l := range lines {
			out[i] = Section{Text: l.content, Metadata: l.metadata}
		}
		return out
	}
	var agg []mdLine
	for _, l := range lines {
		if n := len(agg); n > 0 {
			last := &agg[n-1]
			if maps.Equal(last.metadata, l.metadata) {
				last.content += "  \n" + l.content
				continue
			}
			if len(last.metadata) < len(l.metadata) && lastLineIsHeader(last.content) && !m.strip {
				last.content += "  \n" + l.content
				last.metadata = l.metadata
				continue
			}
		}
		agg = append(agg, l)
	}
	out := make([]Section, len(agg))
	for i, l := range agg {
		out[i] = Section{Text: l.content, Metadata: maps.Clone(l.metadata)}
	}
	return out
}

// lastLineIsHeader reports whether the last line of s starts with '#'.
func lastLineIsHeader(s string) bool {
	last := s[strings.LastIndexByte(s, '\n')+1:]
	return last != "" && last[0] == '#'
}

// isCustomHeader is LangChain's _is_custom_header: line matches
// ^S(?!S)(.+?)(?<!S)S$ for a custom marker S and the text between the
// markers, stripped, has a character that is neither a space nor in S.
func (m *MarkdownHeaderSplitter) isCustomHeader(line, sep string) bool {
	if _, ok := m.custom[sep]; !ok || sep == "" {
		return false
	}
	if len(line) < 2*len(sep)+1 || !strings.HasPrefix(line, sep) || !strings.HasSuffix(line, sep) {
		return false
	}
	inner := line[len(sep) : len(line)-len(sep)]
	if strings.HasPrefix(line[len(sep):], sep) || strings.HasSuffix(line[:len(line)-len(sep)], sep) || strings.Contains(inner, "\n") {
		return false
	}
	content := TrimPythonSpace(inner)
	if content == "" {
		return false
	}
	for _, c := range content {
		if c != ' ' && !strings.ContainsRune(sep, c) {
			return true
		}
	}
	return false
}

// printableOnly drops the characters for which Python's str.isprintable()
// is false: every character outside the letter, mark, number, punctuation
// and symbol categories except the ASCII space.
func printableOnly(s string) string {
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		if unicode.IsPrint(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}
