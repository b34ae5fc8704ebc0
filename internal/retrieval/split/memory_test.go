package split

import (
	"runtime"
	"strings"
	"testing"
)

// memoryInputs are texts on which the recursive splitter's memory used to
// grow with one 32-byte piece per input byte: prose, one long line without
// separators, and spaces only.
func memoryInputs(n int) map[string]string {
	prose := strings.Repeat("The quick brown fox jumps over the lazy dog. It was not amused.\n\nA new paragraph starts here, and it goes on.\n", n/110+1)[:n]
	line := strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789", n/36+1)[:n]
	return map[string]string{"prose": prose, "line": line, "spaces": strings.Repeat(" ", n)}
}

// allocPerByte returns the bytes allocated by one Split of text divided by
// its length.
func allocPerByte(r *Recursive, text string) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_ = r.Split(text)
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(len(text))
}

// TestRecursiveMemoryBounded bounds what a split allocates, per input
// byte, on texts without separators: the character-level fallback must
// not hold one piece per code point.
func TestRecursiveMemoryBounded(t *testing.T) {
	r, err := NewRecursive(DefaultOptions(1500, 150))
	if err != nil {
		t.Fatal(err)
	}
	// A length function of its own takes the general path (the one Tokens
	// takes) without the tokenizer's own allocations.
	byteLen := func(s string) int { return len(s) }
	rt, err := NewRecursive(Options{ChunkSize: 400, ChunkOverlap: 40, Separators: DefaultSeparators(), KeepSeparator: KeepStart, StripWhitespace: true, Length: byteLen})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := TokenLength(EncodingCl100kBase)
	if err != nil {
		t.Fatal(err)
	}
	rtok, err := NewRecursive(Options{ChunkSize: 400, ChunkOverlap: 40, Separators: DefaultSeparators(), KeepSeparator: KeepStart, StripWhitespace: true, Length: tok})
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range memoryInputs(4 << 20) {
		// Tokens: encoding prose allocates inside the tokenizer (about 70
		// bytes per input byte, all garbage at once); text without
		// separators is measured one code point at a time and must not.
		if name != "prose" {
			_ = rtok.Split(text[:4096])
			if got := allocPerByte(rtok, text[:1<<20]); got > 2 {
				t.Errorf("%s: tokens: %.2f bytes allocated per input byte, want <= 2", name, got)
			}
		}
		_ = r.Split(text[:4096]) // warm the pool
		if got := allocPerByte(r, text); got > 2 {
			t.Errorf("%s: code points: %.2f bytes allocated per input byte, want <= 2", name, got)
		}
		if got := allocPerByte(rt, text); got > 2 {
			t.Errorf("%s: length function: %.2f bytes allocated per input byte, want <= 2", name, got)
		}
	}
}

// BenchmarkSplitMemory reports the bytes allocated per input byte by one
// split of 8 MiB of prose, of one line without separators and of spaces,
// in code points (1500/150) and in cl100k_base tokens (400/40).
func BenchmarkSplitMemory(b *testing.B) {
	r, err := NewRecursive(DefaultOptions(1500, 150))
	if err != nil {
		b.Fatal(err)
	}
	tok, err := TokenLength(EncodingCl100kBase)
	if err != nil {
		b.Fatal(err)
	}
	rt := presetSplitter(b, PresetDefault, 400, 40, tok)
	inputs := memoryInputs(8 << 20)
	for _, unit := range []string{"chars", "tokens"} {
		for _, name := range []string{"prose", "line", "spaces"} {
			text := inputs[name]
			r := r
			if unit == "tokens" {
				r = rt
			}
			b.Run(unit+"/"+name, func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				n := 0
				for b.Loop() {
					_ = r.Split(text)
					n++
				}
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(n)/float64(len(text)), "allocB/inB")
			})
		}
	}
}
