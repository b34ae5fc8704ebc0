package split

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// codeSectioner returns a CodeSectioner of the language of file, as a
// Sections policy builds it: Within splits with the language's separators.
func codeSectioner(tb testing.TB, lang Language, size, min int) *CodeSectioner {
	tb.Helper()
	o, err := languageOptions(lang, size, 0)
	if err != nil {
		o = DefaultOptions(size, 0) // perl: LangChain has no separators
	}
	within, err := NewRecursive(o)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := NewCodeSectioner(CodeOptions{Language: lang, Within: within, ChunkSize: size, MinChunkSize: min})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// checkCodeSpans fails unless the chunks are spans of text (checkSpans),
// no longer than size, that together hold every character of text that is
// not white space, once.
func checkCodeSpans(t *testing.T, text string, chunks []HeadedChunk, size int) {
	t.Helper()
	checkSpans(t, text, chunks)
	var kept strings.Builder
	for i, c := range chunks {
		if n := utf8.RuneCountInString(c.Text); n > size {
			t.Fatalf("chunk %d has %d code points, more than %d", i, n, size)
		}
		kept.WriteString(c.Text)
	}
	if a, b := withoutSpace(kept.String()), withoutSpace(text); a != b {
		t.Fatalf("the chunks lose or repeat text: %d non-space code points, the text has %d", len([]rune(a)), len([]rune(b)))
	}
}

func withoutSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || IsPythonSpace(r) {
			return -1
		}
		return r
	}, s)
}

func headingsOf(chunks []HeadedChunk) [][]string {
	out := make([][]string, len(chunks))
	for i, c := range chunks {
		out[i] = c.Headings
	}
	return out
}

func readSample(tb testing.TB, name string) string {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "code", name))
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

func TestCodeSectionsAreDefinitions(t *testing.T) {
	tests := []struct {
		file string
		want [][]string
	}{
		{"ratelimit.go", [][]string{
			nil, {"var ErrClosed"}, {"const"}, {"type Limiter struct"}, {"func New"},
			{"func (l *Limiter) refill"}, {"func (l *Limiter) Allow"}, {"func (l *Limiter) Wait"}, {"func (l *Limiter) Close"},
		}},
		{"inventory.py", [][]string{
			nil, {"class OutOfStock"}, {"class Part"}, {"class Inventory"}, {"class Inventory", "def __init__"},
			{"class Inventory", "def add"}, {"class Inventory", "def available"}, {"class Inventory", "def reserve"},
			{"class Inventory", "def skus"}, {"def load"}, {"def report"}, nil,
		}},
		{"Ledger.java", [][]string{
			nil, {"public class Ledger"}, {"public class Ledger", "public static final class Entry"},
			{"public class Ledger", "public void post"}, {"public class Ledger", "public BigDecimal balanceOf"},
			{"public class Ledger", "protected boolean balanced"}, {"public class Ledger", "private static String format"},
			{"public class Ledger", "static List<String> journal"},
		}},
		{"Orders.cs", [][]string{
			nil, {"namespace Shop.Orders", "public enum Status"}, {"namespace Shop.Orders", "public class Order"},
			{"namespace Shop.Orders", "public class Order", "public Status Status"},
			{"namespace Shop.Orders", "public class Order", "public void AddLine"},
			{"namespace Shop.Orders", "public class Order", "public decimal Total"},
			{"namespace Shop.Orders", "public class Order", "protected static string Label"},
		}},
		{"queue.rs", [][]string{
			nil, {"pub struct Ring<T>"}, {"impl<T> Ring<T>", "pub fn new"}, {"impl<T> Ring<T>", "pub fn push"},
			{"impl<T> Ring<T>", "pub fn pop"}, {"fn drain_all<T: std::fmt::Debug>"}, {"fn main"},
		}},
		{"library.rb", [][]string{nil, {"class Book"}, {"class Library"}, {"def fine_for"}}},
		{"cart.js", [][]string{nil, {"class Cart"}, {"function discount"}, {"var total"}, nil}},
		{"stack.ex", [][]string{{"defmodule Stack"}}},
		{"Queue.hs", [][]string{{"module Queue"}, {"data Queue"}, {"empty"}, {"push"}, {"pop"}, {"instance Container"}, {"main"}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			text := readSample(t, tt.file)
			got := codeSectioner(t, LanguageOfPath(tt.file), 600, 60).SplitHeaded(text)
			checkCodeSpans(t, text, got, 600)
			if !reflect.DeepEqual(headingsOf(got), tt.want) {
				for _, c := range got {
					t.Logf("%q %.50q", c.Headings, c.Text)
				}
				t.Fatalf("headings %q, want %q", headingsOf(got), tt.want)
			}
		})
	}
}

func TestCodeSectionsIgnoreDefinitionsInStringsAndComments(t *testing.T) {
	tests := []struct {
		lang Language
		text string
		want [][]string
	}{
		{LanguageGo, "package p\n\nconst usage = `\nfunc fake() {\n}\n`\n\nfunc Real() {\n\tprintln(usage)\n}\n",
			[][]string{nil, {"const usage"}, {"func Real"}}},
		{LanguagePython, "def real():\n    \"\"\"Doc.\n\ndef fake():\n    pass\n\"\"\"\n    return 1\n\n\nclass Other:\n    pass\n",
			[][]string{{"def real"}, {"class Other"}}},
		{LanguageC, "/* A comment\nint fake(void)\n*/\nint real(void)\n{\n    return '{';\n}\n\nvoid other(void) {}\n",
			[][]string{{"int real"}, {"void other"}}},
		{LanguageLua, "--[[\nfunction fake()\n]]\nfunction real()\n  return \"]]\"\nend\n\nlocal x = [[\nfunction fake2()\n]]\n",
			[][]string{{"function real"}, {"local x"}}},
		{LanguageRuby, "=begin\ndef fake\n=end\ndef real\n  1\nend\n\ndef other\nend\n",
			[][]string{{"def real"}, {"def other"}}},
	}
	for _, tt := range tests {
		t.Run(string(tt.lang), func(t *testing.T) {
			got := codeSectioner(t, tt.lang, 200, 0).SplitHeaded(tt.text)
			checkCodeSpans(t, tt.text, got, 200)
			if !reflect.DeepEqual(headingsOf(got), tt.want) {
				for _, c := range got {
					t.Logf("%q %q", c.Headings, c.Text)
				}
				t.Fatalf("headings %q, want %q", headingsOf(got), tt.want)
			}
		})
	}
}

func TestCodeSectionKeepsAClassWholeWhenItFits(t *testing.T) {
	text := readSample(t, "inventory.py")
	got := codeSectioner(t, LanguagePython, 2000, 0).SplitHeaded(text)
	checkCodeSpans(t, text, got, 2000)
	var class *HeadedChunk
	for i := range got {
		if reflect.DeepEqual(got[i].Headings, []string{"class Inventory"}) {
			class = &got[i]
		}
	}
	if class == nil || !strings.Contains(class.Text, "def reserve") || !strings.Contains(class.Text, "def skus") {
		t.Fatalf("class Inventory is not one parent with its methods: %q", headingsOf(got))
	}
}

func TestCodeSectionCutsALongFunctionAtItsStatements(t *testing.T) {
	var b strings.Builder
	b.WriteString("// Big does many things.\nfunc Big() {\n")
	for i := range 40 {
		b.WriteString("\tif step(" + strings.Repeat("x", i%7) + ") {\n\t\tcount++\n\t}\n")
	}
	b.WriteString("}\n\nfunc Small() {}\n")
	text := b.String()
	got := codeSectioner(t, LanguageGo, 300, 0).SplitHeaded(text)
	checkCodeSpans(t, text, got, 300)
	if len(got) < 4 {
		t.Fatalf("%d sections, want Big cut in several", len(got))
	}
	for _, c := range got[:len(got)-1] {
		if !reflect.DeepEqual(c.Headings, []string{"func Big"}) {
			t.Errorf("piece of Big under %q", c.Headings)
		}
		// Each piece is whole statements: it ends where a statement ends.
		if last := c.Text[strings.LastIndexByte(c.Text, '\n')+1:]; strings.TrimSpace(last) != "}" {
			t.Errorf("piece ends inside a statement: %q", last)
		}
	}
	if last := got[len(got)-1]; !reflect.DeepEqual(last.Headings, []string{"func Small"}) {
		t.Errorf("last section %q, want func Small", last.Headings)
	}
}

func TestDefinitionNames(t *testing.T) {
	tests := []struct {
		line   string
		member bool
		want   string
	}{
		{"func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {", false, "func (r *Reconciler) Reconcile"},
		{"func Map[K comparable, V any](m map[K]V) []K {", false, "func Map"},
		{"func do(t testing.TB) int {", false, "func do"},
		{"def newer (source, target):", false, "def newer"},
		{"var f = function (x) {", false, "var f"},
		{"int main (void)", false, "int main"},
		{"class Absent: pass", false, "class Absent"},
		{"class Rstrip:  # a comment", false, "class Rstrip"},
		{"impl fmt::Display for Ring {", false, "impl fmt::Display for Ring"},
		{"type Limiter struct {", false, "type Limiter struct"},
		{"var (", false, "var"},
		{"x := compute()", false, "x"},
		{"class Foo(Base):", false, "class Foo"},
		{"async def fetch(url: str) -> bytes:", false, "async def fetch"},
		{"public static <T> List<T> copy(List<T> in) {", true, "public static <T> List<T> copy"},
		{"export default function App() {", false, "export default function App"},
		{"const handler = async (req) => {", false, "const handler"},
		{"defmodule Stack do", false, "defmodule Stack"},
		{"fun convert(r: Reading, to: Scale): Double =", false, "fun convert"},
		{"if err != nil {", false, ""},
		{"import os", false, ""},
		{`"""Docstring."""`, false, ""},
		{"self.count = 0", true, ""},
		{"chunks.append(x)", true, ""},
		{"def bar(self):", true, "def bar"},
		{"func " + strings.Repeat("x", 150) + "() {", false, "func " + strings.Repeat("x", 95) + "…"},
	}
	for _, tt := range tests {
		if got := definitionName(tt.line, tt.member); got != tt.want {
			t.Errorf("definitionName(%q, member %v) = %q, want %q", tt.line, tt.member, got, tt.want)
		}
	}
}

// FuzzCodeSections checks a CodeSectioner on arbitrary text in every
// language: no panic, and on valid UTF-8 the sections are spans of the
// text, in order, disjoint, within the size, losing no text but white space.
func FuzzCodeSections(f *testing.F) {
	for _, name := range []string{"ratelimit.go", "inventory.py", "Orders.cs", "cache.lua", "library.rb", "Queue.hs"} {
		data, err := os.ReadFile(filepath.Join("testdata", "code", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data), uint8(0), uint8(40), uint8(4))
	}
	f.Add("func a() {\n`\n}\n\"\n'\n/*", uint8(1), uint8(5), uint8(1))
	f.Add("\t\t}\n)\n{\n  end\n\xff\xfe def x", uint8(2), uint8(3), uint8(0))
	var langs []Language
	for _, l := range Languages() {
		if _, ok := syntaxes[l]; ok {
			langs = append(langs, l)
		}
	}
	f.Fuzz(func(t *testing.T, text string, lang, size, min uint8) {
		chunkSize := int(size%200) + 1
		s := codeSectioner(t, langs[int(lang)%len(langs)], chunkSize, int(min)%chunkSize)
		got := s.SplitHeaded(text)
		if utf8.ValidString(text) {
			checkCodeSpans(t, text, got, chunkSize)
		}
	})
}
