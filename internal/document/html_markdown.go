package document

import (
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// converter turns HTML elements into Markdown-shaped text: headings h1-h6
// become ATX headings, list items lines of their own ("- " or "1. "),
// table rows lines of cells separated by " | ", pre blocks fenced code
// blocks with their lines as they are, and other blocks paragraphs
// separated by a blank line; elsewhere white space collapses to one
// space. Links, emphasis and other inline elements keep their text alone.
type converter struct {
	limit int // bytes of Markdown at most
	size  int // bytes of Markdown made so far
	err   error
}

// markdown converts nodes, in order, to one Markdown text.
func (c *converter) markdown(nodes []*html.Node) (string, error) {
	var out blocks
	for _, n := range nodes {
		c.children(n, &out)
	}
	out.flush()
	if c.err != nil {
		return "", c.err
	}
	return strings.Join(out.done, "\n\n") + "\n", nil
}

// blocks gathers the blocks of one container and the paragraph under way.
type blocks struct {
	done  []string
	line  strings.Builder
	space bool // white space was met since the last word
}

// text adds inline text, collapsing white space.
func (b *blocks) text(s string) {
	for _, r := range s {
		if unicode.IsSpace(r) {
			b.space = true
			continue
		}
		if b.space && b.line.Len() > 0 {
			last := b.line.String()[b.line.Len()-1]
			if last != '\n' {
				b.line.WriteByte(' ')
			}
		}
		b.space = false
		b.line.WriteRune(r)
	}
}

// lineBreak ends the current line of the paragraph under way.
func (b *blocks) lineBreak() {
	if b.line.Len() > 0 {
		b.line.WriteByte('\n')
	}
	b.space = false
}

// flush ends the paragraph under way, escaping the lines Markdown would
// read as structure.
func (b *blocks) flush() {
	if p := strings.TrimSpace(b.line.String()); p != "" {
		lines := strings.Split(p, "\n")
		for i, l := range lines {
			lines[i] = escapeMarkdownLine(strings.TrimSpace(l))
		}
		b.done = append(b.done, strings.Join(lines, "\n"))
	}
	b.line.Reset()
	b.space = false
}

// add ends the paragraph under way and adds a block after it.
func (b *blocks) add(block string) {
	b.flush()
	if block != "" {
		b.done = append(b.done, block)
	}
}

// children converts n's children into out.
func (c *converter) children(n *html.Node, out *blocks) {
	for ch := n.FirstChild; ch != nil && c.err == nil; ch = ch.NextSibling {
		c.node(ch, out)
	}
}

// node converts one node into out.
func (c *converter) node(n *html.Node, out *blocks) {
	switch n.Type {
	case html.TextNode:
		c.grow(len(n.Data))
		out.text(n.Data)
	case html.ElementNode:
		if !dropped(n) && !isPermalink(n) {
			c.element(n, out)
		}
	}
}

// element converts an element that is kept.
func (c *converter) element(n *html.Node, out *blocks) {
	switch {
	case headingAtoms[n.DataAtom]:
		if text := collapse(c.inline(n)); text != "" {
			out.add(strings.Repeat("#", headingLevel(n.DataAtom)) + " " + text)
		}
	case n.DataAtom == atom.Ul || n.DataAtom == atom.Ol:
		out.add(c.list(n))
	case n.DataAtom == atom.Pre:
		text := textOf(n)
		c.grow(len(text))
		out.add(fence(text, codeLanguage(n)))
	case n.DataAtom == atom.Table:
		out.add(c.table(n))
	case n.DataAtom == atom.Blockquote:
		out.add(prefixLines(c.container(n), "> "))
	case n.DataAtom == atom.Br:
		out.lineBreak()
	case blockElements[n.DataAtom]:
		out.flush()
		c.children(n, out)
		out.flush()
	default:
		c.children(n, out)
	}
}

// blockElements are elements that start and end a paragraph.
var blockElements = atomSet(atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Header,
	atom.Footer, atom.Figure, atom.Figcaption, atom.Address, atom.Details, atom.Summary, atom.Center,
	atom.Fieldset, atom.Hgroup, atom.Dl, atom.Dt, atom.Dd, atom.Li, atom.Hr, atom.Caption, atom.Tr,
	atom.Td, atom.Th, atom.Body, atom.Html, atom.Dialog, atom.Search, atom.Legend, atom.Listing)

// container converts n's children as blocks of their own, joined by blank
// lines.
func (c *converter) container(n *html.Node) string {
	var inner blocks
	c.children(n, &inner)
	inner.flush()
	return strings.Join(inner.done, "\n\n")
}

// inline converts n's children and returns their text on one line.
func (c *converter) inline(n *html.Node) string {
	return collapse(c.container(n))
}

// list converts a ul or ol: one line per item ("- " or "1. ", counting
// from its start attribute), the lines of an item's blocks indented under
// it, nested lists included.
func (c *converter) list(n *html.Node) string {
	number := 1
	if v, err := strconv.Atoi(attr(n, "start")); err == nil {
		number = v
	}
	var items []string
	for ch := n.FirstChild; ch != nil && c.err == nil; ch = ch.NextSibling {
		if ch.Type != html.ElementNode || dropped(ch) {
			continue
		}
		marker := "- "
		if n.DataAtom == atom.Ol {
			marker = strconv.Itoa(number) + ". "
			number++
		}
		body := strings.ReplaceAll(c.container(ch), "\n\n", "\n")
		if body == "" {
			continue
		}
		items = append(items, marker+indentAfterFirst(body, len(marker)))
	}
	return strings.Join(items, "\n")
}

// table converts a table: one line per row of its own (not of tables
// nested in its cells), its cells' text separated by " | ".
func (c *converter) table(n *html.Node) string {
	var rows []string
	var visit func(*html.Node)
	visit = func(p *html.Node) {
		for ch := p.FirstChild; ch != nil && c.err == nil; ch = ch.NextSibling {
			switch {
			case ch.Type != html.ElementNode || dropped(ch):
			case ch.DataAtom == atom.Tr:
				if row := c.row(ch); row != "" {
					rows = append(rows, row)
				}
			case ch.DataAtom == atom.Caption:
				rows = append(rows, c.inline(ch))
			case tablePartSet[ch.DataAtom]:
				visit(ch)
			}
		}
	}
	visit(n)
	return strings.Join(rows, "\n")
}

// row converts one table row: "| a | b |", pipes in cells escaped.
func (c *converter) row(tr *html.Node) string {
	var cells []string
	for ch := tr.FirstChild; ch != nil; ch = ch.NextSibling {
		if ch.DataAtom == atom.Td || ch.DataAtom == atom.Th {
			cells = append(cells, strings.ReplaceAll(c.inline(ch), "|", `\|`))
		}
	}
	if len(cells) == 0 || strings.TrimSpace(strings.Join(cells, "")) == "" {
		return ""
	}
	return "| " + strings.Join(cells, " | ") + " |"
}

// grow counts n more bytes of text, failing past the limit.
func (c *converter) grow(n int) {
	c.size += n
	if c.size > c.limit && c.err == nil {
		c.err = textTooLong(c.limit)
	}
}

// isPermalink reports whether n is a link whose only text is a pilcrow,
// section sign or hash: the anchor documentation tools put beside
// headings.
func isPermalink(n *html.Node) bool {
	if n.DataAtom != atom.A {
		return false
	}
	switch strings.TrimSpace(textOf(n)) {
	case "¶", "§", "#", "🔗":
		return true
	}
	return false
}

// headingLevel is 1 for h1 to 6 for h6.
func headingLevel(a atom.Atom) int {
	return int(a.String()[1] - '0')
}

// codeLanguage is the language a pre block's code element names in its
// class ("language-go" or "lang-go"), or "".
func codeLanguage(pre *html.Node) string {
	for n := range pre.Descendants() {
		for _, class := range strings.Fields(attr(n, "class")) {
			for _, prefix := range []string{"language-", "lang-"} {
				if lang, ok := strings.CutPrefix(class, prefix); ok && isLanguageName(lang) {
					return lang
				}
			}
		}
	}
	return ""
}

// isLanguageName reports whether s is letters, digits, '+', '-' and '#' only.
func isLanguageName(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("+-#_", r)
	}) < 0
}

// fence makes a fenced code block of text, its lines as they are, with a
// fence longer than any run of backticks inside it.
func fence(text, lang string) string {
	text = strings.TrimRight(strings.TrimLeft(text, "\n"), " \t\n")
	if text == "" {
		return ""
	}
	longest, run := 0, 0
	for _, r := range text {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	return f + lang + "\n" + text + "\n" + f
}

// prefixLines puts prefix before every line of s.
func prefixLines(s, prefix string) string {
	if s == "" {
		return ""
	}
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// indentAfterFirst indents every line of s but the first by n spaces.
func indentAfterFirst(s string, n int) string {
	return strings.ReplaceAll(s, "\n", "\n"+strings.Repeat(" ", n))
}
