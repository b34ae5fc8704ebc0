package inspector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/inspector"
	"github.com/parentrag/parentrag/internal/policy/policytest"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/bundle/bundletest"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/server"
)

// These tests open the inspector in a real headless Chromium, driven
// through the Chrome DevTools Protocol, against the real query server of a
// real index, and read what the page drew from its DOM.
//
// With PARENTRAG_INSPECTOR_SCREENSHOTS set to a directory they also save
// the screenshots of the docs there (query.png, preview.png).

// browserNames are the names Chromium goes by on PATH.
var browserNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"}

// newBrowser starts a headless Chromium for the test and returns the
// context of its one tab; it fails the test when there is no Chromium.
// Exceptions the page throws and errors it logs, other than the failed
// requests a test expects, fail the test when it ends.
func newBrowser(t *testing.T, expectedErrors ...string) context.Context {
	t.Helper()
	path := findBrowser(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1280, 860))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancelTab)
	t.Cleanup(cancelTimeout)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 860)); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	watchConsole(t, ctx, expectedErrors)
	return ctx
}

// findBrowser returns the path of Chromium, failing the test with what to
// install when there is none: the test drives a real browser and has no
// stand-in.
func findBrowser(t *testing.T) string {
	t.Helper()
	for _, name := range browserNames {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Fatalf("no Chromium on PATH (looked for %s): the inspector's browser tests drive a real headless browser; install one (Debian: apt-get install chromium)",
		strings.Join(browserNames, ", "))
	return ""
}

// watchConsole fails the test, when it ends, for each exception the page
// threw and each error it logged that mentions none of expected.
func watchConsole(t *testing.T, ctx context.Context, expected []string) {
	var mu sync.Mutex
	var problems []string
	done := make(chan struct{})
	messages := chromedp.Console(ctx)
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if !m.IsException() && m.Type != "error" || mentionsAny(m.Text, expected) {
				continue
			}
			mu.Lock()
			problems = append(problems, m.String()+" ("+m.URL+")")
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		chromedp.Cancel(ctx)
		<-done
		for _, p := range problems {
			t.Errorf("the page's console: %s", p)
		}
	})
}

func mentionsAny(text string, parts []string) bool {
	for _, p := range parts {
		if strings.Contains(text, p) {
			return true
		}
	}
	return false
}

// run runs the actions in the browser, failing the test on an error.
func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// waitFor waits until a JavaScript expression is true in the page.
func waitFor(t *testing.T, ctx context.Context, what, expression string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expression, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// evaluate runs a JavaScript expression in the page and returns its value.
func evaluate[T any](t *testing.T, ctx context.Context, expression string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expression))
	if err != nil {
		t.Fatalf("evaluating in the page: %v", err)
	}
	return v
}

// screenshot saves the page's viewport as name in the screenshots
// directory, when one is set.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("PARENTRAG_INSPECTOR_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("saved %s (%d KB)", filepath.Join(dir, name), len(png)>>10)
}

// guide is a second document of the index, so that a question finds
// parents in more than one.
func guide() hierarchy.Document {
	return hierarchy.Document{ID: "travel/booking.md", Title: "Booking guide", Text: "# Booking guide\n\n## Hotels\n\n" +
		"Book a hotel room at least a week ahead. The travel desk compares three offers and books the cheapest room near the meeting.\n\n" +
		"## Trains\n\nTrains are booked in second class. A first-class seat is paid back only for journeys over four hours."}
}

// sectionsSpec cuts Markdown into section parents, with heading paths, and
// overlapping children.
func sectionsSpec() v1alpha1.ChunkingPolicySpec {
	return v1alpha1.ChunkingPolicySpec{
		Separators: &v1alpha1.Separators{Preset: v1alpha1.SeparatorsMarkdown},
		Parent:     &v1alpha1.ChunkSize{ChunkSize: 300, Boundaries: v1alpha1.BoundariesSections},
		Child:      &v1alpha1.ChunkSize{ChunkSize: 70, ChunkOverlap: 20},
	}
}

// serveInspector serves a real index of the handbook and the booking
// guide, cut by sectionsSpec, with the inspector enabled and opts' other
// settings; it returns the server's address.
func serveInspector(t *testing.T, opts server.Options) string {
	t.Helper()
	b, err := bundle.Open(policytest.SavePolicy(t, []hierarchy.Document{bundletest.Handbook(), guide()}, sectionsSpec(), "rev-inspector"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	opts.Inspector.Enabled, opts.ShutdownDelay = true, -1
	s := server.New(opts)
	s.SetBundle(b)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts.URL
}

// postJSON posts body to url with token (none when empty) and decodes the
// 200 answer into v.
func postJSON(t *testing.T, url, token, body string, v any) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s", url, resp.StatusCode, data)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

// renderedResult is what the query view drew of one parent.
type renderedResult struct {
	ParentID    string   `json:"parentId"`
	HeadingPath []string `json:"headingPath"`
	// Marked is, for each match by its index, the text of the marks that
	// name it, in order.
	Marked map[string]string `json:"marked"`
	Scores []string          `json:"scores"`
}

// renderedResultsJS reads the query view's result cards.
const renderedResultsJS = `[...document.querySelectorAll("#results li.result")].map((card) => {
  const marked = {};
  for (const m of card.querySelectorAll("mark.hit")) {
    for (const i of m.dataset.matches.split(" ")) marked[i] = (marked[i] || "") + m.textContent;
  }
  return {
    parentId: card.dataset.parentId,
    headingPath: [...card.querySelectorAll(".heading-path li")].map((li) => li.textContent),
    marked,
    scores: [...card.querySelectorAll(".matches tbody td:nth-child(3)")].map((td) => td.textContent),
  };
})`

// TestQueryViewHighlightsTheMatchingChildren asks a question in the page
// and checks that each parent the server returns is drawn, in order, with
// its heading path, its matches' scores, and each matching child's text
// marked inside the parent at its offsets; then asks again under a budget
// and checks the marks of trimmed parents, whose text is only the kept
// spans.
func TestQueryViewHighlightsTheMatchingChildren(t *testing.T) {
	url := serveInspector(t, server.Options{})
	ctx := newBrowser(t)
	const question = "book a hotel room"
	run(t, ctx, "asking in the page",
		chromedp.Navigate(url+inspector.Prefix+"#query"),
		chromedp.SetValue(chromedp.CSS("#q"), question),
		chromedp.SetValue(chromedp.CSS("#max-parents"), "3"),
		chromedp.SetValue(chromedp.CSS("#child-top-k"), "4"),
		chromedp.Click(chromedp.CSS("#query-form button")),
		chromedp.WaitVisible(chromedp.CSS("#results mark.hit")))
	var whole server.RetrieveResponse
	postJSON(t, url+"/v1/retrieve", "", fmt.Sprintf(`{"query": %q, "maxParents": 3, "childTopK": 4}`, question), &whole)
	drawn := evaluate[[]renderedResult](t, ctx, renderedResultsJS)
	checkDrawn(t, drawn, whole, whole)
	if len(drawn) < 2 || len(drawn[0].HeadingPath) == 0 {
		t.Fatalf("drew %+v: want parents of both documents with their heading paths", drawn)
	}
	screenshot(t, ctx, "query.png")

	run(t, ctx, "asking under a budget",
		chromedp.SetValue(chromedp.CSS("#budget"), "150"),
		chromedp.Click(chromedp.CSS("#query-form button")))
	waitFor(t, ctx, "the trimmed answer", `document.querySelector("#raw-json").textContent.includes('"trimmed"')`)
	var trimmed server.RetrieveResponse
	postJSON(t, url+"/v1/retrieve", "", fmt.Sprintf(`{"query": %q, "maxParents": 3, "childTopK": 4, "budget": 150}`, question), &trimmed)
	checkDrawn(t, evaluate[[]renderedResult](t, ctx, renderedResultsJS), trimmed, whole)
}

// checkDrawn compares what the page drew with the server's answer: the
// same parents, heading paths and scores, and for each match the text it
// marked, which must be the match's range of the parent's whole text (as
// whole returned it) within the spans the answer kept.
func checkDrawn(t *testing.T, drawn []renderedResult, answer, whole server.RetrieveResponse) {
	t.Helper()
	if len(drawn) != len(answer.Results) {
		t.Fatalf("the page drew %d parents, the server returned %d", len(drawn), len(answer.Results))
	}
	full := map[string][]rune{}
	for _, r := range whole.Results {
		full[r.ParentID] = []rune(r.Text)
	}
	marks := 0
	for i, r := range answer.Results {
		d := drawn[i]
		if d.ParentID != r.ParentID || strings.Join(d.HeadingPath, "/") != strings.Join(r.HeadingPath, "/") || len(d.Scores) != len(r.Matches) {
			t.Errorf("parent %d: drew %s under %v with %d matches, want %s under %v with %d", i, d.ParentID, d.HeadingPath, len(d.Scores), r.ParentID, r.HeadingPath, len(r.Matches))
			continue
		}
		text, ok := full[r.ParentID]
		if !ok {
			t.Fatalf("parent %s is not in the answer without a budget", r.ParentID)
		}
		for j, m := range r.Matches {
			want := keptText(text, m.Start, m.End, r.Spans)
			if got := d.Marked[fmt.Sprint(j)]; got != want {
				t.Errorf("parent %d match %d [%d, %d): marked %q, want %q", i, j, m.Start, m.End, got, want)
			}
			if score := fmt.Sprintf("%.3f", m.Score); d.Scores[j] != score {
				t.Errorf("parent %d match %d: score %s drawn, want %s", i, j, d.Scores[j], score)
			}
			marks += len(want)
		}
	}
	if marks == 0 {
		t.Errorf("nothing was marked: the answer %+v has no located match", answer)
	}
}

// keptText is the text of [start, end) of a parent's whole text that the
// spans keep (all of it without spans), in order.
func keptText(text []rune, start, end int, spans []retrieve.Interval) string {
	if start < 0 {
		return ""
	}
	if len(spans) == 0 {
		return string(text[start:end])
	}
	var b strings.Builder
	for _, s := range spans {
		if a, z := max(start, s.Start), min(end, s.End); z > a {
			b.WriteString(string(text[a:z]))
		}
	}
	return b.String()
}

// renderedLayout is what the preview drew of one policy.
type renderedLayout struct {
	Policy      string            `json:"policy"`
	ParentMarks int               `json:"parentMarks"`
	ParentEnds  int               `json:"parentEnds"`
	Text        string            `json:"text"`
	Children    map[string]string `json:"children"`
	Bars        int               `json:"bars"`
	BarCounts   []int             `json:"barCounts"`
}

// renderedLayoutsJS reads the preview's columns.
const renderedLayoutsJS = `[...document.querySelectorAll("#layouts .layout")].map((l) => {
  const cut = l.querySelector(".cut");
  const children = {};
  for (const s of cut.querySelectorAll(".child")) {
    for (const id of s.dataset.children.split(" ")) children[id] = (children[id] || "") + s.textContent;
  }
  return {
    policy: l.dataset.policy,
    parentMarks: cut.querySelectorAll(".pstart").length,
    parentEnds: cut.querySelectorAll(".pend").length,
    text: [...cut.querySelectorAll(".child, .gap")].map((s) => s.textContent).join(""),
    children,
    bars: l.querySelectorAll(".bars .bar").length,
    barCounts: [...l.querySelectorAll(".bars")].map((b) => Number(b.dataset.count)),
  };
})`

// travelPolicy is a document of a few sections, long enough for each
// policy to cut it into several parents.
func travelPolicy() hierarchy.Document {
	return hierarchy.Document{ID: "travel-policy.md", Text: `# Travel policy

Every trip is booked through the travel desk, which keeps the bookings, the receipts and the approvals in one place.

## Booking

### Hotels

A hotel room may cost up to 180 euros a night in a capital and up to 120 euros elsewhere. Book the room at least a week ahead, near the meeting, and say when the stay ends so that no night is paid twice.

### Trains and flights

Trains are booked in second class. A first-class seat is paid back only for journeys over four hours. Flights are booked in economy; a journey over eight hours may be booked in premium economy with the approval of a director.

## Expenses

### Meals

Meals are paid as a daily allowance of 40 euros. Breakfast at the hotel is not paid twice, and a dinner with a customer is an expense of the project, not of the allowance.

### Receipts

Keep every receipt over 25 euros. Photograph it on the day and send it to the travel desk with the trip's number; a missing receipt is paid back only with a written reason.

## Safety

Tell the travel desk where you stay. In an emergency, call the number on the back of your badge: it answers day and night and can rebook a journey at once.
`}
}

// TestPreviewDrawsTheBoundaries pastes a document and two policies into
// the preview and checks that each column draws a marker where each of
// its parents starts and ends, each child over exactly its own text, the
// whole document and nothing else, and histograms of every parent and
// child.
func TestPreviewDrawsTheBoundaries(t *testing.T) {
	url := serveInspector(t, server.Options{})
	ctx := newBrowser(t)
	doc := travelPolicy()
	policies := []string{
		"spec:\n  parent:\n    chunkSize: 400\n  child:\n    chunkSize: 100\n    chunkOverlap: 20\n",
		"spec:\n  separators:\n    preset: Markdown\n  parent:\n    chunkSize: 700\n    boundaries: Sections\n  child:\n    chunkSize: 160\n",
	}
	run(t, ctx, "previewing in the page",
		chromedp.Navigate(url+inspector.Prefix+"#preview"),
		chromedp.SetValue(chromedp.CSS("#doc-name"), doc.ID),
		chromedp.SetValue(chromedp.CSS("#doc-text"), doc.Text),
		chromedp.SetValue(chromedp.CSS("#policy-a"), policies[0]),
		chromedp.SetValue(chromedp.CSS("#policy-b"), policies[1]),
		chromedp.Click(chromedp.CSS("#preview-form button")),
		chromedp.WaitVisible(chromedp.CSS(`#layouts .layout[data-policy="Policy B"] .pstart`)))
	var want inspector.Preview
	body, _ := json.Marshal(inspector.PreviewRequest{Name: doc.ID, Document: doc.Text, Policies: policies})
	postJSON(t, url+inspector.PreviewPath, "", string(body), &want)
	drawn := evaluate[[]renderedLayout](t, ctx, renderedLayoutsJS)
	if len(drawn) != 2 {
		t.Fatalf("drew %d columns, want 2", len(drawn))
	}
	runes := []rune(doc.Text)
	for i, d := range drawn {
		l := want.Layouts[i]
		if d.ParentMarks != len(l.Parents) || d.ParentEnds != len(l.Parents) || len(d.Children) != len(l.Children) {
			t.Errorf("%s: drew %d parent starts, %d ends and %d children; the policy cuts %d parents and %d children",
				d.Policy, d.ParentMarks, d.ParentEnds, len(d.Children), len(l.Parents), len(l.Children))
		}
		if d.Text != doc.Text {
			t.Errorf("%s: the drawn runs read %q, want the document", d.Policy, d.Text)
		}
		for j, c := range l.Children {
			if got, want := d.Children[fmt.Sprint(j)], string(runes[c.Start:c.End]); got != want {
				t.Errorf("%s child %d: drawn over %q, want %q", d.Policy, j, got, want)
			}
		}
		if d.Bars != 24 || len(d.BarCounts) != 2 || d.BarCounts[0] != len(l.Parents) || d.BarCounts[1] != len(l.Children) {
			t.Errorf("%s: %d bars over %v units, want two histograms of 12 over %d parents and %d children", d.Policy, d.Bars, d.BarCounts, len(l.Parents), len(l.Children))
		}
	}
	if len(want.Layouts[0].Parents) == len(want.Layouts[1].Parents) {
		t.Errorf("both policies cut %d parents: the test compares nothing", len(want.Layouts[0].Parents))
	}
	run(t, ctx, "making room for the columns", chromedp.EmulateViewport(1280, 1400))
	screenshot(t, ctx, "preview.png")
}

// TestPageAsksForTheTokenTheServerWants opens the page on a server with
// bearer tokens: the page loads without one, a question without the token
// is refused with the server's 401 shown, and with the token the answer is
// drawn.
func TestPageAsksForTheTokenTheServerWants(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app"), []byte("token-of-app\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := server.NewTokenDir(dir, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	url := serveInspector(t, server.Options{Auth: tokens, Registry: prometheus.NewRegistry()})
	ctx := newBrowser(t, "401")
	run(t, ctx, "asking without a token",
		chromedp.Navigate(url+inspector.Prefix),
		chromedp.SetValue(chromedp.CSS("#q"), "hotel room"),
		chromedp.Click(chromedp.CSS("#query-form button")))
	waitFor(t, ctx, "the refusal", `document.querySelector("#query-status.error") !== null`)
	status := evaluate[string](t, ctx, `document.querySelector("#query-status").textContent`)
	if !strings.Contains(status, "401") || !strings.Contains(status, "bearer token") {
		t.Errorf("status without a token: %q, want the 401 and a hint to enter a token", status)
	}
	run(t, ctx, "asking with the token",
		chromedp.SetValue(chromedp.CSS("#token"), "token-of-app"),
		chromedp.Click(chromedp.CSS("#query-form button")),
		chromedp.WaitVisible(chromedp.CSS("#results mark.hit")))
	if n := evaluate[int](t, ctx, `document.querySelectorAll("#results li.result").length`); n == 0 {
		t.Errorf("no parent drawn with the token")
	}
}
