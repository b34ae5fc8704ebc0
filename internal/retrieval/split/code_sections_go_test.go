package split

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// goFunc is a top-level function of a Go file as go/parser sees it: the
// name a section of it must carry and its code-point span, doc comment
// included.
type goFunc struct {
	name       string
	start, end int
	body       int // where the declaration starts, after its doc comment
}

// goFuncs parses a Go file with the standard library's parser.
func goFuncs(t testing.TB, path, src string) []goFunc {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	runeAt := func(p token.Pos) int { return utf8.RuneCountInString(src[:fset.Position(p).Offset]) }
	var out []goFunc
	for _, d := range file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		from := fn.Pos()
		if fn.Doc != nil {
			from = fn.Doc.Pos()
		}
		sig := src[fset.Position(fn.Pos()).Offset:fset.Position(fn.Name.End()).Offset]
		out = append(out, goFunc{name: sig, start: runeAt(from), end: runeAt(fn.End()), body: runeAt(fn.Pos())})
	}
	return out
}

// TestCodeSectionsFindEveryGoFunction checks the sections of every Go file
// of this module against go/parser: every top-level function gets a
// section under its own name, and one that fits the parent size is one
// section, whole, with its doc comment.
func TestCodeSectionsFindEveryGoFunction(t *testing.T) {
	const size = 1500
	s := codeSectioner(t, LanguageGo, size, 0)
	files, funcs, whole := 0, 0, 0
	err := filepath.WalkDir(filepath.Join("..", "..", ".."), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		src := string(mustRead(t, path))
		got := s.SplitHeaded(src)
		checkCodeSpans(t, src, got, size)
		files++
		for _, fn := range goFuncs(t, path, src) {
			funcs++
			named, contained := false, false
			for _, c := range got {
				end := c.Start + utf8.RuneCountInString(c.Text)
				if len(c.Headings) > 0 && c.Headings[0] == fn.name {
					named = true
					contained = contained || (c.Start <= fn.start && fn.end <= end)
				}
			}
			if !named {
				t.Errorf("%s: no section named %q", path, fn.name)
			}
			if fn.end-fn.start <= size {
				if !contained {
					t.Errorf("%s: %s fits %d code points but is not one section", path, fn.name, size)
				}
				whole++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d Go files: %d top-level functions each under its own name, %d that fit %d code points kept whole", files, funcs, whole, size)
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
