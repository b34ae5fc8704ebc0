package split

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// goSources reads the Go files of this module, tests left out: real code,
// about 2 MB.
func goSources(b *testing.B) (paths, texts []string) {
	err := filepath.WalkDir(filepath.Join("..", "..", ".."), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		paths = append(paths, path)
		texts = append(texts, string(mustRead(b, path)))
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return paths, texts
}

// cutFunctions returns the share of the top-level functions that fit a
// parent (with their doc comment) that parent splits across parents: cut
// in the code, and cut anywhere, between the doc comment and the code
// included.
func cutFunctions(b *testing.B, paths, texts []string, parent interface{ Split(string) []Chunk }, size int) (fits int, code, withDoc float64) {
	cutCode, cutDoc := 0, 0
	for i, text := range texts {
		chunks := parent.Split(text)
		within := func(from, to int) bool {
			for _, c := range chunks {
				if c.Start <= from && to <= c.Start+utf8.RuneCountInString(c.Text) {
					return true
				}
			}
			return false
		}
		for _, fn := range goFuncs(b, paths[i], text) {
			if fn.end-fn.start > size {
				continue
			}
			fits++
			if !within(fn.body, fn.end) {
				cutCode++
			}
			if !within(fn.start, fn.end) {
				cutDoc++
			}
		}
	}
	return fits, 100 * float64(cutCode) / float64(fits), 100 * float64(cutDoc) / float64(fits)
}

// BenchmarkSplitCode splits this module's Go files into parents of 1500/0
// and children of 300/30 code points with the prose separators (Default),
// with Go's from_language separators, and with parents at the top-level
// definitions (Sections). Of the functions that fit a parent,
// cut-code-% are cut in their code, cut-funcs-% anywhere (their doc
// comment in another parent included); funcs counts the functions that
// fit, files the files.
func BenchmarkSplitCode(b *testing.B) {
	paths, texts := goSources(b)
	def := presetSplitter(b, PresetDefault, 1500, 0, nil)
	lang := presetSplitter(b, string(LanguageGo), 1500, 0, nil)
	cases := []struct {
		name   string
		parent interface{ Split(string) []Chunk }
		child  *Recursive
	}{
		{"separators=Default", def, presetSplitter(b, PresetDefault, 300, 30, nil)},
		{"separators=go", lang, presetSplitter(b, string(LanguageGo), 300, 30, nil)},
		{"boundaries=Sections", codeSectioner(b, LanguageGo, 1500, 150), presetSplitter(b, string(LanguageGo), 300, 30, nil)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			fits, code, withDoc := cutFunctions(b, paths, texts, c.parent, 1500)
			benchPipeline(b, texts, c.parent, c.child)
			b.ReportMetric(float64(fits), "funcs")
			b.ReportMetric(float64(len(texts)), "files")
			b.ReportMetric(code, "cut-code-%")
			b.ReportMetric(withDoc, "cut-funcs-%")
		})
	}
}

// BenchmarkCodeSectionsHostile splits inputs built to be hard on the
// definition finder into parents of 1500 code points (minChunkSize 150):
// deep nesting, one long line, many tiny statements, an unclosed string.
func BenchmarkCodeSectionsHostile(b *testing.B) {
	var nested strings.Builder
	for i := range 3000 {
		nested.WriteString(strings.Repeat(" ", i) + "def f():\n")
	}
	inputs := []struct{ name, text string }{
		{"indent-3000-deep", nested.String()},
		{"braces-100000-deep", strings.Repeat("{\n", 100000) + strings.Repeat("}\n", 100000)},
		{"one-1MB-line", strings.Repeat("x = f(a, b) + g[c]; ", 50000)},
		{"200000-statements", strings.Repeat("x=1\n", 200000)},
		{"unclosed-string", "x = `" + strings.Repeat("func a() {}\n", 100000)},
	}
	for _, lang := range []Language{LanguageGo, LanguagePython} {
		s := codeSectioner(b, lang, 1500, 150)
		for _, in := range inputs {
			b.Run(string(lang)+"/"+in.name, func(b *testing.B) {
				b.SetBytes(int64(len(in.text)))
				b.ReportAllocs()
				for b.Loop() {
					s.Split(in.text)
				}
			})
		}
	}
}
