package split

import (
	"testing"
	"unicode/utf8"
)

// FuzzRecursive checks the invariants of Recursive on arbitrary input: no
// panic; Split agrees with SplitText; every located chunk is at its Start
// (in code points); with separators kept, every chunk is located; no chunk
// exceeds the chunk size (the presets end with "", so every piece can be
// split down to single code points).
func FuzzRecursive(f *testing.F) {
	for _, s := range []string{
		"",
		"Hi.\n\nI'm Harrison.\n\nHow? Are? You?\nOkay then f f f f.",
		"# Title\n\nIntro paragraph.\n\n## Install\n\n- one\n- two\n\n```bash\npip install x\n```\n\n***\n\n### Usage\n",
		"😀 ab 中文 cd 😀 ab 中文 cd",
		"éé ää x\u2028y\u00a0z\x1c",
		"ab ab ab ab ab ab",
		"a\xffb\xe4\xb8 c",
	} {
		f.Add(s, uint8(10), uint8(3), uint8(1), false)
		f.Add(s, uint8(7), uint8(0), uint8(0), true)
	}
	f.Fuzz(func(t *testing.T, text string, size, overlap, keep uint8, markdown bool) {
		o := DefaultOptions(int(size%64)+1, 0)
		o.ChunkOverlap = int(overlap) % (o.ChunkSize + 1)
		o.KeepSeparator = KeepSeparator(keep % 3)
		if markdown {
			o.Separators, o.IsSeparatorRegex, _ = Separators(PresetMarkdown)
		}
		r, err := NewRecursive(o)
		if err != nil {
			t.Fatal(err)
		}
		texts := r.SplitText(text)
		chunks := r.Split(text)
		if len(texts) != len(chunks) {
			t.Fatalf("SplitText %d chunks, Split %d", len(texts), len(chunks))
		}
		valid := utf8.ValidString(text)
		runes := []rune(text)
		for i, c := range chunks {
			if c.Text != texts[i] {
				t.Fatalf("chunk %d: Split %q, SplitText %q", i, c.Text, texts[i])
			}
			if c.Text == "" {
				t.Fatalf("chunk %d is empty", i)
			}
			n := utf8.RuneCountInString(c.Text)
			if n > o.ChunkSize {
				t.Fatalf("chunk %d %q has %d code points > %d", i, c.Text, n, o.ChunkSize)
			}
			if !valid {
				continue
			}
			if c.Start >= 0 {
				if c.Start+n > len(runes) || string(runes[c.Start:c.Start+n]) != c.Text {
					t.Fatalf("chunk %d %q is not at code point %d", i, c.Text, c.Start)
				}
			} else if o.KeepSeparator != KeepNone {
				t.Fatalf("chunk %d %q not located although separators are kept", i, c.Text)
			}
		}
	})
}

// maxTokenFuzzInput bounds the inputs FuzzRecursiveTokens splits.
const maxTokenFuzzInput = 1024

// FuzzRecursiveTokens checks the token splitter on arbitrary input: no
// panic, Split agrees with SplitText, no chunk is empty, and every chunk
// is within tokenBound (docs/spec/chunkingpolicy.md).
func FuzzRecursiveTokens(f *testing.F) {
	for _, s := range []string{"", "😀0A万0 😀0万 0A", "Hi.\n\nI'm Harrison.\n\nHow? Are? You?\nOkay then f f f f.", "a\xffb\xe4\xb8 c", "  \n\t 's 12345 !!"} {
		f.Add(s, uint8(6), uint8(0))
		f.Add(s, uint8(1), uint8(1))
	}
	r := map[[2]int]*Recursive{}
	f.Fuzz(func(t *testing.T, text string, size, overlap uint8) {
		if len(text) > maxTokenFuzzInput {
			// Token lengths of every piece make one long input take long
			// enough to outlast a bounded fuzzing run.
			return
		}
		sz := int(size%32) + 1
		ov := int(overlap) % (sz + 1)
		sp := r[[2]int{sz, ov}]
		if sp == nil {
			sp, _ = tokenSplitter(t, sz, ov)
			r[[2]int{sz, ov}] = sp
		}
		tok, _ := TokenLength(EncodingCl100kBase)
		texts := sp.SplitText(text)
		chunks := sp.Split(text)
		if len(texts) != len(chunks) {
			t.Fatalf("SplitText %d chunks, Split %d", len(texts), len(chunks))
		}
		for i, c := range chunks {
			if c.Text != texts[i] || c.Text == "" {
				t.Fatalf("chunk %d: Split %q, SplitText %q", i, c.Text, texts[i])
			}
			if n := tok(c.Text); n > tokenBound(sz) {
				t.Fatalf("chunk %q: %d tokens, over the bound %d for chunk size %d", c.Text, n, tokenBound(sz), sz)
			}
		}
	})
}
