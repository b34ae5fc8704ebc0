package hierarchy

import (
	"slices"

	"github.com/parentrag/parentrag/internal/fieldhash"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

// Level names one level of a hierarchy, as answers spell it.
type Level string

// Levels of a hierarchy, largest first, and the sentence window.
const (
	LevelDocument Level = "document"
	LevelSection  Level = "section"
	LevelParent   Level = "parent"
	LevelChild    Level = "child"
	LevelSentence Level = "sentence"
	// LevelWindow is a sentence window: the sentences around a hit, of
	// a SentenceWindow index or cut from a larger unit at query time.
	LevelWindow Level = "window"
)

// TwoLevels is the default shape: parents, and children searched.
var TwoLevels = []Level{LevelParent, LevelChild}

// kindOf is the letter of a level in the ids of its units: parents and
// children keep the letters ids always had.
var kindOf = map[Level]string{
	LevelDocument: "d", LevelSection: "s", LevelParent: "p", LevelChild: "c", LevelSentence: "t",
}

// shape returns the builder's levels, largest first: Shape, or TwoLevels.
func (b *Builder) shape() []Level {
	if len(b.Shape) == 0 {
		return TwoLevels
	}
	return b.Shape
}

// Leaf names the level of the builder's children, the smallest.
func (b *Builder) Leaf() Level {
	shape := b.shape()
	return shape[len(shape)-1]
}

// IsTwoLevels reports whether the builder makes the default shape, parents
// and children, whose units carry no level or link up.
func (b *Builder) IsTwoLevels() bool { return slices.Equal(b.shape(), TwoLevels) }

// levelBuild is the state of splitting one document into the levels of a
// shape other than the default.
type levelBuild struct {
	b        *Builder
	doc      Document
	shape    []Level
	lv       Levels
	ids      *fieldhash.Digest
	ordinals []int // per level: the next ordinal
	res      Result
}

// buildLevels splits a document into every level of the builder's shape,
// each unit from the text of the unit above it. The smallest level's units
// are the children; the level above theirs holds the parents; the larger
// ones are ancestors. Every unit but the largest names the one that holds
// it (ParentID), every unit above the children lists the spans of the
// units it holds, and a unit under none of its own headings takes those of
// the unit above.
func (b *Builder) buildLevels(doc Document) Result {
	shape := b.shape()
	lb := &levelBuild{b: b, doc: doc, shape: shape, lv: b.levelsFor(doc), ids: fieldhash.New(), ordinals: make([]int, len(shape))}
	for _, c := range lb.chunks(0, doc.Text) {
		lb.unit(0, c, nil)
	}
	return lb.res
}

// unit makes the unit of level i from chunk c of the unit up (nil at the
// top level), and everything under it.
func (lb *levelBuild) unit(i int, c split.HeadedChunk, up *Parent) {
	if i == len(lb.shape)-1 {
		child := lb.b.newChild(lb.ids, lb.doc, up, len(lb.res.Children), c.Text, c.Start)
		lb.res.Children = append(lb.res.Children, child)
		return
	}
	start := c.Start
	if up != nil {
		start = offset(up.Start, c.Start)
	}
	kind := kindOf[lb.shape[i]]
	p := Parent{
		ID: makeID(lb.ids, kind, lb.doc.ID, lb.b.Revision, lb.ordinals[i], c.Text), DocID: lb.doc.ID, Title: lb.doc.Title,
		Level: lb.shape[i], Ordinal: lb.ordinals[i], Text: c.Text, Start: start, HeadingPath: c.Headings, Metadata: lb.doc.Metadata,
	}
	lb.ordinals[i]++
	if up != nil {
		p.ParentID = up.ID
		if len(p.HeadingPath) == 0 {
			p.HeadingPath = up.HeadingPath
		}
		up.Children = append(up.Children, spanOf(p.ID, c.Start, c.Text))
	}
	for _, sub := range lb.chunks(i+1, p.Text) {
		lb.unit(i+1, sub, &p)
	}
	if i == len(lb.shape)-2 {
		lb.res.Parents = append(lb.res.Parents, p)
	} else {
		lb.res.Ancestors = append(lb.res.Ancestors, p)
	}
}

// chunks splits text into the units of level i, with heading paths when
// the level's splitter knows them.
func (lb *levelBuild) chunks(i int, text string) []split.HeadedChunk {
	switch lb.shape[i] {
	case LevelDocument:
		return []split.HeadedChunk{{Chunk: split.Chunk{Text: text}}}
	case LevelSection:
		return parentChunks(lb.lv.Section, text)
	case LevelParent:
		return parentChunks(lb.lv.Parent, text)
	case LevelSentence:
		return headless(sentenceChunks(lb.lv.Child, text))
	default:
		return headless(lb.lv.Child.Split(text))
	}
}

// sentenceChunks returns the sentences of text, each longer than a child
// split by child as a child would be.
func sentenceChunks(child Splitter, text string) []split.Chunk {
	var out []split.Chunk
	for _, s := range split.Sentences(text) {
		for _, piece := range child.Split(s.Text) {
			out = append(out, split.Chunk{Text: piece.Text, Start: offset(s.Start, piece.Start)})
		}
	}
	return out
}

// headless gives chunks no heading path.
func headless(chunks []split.Chunk) []split.HeadedChunk {
	out := make([]split.HeadedChunk, len(chunks))
	for i, c := range chunks {
		out[i] = split.HeadedChunk{Chunk: c}
	}
	return out
}

// spanOf is the span of a unit of text at relative offset rel in the
// unit that holds it.
func spanOf(id string, rel int, text string) Span {
	end := -1
	if rel >= 0 {
		end = rel + len([]rune(text))
	}
	return Span{ID: id, Start: rel, End: end}
}
