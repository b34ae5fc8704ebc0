package hierarchy

import "unicode/utf8"

// DocumentSplitter turns a document into parents and children. Builder is the
// parent-child splitter; FlatChildren and FlatParents index one level only,
// as evaluation baselines.
type DocumentSplitter interface {
	Build(doc Document) Result
}

// FlatChildren indexes the children of a Builder and returns each child as
// its own parent: classic flat small-chunk retrieval.
type FlatChildren struct{ Builder *Builder }

// Build returns one single-child parent per child of the document.
func (f FlatChildren) Build(doc Document) Result {
	res := f.Builder.Build(doc)
	headings := make(map[string][]string, len(res.Parents))
	for _, p := range res.Parents {
		headings[p.ID] = p.HeadingPath
	}
	out := Result{Parents: make([]Parent, len(res.Children))}
	for i, c := range res.Children {
		out.Parents[i] = selfParent(c.ID, doc, i, c.Text, c.Start)
		out.Parents[i].HeadingPath = headings[c.ParentID]
		out.Parents[i].Pages = PagesOf(doc.PageStarts, c.Start, c.Text)
		c.ParentID, c.ParentStart = c.ID, 0
		out.Children = append(out.Children, c)
	}
	return out
}

// FlatParents indexes the parents of a Builder and returns each parent as
// its own only child: classic flat large-chunk retrieval.
type FlatParents struct{ Builder *Builder }

// Build returns every parent of the document, each its own child.
func (f FlatParents) Build(doc Document) Result {
	res := f.Builder.Build(doc)
	var out Result
	for i, p := range res.Parents {
		self := selfParent(p.ID, doc, i, p.Text, p.Start)
		self.HeadingPath, self.Pages = p.HeadingPath, p.Pages
		out.Parents = append(out.Parents, self)
		out.Children = append(out.Children, Child{
			ID: p.ID, ParentID: p.ID, DocID: doc.ID, Ordinal: i, Text: p.Text, Start: p.Start,
		})
	}
	return out
}

// selfParent makes a parent whose single child spans all of it.
func selfParent(id string, doc Document, ordinal int, text string, start int) Parent {
	return Parent{
		ID: id, DocID: doc.ID, Title: doc.Title, Ordinal: ordinal, Text: text, Start: start,
		Children: []Span{{ID: id, Start: 0, End: utf8.RuneCountInString(text)}},
		Metadata: doc.Metadata,
	}
}
