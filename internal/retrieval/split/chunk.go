// Package split splits text into chunks. The recursive splitter
// reproduces LangChain's RecursiveCharacterTextSplitter exactly; the
// Markdown header splitter reproduces MarkdownHeaderTextSplitter; the
// sentence splitter feeds sentence windows.
package split

import "github.com/parentrag/parentrag/internal/utf8word"

// Chunk is one piece of a split text. Start is the offset of Text in the
// input, counted in Unicode code points, or -1 when the chunk could not be
// located (LangChain's start_index semantics).
type Chunk struct {
	Text  string
	Start int
}

// TextSplitter splits a text into chunks, as Recursive does.
type TextSplitter interface {
	// SplitText returns the chunks of text.
	SplitText(text string) []string
	// Split returns the chunks of text with LangChain's start_index.
	Split(text string) []Chunk
}

// LengthFunc measures a text in the unit chunk sizes are declared in.
type LengthFunc func(string) int

// CodePoints counts Unicode code points, as Python's len() does. It is the
// length of the Characters unit.
func CodePoints(s string) int {
	return utf8word.RuneCount(s)
}
