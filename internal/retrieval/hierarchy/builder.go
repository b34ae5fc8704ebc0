package hierarchy

import (
	"slices"
	"unicode/utf8"

	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/fieldhash"
	"github.com/parentrag/parentrag/internal/retrieval/split"
	"github.com/parentrag/parentrag/internal/utf8word"
)

// Builder splits documents. It is safe for concurrent use when its
// splitters are.
type Builder struct {
	// Strategy chooses how documents are split; empty (or a strategy not
	// declared) is ParentChild, the default.
	Strategy chunking.Strategy
	// Revision is the policy revision; it enters every id.
	Revision string
	// Parent splits documents into parents (ParentChild only).
	Parent Splitter
	// Child splits parents into children; with SentenceWindow it splits
	// sentences that are longer than a child.
	Child Splitter
	// Window is the number of sentences on each side (SentenceWindow only).
	Window int
	// Router, when set, chooses other splitters for some documents (by
	// their format or language); the others use Parent and Child.
	Router Router
	// Shape, when set, is the levels a document is split into, largest
	// first (ParentChild only); nil is TwoLevels.
	Shape []Level
	// Section splits a document into sections (a Section level only).
	Section Splitter
}

// Levels are the splitters that make a document's levels.
type Levels struct {
	// Parent splits a document, or a section, into parents.
	Parent Splitter
	// Child splits a parent into children (a long sentence, with
	// SentenceWindow or a Sentence level).
	Child Splitter
	// Section splits a document into sections, with a Section level.
	Section Splitter
}

// Router chooses the splitters of each document.
type Router interface {
	// Levels returns the splitters for doc, or ok false when the
	// Builder's own apply.
	Levels(doc Document) (levels Levels, ok bool)
}

// levelsFor returns the splitters that split doc.
func (b *Builder) levelsFor(doc Document) Levels {
	if b.Router != nil {
		if lv, ok := b.Router.Levels(doc); ok {
			return lv
		}
	}
	return Levels{Parent: b.Parent, Child: b.Child, Section: b.Section}
}

// builds is how each declared strategy splits a document.
var builds = map[chunking.Strategy]func(*Builder, Document) Result{
	chunking.ParentChild:    (*Builder).buildShape,
	chunking.SentenceWindow: (*Builder).buildWindows,
}

// Build splits one document with the builder's strategy (ParentChild when
// it is empty or not declared). Every child's ParentID names a parent of
// the same Result, every parent lists exactly its children's spans, and
// the same document and builder always yield the same ids.
func (b *Builder) Build(doc Document) Result {
	build, ok := builds[b.Strategy]
	if !ok {
		build = builds[chunking.ParentChild]
	}
	return build(b, doc)
}

// buildShape splits the document into the levels of the builder's shape:
// parents and children, or those of Shape.
func (b *Builder) buildShape(doc Document) Result {
	if !b.IsTwoLevels() {
		return b.buildLevels(doc)
	}
	return b.buildParentChild(doc)
}

// buildParentChild splits the document into parents, then each parent into
// children, as LangChain's ParentDocumentRetriever does. A parent's spans
// are allocated once, at their number (nil for none). The document's
// children are appended as each parent is split, so that the split
// children of one parent at a time are held, not those of every parent.
func (b *Builder) buildParentChild(doc Document) Result {
	var res Result
	ids := fieldhash.New()
	lv := b.levelsFor(doc)
	for i, pc := range parentChunks(lv.Parent, doc.Text) {
		parent := b.newParent(ids, doc, i, pc.Chunk)
		parent.HeadingPath = pc.Headings
		children := lv.Child.Split(pc.Text)
		parent.Children = slices.Grow(parent.Children, len(children))
		for _, cc := range children {
			child := b.newChild(ids, doc, &parent, len(res.Children), cc.Text, cc.Start)
			res.Children = append(res.Children, child)
		}
		res.Parents = append(res.Parents, parent)
	}
	return res
}

// parentChunks splits a document's text into parents with splitter, with
// their heading paths when the splitter knows them.
func parentChunks(splitter Splitter, text string) []split.HeadedChunk {
	if hs, ok := splitter.(HeadedSplitter); ok {
		return hs.SplitHeaded(text)
	}
	chunks := splitter.Split(text)
	out := make([]split.HeadedChunk, len(chunks))
	for i, c := range chunks {
		out[i] = split.HeadedChunk{Chunk: c}
	}
	return out
}

// buildWindows makes each sentence (split further when longer than a
// child) a child whose parent is the text from the window's first sentence
// to its last, clipped at the document's edges. A negative Window counts as
// 0 (the sentence alone).
func (b *Builder) buildWindows(doc Document) Result {
	sentences := split.Sentences(doc.Text)
	runes := []rune(doc.Text)
	w := max(0, b.Window)
	var res Result
	ids := fieldhash.New()
	child := b.levelsFor(doc).Child
	for i, s := range sentences {
		first, last := max(0, i-w), min(len(sentences)-1, i+w)
		from := sentences[first].Start
		to := sentences[last].Start + utf8.RuneCountInString(sentences[last].Text)
		window := split.Chunk{Text: string(runes[from:to]), Start: from}
		parent := b.newParent(ids, doc, i, window)
		for _, cc := range child.Split(s.Text) {
			rel := offset(s.Start-from, cc.Start)
			child := b.newChild(ids, doc, &parent, len(res.Children), cc.Text, rel)
			res.Children = append(res.Children, child)
		}
		res.Parents = append(res.Parents, parent)
	}
	return res
}

// newParent makes the ordinal-th parent of doc from a chunk, its id made
// by ids, with the pages it spans when doc has pages.
func (b *Builder) newParent(ids *fieldhash.Digest, doc Document, ordinal int, c split.Chunk) Parent {
	return Parent{
		ID:       makeID(ids, "p", doc.ID, b.Revision, ordinal, c.Text),
		DocID:    doc.ID,
		Title:    doc.Title,
		Pages:    PagesOf(doc.PageStarts, c.Start, c.Text),
		Ordinal:  ordinal,
		Text:     c.Text,
		Start:    c.Start,
		Metadata: doc.Metadata,
	}
}

// newChild makes a child of parent at relative offset rel, its id made by
// ids, and records its span in the parent.
func (b *Builder) newChild(ids *fieldhash.Digest, doc Document, parent *Parent, ordinal int, text string, rel int) Child {
	child := Child{
		ID:          makeID(ids, "c", doc.ID, b.Revision, ordinal, text),
		ParentID:    parent.ID,
		DocID:       doc.ID,
		Ordinal:     ordinal,
		Text:        text,
		Start:       offset(parent.Start, rel),
		ParentStart: rel,
	}
	end := -1
	if rel >= 0 {
		end = rel + utf8word.RuneCount(text)
	}
	parent.Children = append(parent.Children, Span{ID: child.ID, Start: rel, End: end})
	return child
}
