package document

import (
	"bytes"
	"fmt"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// readHTML reads an HTML (or XHTML) page as one document: the Markdown of
// its main content (see mainContent and dropped) and its title, the text of
// its title element, else of its first h1. The page is decoded from the
// character set its byte-order mark or meta element names (UTF-8 when
// none does); XHTML is read by the same parser, which expands no entity a
// document type declares, so no entity can grow the text.
func (l Limits) readHTML(data []byte) (hierarchy.Document, error) {
	if len(data) > l.MaxHTMLBytes {
		return hierarchy.Document{}, fmt.Errorf("HTML page is %d bytes, over the %d-byte limit", len(data), l.MaxHTMLBytes)
	}
	text, err := decodeHTML(data)
	if err != nil {
		return hierarchy.Document{}, err
	}
	text = dropInternalSubset(text)
	if err := checkNesting(text, l.MaxDepth); err != nil {
		return hierarchy.Document{}, err
	}
	root, err := html.Parse(bytes.NewReader(text))
	if err != nil {
		return hierarchy.Document{}, fmt.Errorf("parsing HTML: %w", err)
	}
	c := converter{limit: l.MaxTextBytes}
	md, err := c.markdown(mainContent(root))
	if err != nil {
		return hierarchy.Document{}, err
	}
	title := pageTitle(root)
	if title == "" {
		title = MarkdownTitle(md)
	}
	return hierarchy.Document{Title: title, Text: md}, nil
}

// decodeHTML returns the page as UTF-8, refusing binary data (a NUL
// character once decoded).
func decodeHTML(data []byte) ([]byte, error) {
	enc, name, _ := charset.DetermineEncoding(data, "")
	if name != "utf-8" {
		decoded, err := enc.NewDecoder().Bytes(data)
		if err != nil {
			return nil, fmt.Errorf("decoding HTML from %s: %w", name, err)
		}
		data = decoded
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return nil, fmt.Errorf("binary file (NUL byte at offset %d)", i)
	}
	return data, nil
}

// dropInternalSubset removes the internal subset of an XHTML document type
// declaration (<!DOCTYPE html [ ... ]>), which the HTML parser would read
// as text. Its entities are never expanded: a reference to one stays as
// it is written.
func dropInternalSubset(data []byte) []byte {
	head := bytes.ToLower(data[:min(len(data), htmlSniffWindow)])
	at := bytes.Index(head, []byte("<!doctype"))
	if at < 0 {
		return data
	}
	open, end := bytes.IndexByte(head[at:], '['), bytes.IndexByte(head[at:], '>')
	if open < 0 || end < open {
		return data
	}
	closing := bytes.Index(data[at+open:], []byte("]>"))
	if closing < 0 {
		return data
	}
	out := append([]byte(nil), data[:at]...)
	out = append(out, "<!DOCTYPE html>"...)
	return append(out, data[at+open+closing+2:]...)
}

// pageTitle is the collapsed text of the page's first title element.
func pageTitle(root *html.Node) string {
	t := findFirst(root, func(n *html.Node) bool { return n.DataAtom == atom.Title })
	if t == nil {
		return ""
	}
	return collapse(textOf(t))
}

// findFirst returns the first element in document order, at most
// maxFindDepth deep, for which match is true, or nil.
func findFirst(root *html.Node, match func(*html.Node) bool) *html.Node {
	var found *html.Node
	walkElements(root, func(n *html.Node) bool {
		if found == nil && match(n) {
			found = n
		}
		return found == nil
	})
	return found
}

// walkElements calls visit with every element under root in document
// order, without recursion (the page's depth is bounded, but the walk
// needs no stack of its own); visit returns false to skip an element's
// descendants.
func walkElements(root *html.Node, visit func(*html.Node) bool) {
	n := root
	for n != nil {
		descend := n.Type != html.ElementNode || visit(n)
		switch {
		case descend && n.FirstChild != nil:
			n = n.FirstChild
		default:
			for n != root && n.NextSibling == nil {
				n = n.Parent
			}
			if n == root {
				return
			}
			n = n.NextSibling
		}
	}
}

// textOf is all the text under n, as it is.
func textOf(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return b.String()
}

// collapse turns every run of white space into one space and trims the
// ends.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
