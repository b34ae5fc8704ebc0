package split

import "strings"

// Character, LangChain's CharacterTextSplitter, is no splitter a policy
// offers: it lives beside the tests, which check on LangChain's own cases
// for it that the separator matching and merging it shares with Recursive
// reproduce LangChain's.

// CharacterOptions configures a Character splitter. DefaultCharacterOptions
// returns LangChain's defaults.
type CharacterOptions struct {
	// ChunkSize is the most a merged chunk may measure (chunk_size, > 0);
	// a single piece longer than it becomes its own chunk.
	ChunkSize int
	// ChunkOverlap is how much of the previous chunk a chunk may repeat
	// (chunk_overlap, 0 <= ChunkOverlap <= ChunkSize).
	ChunkOverlap int
	// Separator is the one separator (separator); "" splits into code
	// points.
	Separator string
	// IsSeparatorRegex makes Separator a Python regular expression.
	IsSeparatorRegex bool
	// KeepSeparator says where the separator is kept (keep_separator;
	// LangChain's default for this splitter is KeepNone).
	KeepSeparator KeepSeparator
	// StripWhitespace strips Python whitespace from both ends of every
	// chunk (strip_whitespace; LangChain's default is true).
	StripWhitespace bool
	// Length measures texts; nil means CodePoints.
	Length LengthFunc
	// Warn, when set, receives LangChain's oversized-chunk warnings.
	Warn func(msg string)
}

// DefaultCharacterOptions returns LangChain's CharacterTextSplitter
// defaults for the given sizes: separator "\n\n" matched literally and
// dropped, chunks stripped, code-point lengths.
func DefaultCharacterOptions(chunkSize, chunkOverlap int) CharacterOptions {
	return CharacterOptions{
		ChunkSize:       chunkSize,
		ChunkOverlap:    chunkOverlap,
		Separator:       "\n\n",
		StripWhitespace: true,
	}
}

// Character is LangChain's CharacterTextSplitter: it splits a text at one
// separator and merges the pieces into chunks. Its output equals
// LangChain's byte for byte. A Character is immutable and safe for
// concurrent use.
type Character struct {
	*base
	sep      *separator
	mergeSep string
	mergeLen int
}

// NewCharacter validates o, with LangChain's messages for sizes, and
// compiles its separator once.
func NewCharacter(o CharacterOptions) (*Character, error) {
	b, err := newBase(o.ChunkSize, o.ChunkOverlap, o.KeepSeparator, o.StripWhitespace, o.Length, o.Warn)
	if err != nil {
		return nil, err
	}
	c := &Character{base: b}
	if c.sep, err = compileSeparator(o.Separator, o.IsSeparatorRegex); err != nil {
		return nil, err
	}
	// A zero-width lookaround separator is never re-inserted between
	// merged pieces.
	raw := o.Separator
	if o.IsSeparatorRegex {
		for _, p := range [...]string{"(?=", "(?<!", "(?<=", "(?!"} {
			if strings.HasPrefix(raw, p) {
				raw = ""
				break
			}
		}
	}
	c.mergeSep, c.mergeLen = c.mergeSeparator(raw)
	return c, nil
}

// SplitText is LangChain's split_text: the chunks of text, in order.
func (c *Character) SplitText(text string) []string {
	st := c.splitState(text)
	out := append([]string(nil), st.out...)
	c.putState(st)
	return out
}

// splitState splits text, leaving the chunks in the returned state's out.
func (c *Character) splitState(text string) *splitState {
	st := c.getState(text)
	c.sep.find(text, st)
	ps := c.sep.split(text, c.keep, st, st.buf(0))
	st.bufs[0] = ps
	c.measure(ps, st.ascii)
	st.out = c.merge(text, ps, c.mergeSep, c.mergeLen, st.out[:0])
	return st
}

// Split returns the chunks of SplitText with LangChain's start_index; see
// Recursive.Split.
func (c *Character) Split(text string) []Chunk {
	st := c.splitState(text)
	out := c.locate(text, st.out, st.ascii)
	c.putState(st)
	return out
}

// MergeSplits is LangChain's _merge_splits; see Recursive.MergeSplits.
func (c *Character) MergeSplits(splits []string, separator string) []string {
	return c.mergeStrings(splits, separator)
}
