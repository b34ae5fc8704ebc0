package document

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"golang.org/x/net/html"

	dt "github.com/parentrag/parentrag/internal/document/documenttest"
)

// wordCounts counts the words of text.
func wordCounts(text string) map[string]int {
	m := map[string]int{}
	for _, w := range dt.Words(text) {
		m[w]++
	}
	return m
}

// overlap is the share of the words of ref (counted with repeats) that
// got holds too.
func overlap(ref, got map[string]int) float64 {
	total, hit := 0, 0
	for w, n := range ref {
		total += n
		hit += min(n, got[w])
	}
	if total == 0 {
		return 1
	}
	return float64(hit) / float64(total)
}

// pdfReferences are the public PDF manuals compared with pdftotext, and
// the least share of its words parentrag must recover from each (running
// headers and footers, which pdftotext keeps, are dropped on purpose).
var pdfReferences = []struct {
	path, pkg string
	recall    float64
}{
	{dt.BashRefPDF, dt.BashDocPackage, 0.95},
	{dt.DebmakePDF, dt.DebmakePackage, 0.95},
}

// TestPDFWordsAgainstPdftotext compares the words read from real PDF
// manuals with those of poppler's pdftotext: recall is the share of
// pdftotext's words parentrag has, precision the share of parentrag's
// words pdftotext has.
func TestPDFWordsAgainstPdftotext(t *testing.T) {
	tool := dt.Program(t, "pdftotext", dt.PopplerPackage)
	for _, ref := range pdfReferences {
		t.Run(filepath.Base(ref.path), func(t *testing.T) {
			path := dt.Installed(t, ref.path, ref.pkg)
			want, err := exec.Command(tool, "-enc", "UTF-8", path, "-").Output()
			if err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(path)
			docs, err := Read(PDF, path, "x", data)
			if err != nil {
				t.Fatal(err)
			}
			refWords, gotWords := wordCounts(string(want)), wordCounts(docs[0].Text)
			recall, precision := overlap(refWords, gotWords), overlap(gotWords, refWords)
			t.Logf("%s: %d pages, recall %.2f%%, precision %.2f%% against pdftotext", filepath.Base(path), len(docs[0].PageStarts), 100*recall, 100*precision)
			if recall < ref.recall || precision < 0.97 {
				t.Errorf("recall %.4f (want at least %.2f), precision %.4f (want at least 0.97)", recall, ref.recall, precision)
			}
		})
	}
}

// htmlReferences are the public HTML sites compared with w3m.
var htmlReferences = []struct {
	dir, glob, pkg string
}{
	{filepath.Dir(dt.BashRefHTML), "bashref.html", dt.BashDocPackage},
	{dt.DebmakeHTML, "*.en.html", dt.DebmakePackage},
	{filepath.Join(dt.CMakeHTML, "command"), "*.html", dt.CMakePackage},
}

// TestHTMLMainContentAgainstW3m compares, page by page, the words
// parentrag reads from real documentation sites with the visible text
// w3m renders: recall of the main content is the share of the words w3m
// shows for the main content (the element the main-content rule chooses,
// less the elements it drops) that parentrag keeps, a measure of the
// conversion; chrome dropped is the share of the words w3m shows for the
// whole page that parentrag leaves out, a measure of the rule.
func TestHTMLMainContentAgainstW3m(t *testing.T) {
	tool := dt.Program(t, "w3m", "w3m")
	for _, ref := range htmlReferences {
		t.Run(filepath.Base(ref.dir)+"/"+ref.glob, func(t *testing.T) {
			pages, _ := filepath.Glob(filepath.Join(dt.Installed(t, ref.dir, ref.pkg), ref.glob))
			sort.Strings(pages)
			var mainRef, pageRef, got map[string]int = map[string]int{}, map[string]int{}, map[string]int{}
			for _, page := range pages {
				data, _ := os.ReadFile(page)
				docs, err := Read(HTML, page, "x", data)
				if err != nil {
					t.Fatalf("%s: %v", page, err)
				}
				addCounts(got, wordCounts(docs[0].Text))
				addCounts(pageRef, wordCounts(w3mDump(t, tool, data)))
				addCounts(mainRef, wordCounts(w3mDump(t, tool, mainHTML(t, data))))
			}
			recall, kept := overlap(mainRef, got), overlap(pageRef, got)
			t.Logf("%d pages: main-content recall %.2f%%, chrome dropped %.2f%% of the page's words", len(pages), 100*recall, 100*(1-kept))
			if len(pages) == 0 || recall < 0.97 {
				t.Errorf("main-content recall %.4f over %d pages, want at least 0.97", recall, len(pages))
			}
		})
	}
}

// addCounts adds b's counts to a.
func addCounts(a, b map[string]int) {
	for w, n := range b {
		a[w] += n
	}
}

// w3mDump is the text w3m shows for an HTML page.
func w3mDump(t *testing.T, tool string, page []byte) string {
	t.Helper()
	cmd := exec.Command(tool, "-dump", "-T", "text/html", "-cols", "200", "-O", "UTF-8", "-I", "UTF-8")
	cmd.Stdin = bytes.NewReader(page)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("w3m: %v", err)
	}
	return string(out)
}

// mainHTML is the page cut down to the main content the rule chooses,
// without the elements it drops.
func mainHTML(t *testing.T, page []byte) []byte {
	t.Helper()
	text, err := decodeHTML(page)
	if err != nil {
		t.Fatal(err)
	}
	root, err := html.Parse(bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString("<html><head><meta charset=\"utf-8\"></head><body>")
	for _, n := range mainContent(root) {
		removeDropped(n)
		if err := html.Render(&b, n); err != nil {
			t.Fatal(err)
		}
	}
	b.WriteString("</body></html>")
	return b.Bytes()
}

// removeDropped removes the elements under n that the rule drops.
func removeDropped(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.ElementNode && (dropped(c) || isPermalink(c)) {
			n.RemoveChild(c)
		} else {
			removeDropped(c)
		}
		c = next
	}
}

// TestRealPagesPassTheNestingEstimate checks that the estimate lets every
// page of the real sites through, and never below their tree.
func TestRealPagesPassTheNestingEstimate(t *testing.T) {
	for _, ref := range htmlReferences {
		pages, _ := filepath.Glob(filepath.Join(dt.Installed(t, ref.dir, ref.pkg), ref.glob))
		for _, page := range pages {
			data, _ := os.ReadFile(page)
			if err := checkNesting(data, DefaultLimits.MaxDepth); err != nil {
				t.Errorf("%s: %v", page, err)
			}
			checkEstimate(t, data, 32)
		}
	}
}
