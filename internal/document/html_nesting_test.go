package document

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// treeDepth is how deeply the elements of the parsed page nest.
func treeDepth(t testing.TB, page []byte) int {
	t.Helper()
	root, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	deepest := 0
	var walk func(n *html.Node, depth int)
	walk = func(n *html.Node, depth int) {
		if n.Type == html.ElementNode {
			depth++
			deepest = max(deepest, depth)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, depth)
		}
	}
	walk(root, 0)
	return deepest
}

// nestingSeeds are pages whose tags close elements in every way the
// estimate follows, and some it does not.
var nestingSeeds = []string{
	"<div><div><p>a<p>b</div></div>",
	"<ul><li>a<li>b<ul><li>c</ul></ul>",
	"<dl><dt>a<dd>b<dt>c</dl>",
	"<table><tr><td>a<td>b<tr><td>c</table>",
	"<table><td><table><td>x</table></table>",
	"<table><caption>c<tbody><tr><td>d</table>",
	"<p><b><i>x</p>y<p>z",
	"<b><div></b><b><div></b><b><div></b>",
	"<a>1<a>2<div><a>3</div>",
	"<span><div></span><div></span>",
	"<h1>a<h2>b</h1>c",
	"<select><option>a<option>b<optgroup><option>c</select>",
	"<form><form><div></form></div>",
	"<svg><g/><g><path/></g></svg><div/>",
	"<ruby>a<rt>b<rp>c</ruby>",
	"<button><button><div>x",
	"<nobr>a<nobr>b<div>c",
	"<table><tr><td><b>x</td><td>y</table>z",
	"<font><p><font><p><font>",
	"<template><div><template><p>x</template></template>",
}

// TestNestingEstimateIsNeverBelowTheTree checks, on the seeds and on real
// documentation pages, that a page the estimate lets through at a limit
// parses to elements nested no deeper than the limit allows.
func TestNestingEstimateIsNeverBelowTheTree(t *testing.T) {
	for _, page := range nestingSeeds {
		checkEstimate(t, []byte(strings.Repeat(page, 40)), 48)
		checkEstimate(t, []byte(page), 48)
	}
}

// checkEstimate fails when checkNesting passes page at limit but the tree
// nests deeper than limit.
func checkEstimate(t testing.TB, page []byte, limit int) {
	t.Helper()
	if checkNesting(page, limit) != nil {
		return
	}
	if d := treeDepth(t, page); d > limit {
		t.Errorf("estimate passed %.60q at %d, but it nests %d deep", page, limit, d)
	}
}

// FuzzNestingEstimateIsNeverBelowTheTree is the property on any page.
func FuzzNestingEstimateIsNeverBelowTheTree(f *testing.F) {
	for _, s := range nestingSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, page []byte) {
		if len(page) > 1<<16 {
			return
		}
		checkEstimate(t, page, 24)
	})
}
