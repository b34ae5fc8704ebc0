package split

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// isCodePoints reports whether f is nil or CodePoints, the lengths the
// splitters compute on their fast path without calling f.
func isCodePoints(f LengthFunc) bool {
	return f == nil || reflect.ValueOf(f).Pointer() == reflect.ValueOf(CodePoints).Pointer()
}

// Token encodings TokenLength accepts.
const (
	// EncodingCl100kBase is tiktoken's cl100k_base (GPT-4, GPT-3.5,
	// text-embedding-3-*).
	EncodingCl100kBase = "cl100k_base"
	// EncodingO200kBase is tiktoken's o200k_base (GPT-4o, GPT-4.1, o-series).
	EncodingO200kBase = "o200k_base"
)

var (
	codecMu sync.Mutex
	codecs  = map[string]tokenizer.Codec{}
)

// TokenLength returns a LengthFunc that counts the tokens of a text in the
// named tiktoken encoding (EncodingCl100kBase or EncodingO200kBase; the
// other encodings github.com/tiktoken-go/tokenizer embeds, p50k_base,
// p50k_edit and r50k_base, are accepted too). The vocabularies are compiled
// into the binary: nothing is downloaded. It matches LangChain's
// from_tiktoken_encoder length function except that special-token text
// such as "<|endoftext|>" is counted as ordinary text where tiktoken's
// encode(disallowed_special="all") would raise. The returned function is
// safe for concurrent use.
func TokenLength(encoding string) (LengthFunc, error) {
	name := strings.ToLower(strings.TrimSpace(encoding))
	codecMu.Lock()
	defer codecMu.Unlock()
	c, ok := codecs[name]
	if !ok {
		switch tokenizer.Encoding(name) {
		case tokenizer.Cl100kBase, tokenizer.O200kBase, tokenizer.P50kBase, tokenizer.P50kEdit, tokenizer.R50kBase:
		default:
			return nil, fmt.Errorf("split: unsupported token encoding %q (want %s or %s)", encoding, EncodingCl100kBase, EncodingO200kBase)
		}
		var err error
		c, err = tokenizer.Get(tokenizer.Encoding(name))
		if err != nil {
			return nil, fmt.Errorf("split: token encoding %q: %w", encoding, err)
		}
		codecs[name] = c
	}
	count := func(s string) int {
		n, err := c.Count(s)
		if err != nil {
			return utf8.RuneCountInString(s)
		}
		return n
	}
	// The character-level fallback measures one code point at a time:
	// single ASCII bytes are looked up rather than encoded, which would
	// allocate a few hundred bytes per input byte.
	var ascii [utf8.RuneSelf]int
	for b := range ascii {
		ascii[b] = count(string(rune(b)))
	}
	return func(s string) int {
		if s == "" {
			return 0
		}
		if len(s) == 1 && s[0] < utf8.RuneSelf {
			return ascii[s[0]]
		}
		n, err := c.Count(s)
		if err != nil {
			// The codec runs in its default error mode, which never fails;
			// fall back to one token per code point rather than zero.
			return utf8.RuneCountInString(s)
		}
		return n
	}, nil
}
