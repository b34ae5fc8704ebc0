package document

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// wordNamespaces are the namespaces of WordprocessingML: transitional and
// strict Office Open XML.
var wordNamespaces = map[string]bool{
	"http://schemas.openxmlformats.org/wordprocessingml/2006/main": true,
	"http://purl.oclc.org/ooxml/wordprocessingml/main":             true,
}

// isWord reports whether name is the WordprocessingML element local.
func isWord(name xml.Name, local string) bool {
	return name.Local == local && wordNamespaces[name.Space]
}

// wordAttr is the value of a WordprocessingML attribute (w:val), or "".
func wordAttr(e xml.StartElement, local string) string {
	for _, a := range e.Attr {
		if a.Name.Local == local && (wordNamespaces[a.Name.Space] || a.Name.Space == "") {
			return a.Value
		}
	}
	return ""
}

// walkXML calls fn with every token of data and the elements open around
// it (the token's own start element included), refusing elements nested
// deeper than maxDepth and XML that is not well formed (an entity other
// than XML's own five is an error: none is ever expanded).
func walkXML(data []byte, maxDepth int, fn func(tok xml.Token, open []xml.StartElement) error) error {
	d := xml.NewDecoder(bytes.NewReader(data))
	var open []xml.StartElement
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("malformed XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(open) >= maxDepth {
				return fmt.Errorf("XML elements nest deeper than %d (the limit)", maxDepth)
			}
			open = append(open, t.Copy())
		case xml.EndElement:
			if err := fn(t, open); err != nil {
				return err
			}
			open = open[:len(open)-1]
			continue
		}
		if err := fn(tok, open); err != nil {
			return err
		}
	}
}

// docxStyles is what the style and numbering parts say about paragraphs.
type docxStyles struct {
	level   map[string]int    // style id -> heading level (0 for Title)
	listNum map[string]string // style id -> the numbering its paragraphs take
	ordered map[string][]bool // numbering id -> per list level, whether numbered
	formats map[string][]bool // abstract numbering id -> per level, whether numbered
	numbers map[string]string // numbering id -> abstract numbering id
}

func newDocxStyles() *docxStyles {
	return &docxStyles{level: map[string]int{}, listNum: map[string]string{}, ordered: map[string][]bool{},
		formats: map[string][]bool{}, numbers: map[string]string{}}
}

// readStyles reads the heading level of every paragraph style: Title is
// 0, "heading N" is N, and a style with an outline level L is L+1; and
// the numbering of list styles.
func (s *docxStyles) readStyles(data []byte) error {
	var id string
	return walkXML(data, 64, func(tok xml.Token, open []xml.StartElement) error {
		e, ok := tok.(xml.StartElement)
		if !ok {
			return nil
		}
		switch {
		case isWord(e.Name, "style"):
			id = wordAttr(e, "styleId")
		case isWord(e.Name, "name") && id != "":
			if level, ok := headingStyleLevel(wordAttr(e, "val")); ok {
				s.level[id] = level
			}
		case isWord(e.Name, "outlineLvl") && id != "":
			if _, named := s.level[id]; !named {
				if l, err := strconv.Atoi(wordAttr(e, "val")); err == nil && l >= 0 && l < 9 {
					s.level[id] = l + 1
				}
			}
		case isWord(e.Name, "numId") && id != "":
			s.listNum[id] = wordAttr(e, "val")
		}
		return nil
	})
}

// headingStyleLevel reads a style name: "Title" is level 0, "heading N"
// (any case) level N.
func headingStyleLevel(name string) (int, bool) {
	lower := strings.ToLower(strings.TrimSpace(name))
	if lower == "title" {
		return 0, true
	}
	if n, ok := strings.CutPrefix(lower, "heading "); ok {
		if level, err := strconv.Atoi(n); err == nil && level >= 1 && level <= 9 {
			return level, true
		}
	}
	return 0, false
}

// readNumbering reads which list levels are numbered (any format but
// bullet and none) for every numbering.
func (s *docxStyles) readNumbering(data []byte) error {
	var abstract, num string
	level := -1
	err := walkXML(data, 64, func(tok xml.Token, open []xml.StartElement) error {
		e, ok := tok.(xml.StartElement)
		if !ok {
			return nil
		}
		switch {
		case isWord(e.Name, "abstractNum"):
			abstract, num = wordAttr(e, "abstractNumId"), ""
		case isWord(e.Name, "lvl"):
			level, _ = strconv.Atoi(wordAttr(e, "ilvl"))
		case isWord(e.Name, "numFmt") && abstract != "" && level >= 0 && level < 9:
			f := s.formats[abstract]
			for len(f) <= level {
				f = append(f, false)
			}
			f[level] = wordAttr(e, "val") != "bullet" && wordAttr(e, "val") != "none"
			s.formats[abstract] = f
		case isWord(e.Name, "num"):
			num, abstract = wordAttr(e, "numId"), ""
		case isWord(e.Name, "abstractNumId") && num != "":
			s.numbers[num] = wordAttr(e, "val")
		}
		return nil
	})
	for num, abstract := range s.numbers {
		s.ordered[num] = s.formats[abstract]
	}
	return err
}

// numbered reports whether level ilvl of numbering num counts (1., 2.)
// rather than bullets.
func (s *docxStyles) numbered(num string, ilvl int) bool {
	f := s.ordered[num]
	return ilvl >= 0 && ilvl < len(f) && f[ilvl]
}
