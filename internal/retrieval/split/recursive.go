package split

// Options configures a Recursive splitter. The zero value is not usable:
// ChunkSize must be set. DefaultOptions returns LangChain's defaults.
type Options struct {
	// ChunkSize is the most a chunk may measure (chunk_size, > 0). A piece
	// that cannot be split further may exceed it.
	ChunkSize int
	// ChunkOverlap is how much of the previous chunk a chunk may repeat
	// (chunk_overlap, 0 <= ChunkOverlap <= ChunkSize).
	ChunkOverlap int
	// Separators are tried in order (separators); nil or empty means
	// DefaultSeparators, as in LangChain.
	Separators []string
	// IsSeparatorRegex makes Separators Python regular expressions
	// (is_separator_regex); otherwise they are literal strings.
	IsSeparatorRegex bool
	// KeepSeparator says where separators are kept (keep_separator).
	// LangChain's default for this splitter is KeepStart.
	KeepSeparator KeepSeparator
	// StripWhitespace strips Python whitespace from both ends of every
	// merged chunk (strip_whitespace; LangChain's default is true).
	StripWhitespace bool
	// Length measures texts in the unit of ChunkSize and ChunkOverlap;
	// nil means CodePoints (Python's len).
	Length LengthFunc
	// Warn, when set, receives LangChain's warning "Created a chunk of
	// size N, which is longer than the specified M" each time merging
	// emits an oversized chunk. It may be called concurrently.
	Warn func(msg string)
}

// DefaultOptions returns LangChain's RecursiveCharacterTextSplitter
// defaults for the given sizes: default separators, matched literally,
// kept at the start of the next piece, chunks stripped, code-point lengths.
func DefaultOptions(chunkSize, chunkOverlap int) Options {
	return Options{
		ChunkSize:       chunkSize,
		ChunkOverlap:    chunkOverlap,
		Separators:      DefaultSeparators(),
		KeepSeparator:   KeepStart,
		StripWhitespace: true,
	}
}

// Recursive is LangChain's RecursiveCharacterTextSplitter: it splits a
// text at the first separator that occurs in it, merges the pieces shorter
// than the chunk size, and splits the longer ones again with the
// separators that follow. Its output equals LangChain's byte for byte. A
// Recursive is immutable and safe for concurrent use.
type Recursive struct {
	*base
	seps []*separator
}

// NewRecursive validates o and compiles its separators once. Size errors
// carry LangChain's messages ("chunk_size must be > 0, got 0",
// "chunk_overlap must be >= 0, got -1", "Got a larger chunk overlap (4)
// than chunk size (2), should be smaller."); an invalid regular expression
// is reported here rather than at split time.
func NewRecursive(o Options) (*Recursive, error) {
	b, err := newBase(o.ChunkSize, o.ChunkOverlap, o.KeepSeparator, o.StripWhitespace, o.Length, o.Warn)
	if err != nil {
		return nil, err
	}
	raw := o.Separators
	if len(raw) == 0 {
		raw = DefaultSeparators()
	}
	r := &Recursive{base: b, seps: make([]*separator, len(raw))}
	for i, s := range raw {
		sp, err := compileSeparator(s, o.IsSeparatorRegex)
		if err != nil {
			return nil, err
		}
		sp.mergeSep, sp.mergeLen = b.mergeSeparator(s)
		r.seps[i] = sp
	}
	return r, nil
}

// SplitText is LangChain's split_text: the chunks of text, in order. They
// are substrings of text wherever LangChain's joins reproduce it.
func (r *Recursive) SplitText(text string) []string {
	st := r.getState(text)
	st.out = r.splitRec(st, text, r.seps, 0, st.out[:0])
	out := append([]string(nil), st.out...)
	r.putState(st)
	return out
}

// Split returns the chunks of SplitText with LangChain's start_index
// (create_documents with add_start_index=True): code-point offsets found
// by text.find from the end of the previous chunk less the overlap, -1 for
// a chunk that does not occur there.
func (r *Recursive) Split(text string) []Chunk {
	st := r.getState(text)
	st.out = r.splitRec(st, text, r.seps, 0, st.out[:0])
	out := r.locate(text, st.out, st.ascii)
	r.putState(st)
	return out
}

// MergeSplits is LangChain's _merge_splits: it packs splits, joined by
// separator, into chunks of at most ChunkSize with ChunkOverlap, stripping
// them when the splitter strips and dropping empty ones. A split longer
// than ChunkSize makes a longer chunk and a call to Warn.
func (r *Recursive) MergeSplits(splits []string, separator string) []string {
	return r.mergeStrings(splits, separator)
}

// splitRec is LangChain's _split_text.
func (r *Recursive) splitRec(st *splitState, text string, seps []*separator, depth int, out []string) []string {
	sep := seps[len(seps)-1]
	var rest []*separator
	for i, s := range seps {
		if s.kind == sepChars {
			sep, rest = s, nil
			break
		}
		if s.find(text, st) {
			sep, rest = s, seps[i+1:]
			break
		}
	}
	// Literal and character separators are split a batch of pieces at a
	// time and merged as they come, so that memory stays proportional to
	// the chunks, not to one piece per separator or code point.
	cur := cursor{next: st.first}
	batched := sep.kind == sepChars || sep.kind == sepLiteral
	m := merger{base: r.base, text: text, sep: sep.mergeSep, sepLen: sep.mergeLen, win: st.win(depth)}
	for !cur.done {
		var ps []piece
		if batched {
			ps = sep.splitFrom(text, r.keep, &cur, st.buf(depth))
		} else {
			ps = sep.split(text, r.keep, st, st.buf(depth))
			cur.done = true
		}
		st.bufs[depth] = ps
		r.measure(ps, st.ascii)
		for i := range ps {
			if ps[i].n < r.chunkSize {
				out = m.push(ps[i], out)
				continue
			}
			out = m.flush(out)
			if len(rest) == 0 {
				out = append(out, ps[i].s)
			} else {
				out = r.splitRec(st, ps[i].s, rest, depth+1, out)
			}
		}
	}
	out = m.flush(out)
	st.wins[depth] = m.win[:0]
	return out
}
