package indexer

import (
	"strings"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

// isProse reports whether doc is prose, whose fenced code blocks quote
// rather than say: any document that is not source code (by the
// language or format its reader recorded, else its id's extension).
func isProse(doc hierarchy.Document) bool {
	if doc.Metadata[hierarchy.MetaFormat] == "Code" {
		return false
	}
	lang := split.Language(doc.Metadata[hierarchy.MetaLanguage])
	if lang == "" {
		lang = split.LanguageOfPath(doc.ID)
	}
	return !split.IsCode(lang)
}

// maskQuotesInFences returns text with the inside of every quoted string
// ('...', "..." or `...`, opened and closed on one line) of its fenced
// code blocks (between lines that start with ``` or ~~~, counted from the
// start of text) blanked, byte for byte, so that every offset stays. A
// code block in prose often quotes a question or a message (`curl -d
// '{"query": "How does a rollout work?"}'`); blanking what it quotes
// keeps the block from being found by the words of the question it
// shows, while its commands and names still count. Text without a fence
// is returned as it is.
func maskQuotesInFences(text string) string {
	if !strings.Contains(text, "```") && !strings.Contains(text, "~~~") {
		return text
	}
	var b []byte
	inFence := false
	for start := 0; start < len(text); {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start + 1
		}
		line := text[start:end]
		switch trimmed := strings.TrimLeft(line, " \t"); {
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			inFence = !inFence
		case inFence:
			for _, q := range quotedSpans(line) {
				if b == nil {
					b = []byte(text)
				}
				for i := start + q[0]; i < start+q[1]; i++ {
					b[i] = ' '
				}
			}
		}
		start = end
	}
	if b == nil {
		return text
	}
	return string(b)
}

// quotedSpans returns the byte ranges of what the quotes of one line
// hold: from after an opening ', " or ` to before the same quote closing
// it on the line; a quote left open holds nothing.
func quotedSpans(line string) [][2]int {
	var out [][2]int
	for i := 0; i < len(line); i++ {
		q := line[i]
		if q != '\'' && q != '"' && q != '`' {
			continue
		}
		j := strings.IndexByte(line[i+1:], q)
		if j < 0 {
			break
		}
		out = append(out, [2]int{i + 1, i + 1 + j})
		i += j + 1
	}
	return out
}
