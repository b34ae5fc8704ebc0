package embed

import "github.com/parentrag/parentrag/internal/prefetch"

// lookahead is how many ended words wait for their terms while the slots
// of the word table that hold them are fetched. The table is larger than
// a core's own cache, so a lookup often waits for memory; asking for a
// word's set when the word ends and reading it lookahead words later
// lets those waits overlap (BenchmarkAnalyzeCounts, docs/benchmarks.md).
const lookahead = 8

// pendingWord is an ended word waiting for its term.
type pendingWord struct {
	set    uint64 // its set in the word table, asked for, when it fits one
	at     int    // where it ended (see appendAnalyzed)
	n      int
	number bool // it holds a digit: its own term
	word   [MaxTokenBytes]byte
}

// wordQueue holds the waiting words in a ring, oldest first.
type wordQueue struct {
	words    [lookahead]pendingWord
	first, n int
}

// push queues word, which ended at offset at (number: it holds a digit),
// asking for its set; once lookahead words wait, it first appends the
// oldest one's term as pop does. Terms come out in the order their words
// ended.
func (l *localStems) push(dst []string, word []byte, number bool, at int, ends *[]int) []string {
	q := &l.queue
	if q.n == lookahead {
		dst = l.pop(dst, ends)
	}
	p := &q.words[(q.first+q.n)%lookahead]
	p.n, p.number, p.at = copy(p.word[:], word), number, at
	if !number && fitsSlot(word) {
		l.ready()
		p.set = setOf(word)
		ways := l.ways(p.set)
		prefetch.Of(&ways[0])
		prefetch.Of(&ways[1])
	}
	q.n++
	return dst
}

// pop appends the term of the oldest waiting word to dst, its hash to
// l.hashes and where its word ended to ends (when not nil), unless it is
// a stop word, and returns the extended dst.
func (l *localStems) pop(dst []string, ends *[]int) []string {
	q := &l.queue
	p := &q.words[q.first]
	q.first, q.n = (q.first+1)%lookahead, q.n-1
	term, hash := l.termOf(p)
	if term == "" {
		return dst
	}
	l.hashes = append(l.hashes, hash)
	if ends != nil {
		*ends = append(*ends, p.at)
	}
	return append(dst, term)
}

// drain pops every waiting word, leaving the queue empty.
func (l *localStems) drain(dst []string, ends *[]int) []string {
	for l.queue.n > 0 {
		dst = l.pop(dst, ends)
	}
	return dst
}

// termOf returns the term of a waiting word and its hash.
func (l *localStems) termOf(p *pendingWord) (string, uint64) {
	word := p.word[:p.n]
	switch {
	case p.number:
		term := string(word)
		return term, l.hashOf(term)
	case !fitsSlot(word):
		return l.term(word)
	}
	return l.termIn(p.set, word)
}
