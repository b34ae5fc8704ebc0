package document

import (
	"encoding/xml"
	"strconv"
	"strings"
)

// docxConverter turns a Word document's body into Markdown blocks.
// Consecutive list items make one block, an item a line.
type docxConverter struct {
	styles *docxStyles
	limits Limits
	blocks []string
	size   int
	title  string // the first Title paragraph, else the first heading
	titled bool   // title is a Title paragraph's
	paras  []*docxParagraph
	tables []*docxTable
	counts map[string]int // numbering id and level -> items so far
	inList bool           // the last block is a list
}

// docxParagraph is a paragraph being read.
type docxParagraph struct {
	text    strings.Builder
	style   string
	outline int // outline level + 1, 0 when none
	numID   string
	ilvl    int
	list    bool
}

// docxTable is a table being read: its rows, and the cells of the row
// under way.
type docxTable struct {
	rows  []string
	cells []string
}

func newDocxConverter(styles *docxStyles, l Limits) *docxConverter {
	return &docxConverter{styles: styles, limits: l, counts: map[string]int{}}
}

// convert reads the body. Text is taken from w:t elements only (deleted
// text and field instructions are not text), and from the first choice of
// alternate content alone (its fallback repeats it).
func (c *docxConverter) convert(data []byte) error {
	return walkXML(data, c.limits.MaxDepth, func(tok xml.Token, open []xml.StartElement) error {
		if inFallback(open) {
			return nil
		}
		switch t := tok.(type) {
		case xml.StartElement:
			c.start(t)
		case xml.EndElement:
			c.end(t)
		case xml.CharData:
			if n := len(open); n > 0 && isWord(open[n-1].Name, "t") && len(c.paras) > 0 {
				c.paras[len(c.paras)-1].text.Write(t)
				return c.grow(len(t))
			}
		}
		return nil
	})
}

// inFallback reports whether the token lies in mc:Fallback content.
func inFallback(open []xml.StartElement) bool {
	for _, e := range open {
		if e.Name.Local == "Fallback" {
			return true
		}
	}
	return false
}

// start handles a start element.
func (c *docxConverter) start(e xml.StartElement) {
	p := c.current()
	switch {
	case isWord(e.Name, "p"):
		c.paras = append(c.paras, &docxParagraph{})
	case isWord(e.Name, "tbl"):
		c.tables = append(c.tables, &docxTable{})
	case isWord(e.Name, "tc") && len(c.tables) > 0:
		t := c.tables[len(c.tables)-1]
		t.cells = append(t.cells, "")
	case p == nil:
	case isWord(e.Name, "pStyle"):
		p.style = wordAttr(e, "val")
	case isWord(e.Name, "outlineLvl"):
		if l, err := strconv.Atoi(wordAttr(e, "val")); err == nil && l >= 0 && l < 9 {
			p.outline = l + 1
		}
	case isWord(e.Name, "numId"):
		p.numID, p.list = wordAttr(e, "val"), wordAttr(e, "val") != "0"
	case isWord(e.Name, "ilvl"):
		p.ilvl, _ = strconv.Atoi(wordAttr(e, "val"))
	case isWord(e.Name, "tab"):
		p.text.WriteByte('\t')
	case isWord(e.Name, "br"), isWord(e.Name, "cr"):
		p.text.WriteByte('\n')
	}
}

// current is the paragraph under way, or nil.
func (c *docxConverter) current() *docxParagraph {
	if len(c.paras) == 0 {
		return nil
	}
	return c.paras[len(c.paras)-1]
}

// end handles an end element.
func (c *docxConverter) end(e xml.EndElement) {
	switch {
	case isWord(e.Name, "p") && len(c.paras) > 0:
		p := c.paras[len(c.paras)-1]
		c.paras = c.paras[:len(c.paras)-1]
		c.paragraph(p)
	case isWord(e.Name, "tr") && len(c.tables) > 0:
		c.endRow(c.tables[len(c.tables)-1])
	case isWord(e.Name, "tbl") && len(c.tables) > 0:
		t := c.tables[len(c.tables)-1]
		c.tables = c.tables[:len(c.tables)-1]
		c.addText(strings.Join(t.rows, "\n"))
	}
}

// paragraph places a finished paragraph: into the table cell under way,
// else as a heading, a list item or a paragraph block.
func (c *docxConverter) paragraph(p *docxParagraph) {
	text := strings.TrimSpace(p.text.String())
	if len(c.tables) > 0 {
		c.cellText(c.tables[len(c.tables)-1], collapse(text))
		return
	}
	if text == "" {
		return
	}
	if level, ok := c.headingLevel(p); ok {
		c.heading(level, collapse(text))
		return
	}
	if c.isList(p) {
		c.addListItem(c.listItem(p, text))
		return
	}
	c.counts = map[string]int{} // a paragraph between lists restarts their numbers
	c.addText(escapeLines(text))
}

// headingLevel is the level of a heading paragraph: its outline level,
// else its style's (Title is 0).
func (c *docxConverter) headingLevel(p *docxParagraph) (int, bool) {
	if p.outline > 0 {
		return p.outline, true
	}
	level, ok := c.styles.level[p.style]
	return level, ok
}

// heading adds a heading block; a Title paragraph is a level-1 heading,
// and the first Title (else the first heading) is kept as the title.
func (c *docxConverter) heading(level int, text string) {
	switch {
	case level == 0 && !c.titled:
		c.title, c.titled = text, true
	case c.title == "":
		c.title = text
	}
	c.addText(strings.Repeat("#", min(max(level, 1), 6)) + " " + text)
}

// isList reports whether a paragraph is a list item: it has a numbering,
// or its style does.
func (c *docxConverter) isList(p *docxParagraph) bool {
	if p.numID == "" {
		if num, ok := c.styles.listNum[p.style]; ok {
			p.numID, p.list = num, num != "0"
		}
	}
	return p.list
}

// listItem is a list paragraph as a Markdown item, indented two spaces
// per list level: "1. " for a numbered level (counting within the
// numbering and level), "- " otherwise.
func (c *docxConverter) listItem(p *docxParagraph, text string) string {
	ilvl := min(max(p.ilvl, 0), 8)
	marker := "- "
	if c.styles.numbered(p.numID, ilvl) {
		key := p.numID + "/" + strconv.Itoa(ilvl)
		c.counts[key]++
		for deeper := ilvl + 1; deeper < 9; deeper++ {
			delete(c.counts, p.numID+"/"+strconv.Itoa(deeper))
		}
		marker = strconv.Itoa(c.counts[key]) + ". "
	}
	indent := strings.Repeat("  ", ilvl)
	return indent + marker + strings.ReplaceAll(collapseLines(text), "\n", "\n"+indent+strings.Repeat(" ", len(marker)))
}

// cellText adds a paragraph's text to the table cell under way.
func (c *docxConverter) cellText(t *docxTable, text string) {
	if text == "" {
		return
	}
	if len(t.cells) == 0 {
		t.cells = append(t.cells, "")
	}
	last := &t.cells[len(t.cells)-1]
	if *last != "" {
		*last += " "
	}
	*last += strings.ReplaceAll(text, "|", `\|`)
}

// endRow turns the row's cells into a line "| a | b |".
func (c *docxConverter) endRow(t *docxTable) {
	cells := t.cells
	t.cells = nil
	if strings.TrimSpace(strings.Join(cells, "")) == "" {
		return
	}
	t.rows = append(t.rows, "| "+strings.Join(cells, " | ")+" |")
}

// addText adds a block.
func (c *docxConverter) addText(block string) {
	if block != "" {
		c.blocks = append(c.blocks, block)
		c.inList = false
	}
}

// addListItem adds a list item to the list under way, or starts one.
func (c *docxConverter) addListItem(item string) {
	if c.inList {
		c.blocks[len(c.blocks)-1] += "\n" + item
		return
	}
	c.addText(item)
	c.inList = true
}

// grow counts n more bytes of text, failing past the limit.
func (c *docxConverter) grow(n int) error {
	if c.size += n; c.size > c.limits.MaxTextBytes {
		return textTooLong(c.limits.MaxTextBytes)
	}
	return nil
}

// markdown is the converted text.
func (c *docxConverter) markdown() string {
	return strings.Join(c.blocks, "\n\n") + "\n"
}

// collapseLines collapses white space within each line and drops blank
// lines.
func collapseLines(text string) string {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if l = collapse(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// escapeLines collapses white space within each line and escapes the
// lines Markdown would read as structure.
func escapeLines(text string) string {
	lines := strings.Split(collapseLines(text), "\n")
	for i, l := range lines {
		lines[i] = escapeMarkdownLine(l)
	}
	return strings.Join(lines, "\n")
}
