package document_test

import (
	"strings"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/document"
)

// sitePage is a page of a documentation site: a banner, navigation, a
// sidebar, a search form, scripts, hidden parts and a footer around a main
// element that holds headings, lists, a table, code and a quote.
const sitePage = `<!DOCTYPE html>
<html lang="en"><head>
<meta charset="utf-8"><title>Configuring the proxy &mdash; Acme Docs</title>
<style>body { color: black }</style>
<script>var tracking = "never text";</script>
</head><body>
<header class="site-header"><a href="/">Acme Docs</a> <span>v2</span></header>
<nav class="navbar"><ul><li><a href="/install">Install</a></li><li><a href="/run">Run</a></li></ul></nav>
<div class="sidebar-wrapper"><p>Sidebar links</p></div>
<form role="search"><input name="q"><button>Search</button></form>
<div role="navigation"><a href="/prev">Previous</a></div>
<main>
<h1>Configuring the proxy<a class="headerlink" href="#top">¶</a></h1>
<div id="breadcrumbs">Home / Proxy</div>
<p>The proxy reads   its configuration
from <code>/etc/acme/proxy.conf</code> &amp; reloads it on <b>SIGHUP</b>.</p>
<h2>Upstreams</h2>
<p>Each upstream has:</p>
<ul>
<li>a host,</li>
<li>a port, and
  <ul><li>an optional weight</li></ul>
</li>
</ul>
<ol start="3"><li>Edit the file.</li><li>Reload.</li></ol>
<table>
<thead><tr><th>Option</th><th>Default</th></tr></thead>
<tbody><tr><td>retries</td><td>3</td></tr><tr><td>timeout | read</td><td>30s</td></tr></tbody>
</table>
<pre><code class="language-ini">[upstream]
host = a.example   # the first
port = 8080</code></pre>
<blockquote><p>Reloading never drops a connection.</p></blockquote>
<p hidden>Hidden paragraph</p>
<p style="display: none">Invisible paragraph</p>
<div aria-hidden="true">Decoration</div>
<aside><p>A note in the margin</p></aside>
<h3>Line breaks</h3>
<p>First line<br>second line</p>
<p># not a heading</p>
<template><p>Template text</p></template>
<noscript>Enable scripts</noscript>
</main>
<footer>Copyright Acme</footer>
<script>more();</script>
</body></html>`

// sitePageMarkdown is what sitePage reads as.
const sitePageMarkdown = "# Configuring the proxy\n\n" +
	"The proxy reads its configuration from /etc/acme/proxy.conf & reloads it on SIGHUP.\n\n" +
	"## Upstreams\n\n" +
	"Each upstream has:\n\n" +
	"- a host,\n" +
	"- a port, and\n" +
	"  - an optional weight\n\n" +
	"3. Edit the file.\n" +
	"4. Reload.\n\n" +
	"| Option | Default |\n" +
	"| retries | 3 |\n" +
	"| timeout \\| read | 30s |\n\n" +
	"```ini\n[upstream]\nhost = a.example   # the first\nport = 8080\n```\n\n" +
	"> Reloading never drops a connection.\n\n" +
	"### Line breaks\n\n" +
	"First line\nsecond line\n\n" +
	"\\# not a heading\n"

func readHTML(t *testing.T, page string) (string, string) {
	t.Helper()
	docs, err := document.Read(document.HTML, "page.html", "page.html", []byte(page))
	if err != nil {
		t.Fatal(err)
	}
	return docs[0].Title, docs[0].Text
}

// TestHTMLMainContentBecomesMarkdown checks the conversion of a
// documentation page: only its main content, as Markdown.
func TestHTMLMainContentBecomesMarkdown(t *testing.T) {
	title, text := readHTML(t, sitePage)
	if title != "Configuring the proxy — Acme Docs" {
		t.Errorf("title %q", title)
	}
	if text != sitePageMarkdown {
		t.Errorf("text\n%s\nwant\n%s", text, sitePageMarkdown)
	}
}

// TestHTMLWithoutMainReadsArticlesElseBody checks the fallbacks of the
// main-content rule, and the title taken from the first h1.
func TestHTMLWithoutMainReadsArticlesElseBody(t *testing.T) {
	for name, tc := range map[string]struct{ page, title, text string }{
		"articles": {`<html><body><nav>Menu</nav><article><h1>One</h1><p>First.</p><article><p>Nested.</p></article></article>
<div>Between</div><article><h2>Two</h2><p>Second.</p></article><footer>Foot</footer></body></html>`,
			"One", "# One\n\nFirst.\n\nNested.\n\n## Two\n\nSecond.\n"},
		"body": {`<html><body><header><h1>Site</h1></header><div class="content"><h1>Page</h1><p>Body text.</p></div>
<div class="footer">Foot</div></body></html>`,
			"Page", "# Page\n\nBody text.\n"},
		"header inside an article is kept": {`<article><header><h1>Post</h1></header><p>Text.</p><footer>By me</footer></article>`,
			"Post", "# Post\n\nText.\n\nBy me\n"},
		"role main": {`<div class="sphinxsidebar" role="navigation">Index</div><div class="body" role="main"><h1>Doc</h1><p>Words.</p></div>`,
			"Doc", "# Doc\n\nWords.\n"},
		"XHTML with declared entities": {`<?xml version="1.0"?>
<!DOCTYPE html [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>
<html xmlns="http://www.w3.org/1999/xhtml"><body><p>Laugh: &c;</p></body></html>`,
			"", "Laugh: &c;\n"},
	} {
		t.Run(name, func(t *testing.T) {
			title, text := readHTML(t, tc.page)
			if title != tc.title || text != tc.text {
				t.Errorf("title %q text\n%q\nwant title %q text\n%q", title, text, tc.title, tc.text)
			}
		})
	}
}

// TestHTMLCharsetIsDecoded reads a Latin-1 page that says so.
func TestHTMLCharsetIsDecoded(t *testing.T) {
	docs, err := document.Read(document.HTML, "p.html", "p", []byte("<html><head><meta charset=\"iso-8859-1\"></head><body><p>caf\xe9 cr\xe8me</p></body></html>"))
	if err != nil || docs[0].Text != "café crème\n" {
		t.Fatalf("read %+v, %v; want café crème", docs, err)
	}
}

// TestHTMLHostilePagesAreBounded reads pages made to exhaust a parser:
// each is refused, with its reason, or read, within bounded time and
// memory.
func TestHTMLHostilePagesAreBounded(t *testing.T) {
	rep := strings.Repeat
	for name, tc := range map[string]struct {
		page string
		want string // "" when the page must be read
	}{
		"a million nested divs":      {rep("<div>", 1_000_000) + "deep", "nest deeper than 512"},
		"nested lists":               {rep("<ul><li>", 200_000) + "deep", "nest deeper than 512"},
		"divs closing no span":       {"<span>" + rep("<div></span>", 200_000), "nest deeper than 512"},
		"self-closed divs":           {rep("<div/>", 500_000), "nest deeper than 512"},
		"formatting reopened":        {"<p>" + rep(`<b class="x">`, 60) + "</p>" + rep("<p>x</p>", 2_000_000), "more than 2000000 elements"},
		"formatting left open":       {rep(`<font size="1">`, 100) + "text", "more than 64 formatting elements"},
		"links never closed":         {rep(`<a href="#">link `, 200_000), ""},
		"paragraphs never closed":    {rep("<p>paragraph ", 300_000), ""},
		"list items never closed":    {"<ul>" + rep("<li>item ", 300_000) + "</ul>", ""},
		"table cells never closed":   {"<table>" + rep("<tr><td>cell ", 200_000) + "</table>", ""},
		"headings in headings":       {rep("<h1>a<h2>b", 200_000), ""},
		"a page over the size limit": {rep("x", 33<<20), "over the 33554432-byte limit"},
	} {
		t.Run(name, func(t *testing.T) {
			if len(tc.page) > 1<<20 {
				skipShort(t)
			}
			var err error
			bounded(t, 20*time.Second, 1<<30, func() {
				_, err = document.Read(document.HTML, "h.html", "h.html", []byte(tc.page))
			})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "h.html")):
				t.Errorf("error %v, want one naming h.html and saying %q", err, tc.want)
			}
		})
	}
}

// TestHTMLTextOverTheLimitIsRefused checks the bound on converted text.
func TestHTMLTextOverTheLimitIsRefused(t *testing.T) {
	l := document.DefaultLimits
	l.MaxTextBytes = 1000
	_, err := l.Read(document.HTML, "h.html", "h", []byte("<p>"+strings.Repeat("word ", 300)+"</p>"))
	if err == nil || !strings.Contains(err.Error(), "over 1000 bytes") {
		t.Errorf("error %v, want the text limit named", err)
	}
}
