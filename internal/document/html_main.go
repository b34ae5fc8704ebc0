package document

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// mainContent is the part of a page that is read: its first main element
// (or element with role="main"); without one, its articles that are not
// inside another article, together; without those, its body. The result
// is the node(s) to convert, in document order.
func mainContent(root *html.Node) []*html.Node {
	if m := findFirst(root, isMain); m != nil {
		return []*html.Node{m}
	}
	var articles []*html.Node
	walkElements(root, func(n *html.Node) bool {
		if n.DataAtom == atom.Article && !dropped(n) {
			articles = append(articles, n)
			return false // an article inside it is part of it
		}
		return !dropped(n)
	})
	if len(articles) > 0 {
		return articles
	}
	if body := findFirst(root, func(n *html.Node) bool { return n.DataAtom == atom.Body }); body != nil {
		return []*html.Node{body}
	}
	return []*html.Node{root}
}

// isMain reports whether n is the page's main content.
func isMain(n *html.Node) bool {
	return n.DataAtom == atom.Main || strings.EqualFold(attr(n, "role"), "main")
}

// dropped reports whether an element and its descendants are left out of
// the main content: elements that are never text (scripts, styles,
// templates, embedded objects, form controls), page chrome (nav, aside,
// form, and header and footer outside an article, aside, main, nav or
// section), hidden elements (the hidden attribute, aria-hidden="true",
// an inline style with display:none or visibility:hidden), elements
// whose role is navigation, banner, contentinfo, complementary, search,
// menu, menubar or toolbar, and elements whose id or one of whose
// classes is a table of contents (navigationNames) or, split at '-' and
// '_', holds a word that names navigation (navigationWords).
func dropped(n *html.Node) bool {
	if neverText[n.DataAtom] || chrome[n.DataAtom] {
		return true
	}
	if (n.DataAtom == atom.Header || n.DataAtom == atom.Footer) && !inSection(n) {
		return true
	}
	return hidden(n) || navigationRoles[strings.ToLower(attr(n, "role"))] || namesNavigation(n)
}

// neverText are elements whose content is not text a reader sees.
var neverText = atomSet(atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Iframe, atom.Object,
	atom.Embed, atom.Canvas, atom.Svg, atom.Button, atom.Select, atom.Textarea, atom.Input, atom.Head)

// chrome are elements that frame a page rather than say what it is about.
var chrome = atomSet(atom.Nav, atom.Aside, atom.Form)

// navigationRoles are ARIA roles of page chrome.
var navigationRoles = map[string]bool{"navigation": true, "banner": true, "contentinfo": true,
	"complementary": true, "search": true, "menu": true, "menubar": true, "toolbar": true}

// navigationWords are the words of a class or id that mark navigation:
// menus, sidebars, breadcrumbs, tables of contents, page footers, the
// navigation bars of DocBook (navheader, navfooter) and Sphinx
// (sphinxsidebar), skip links, and the permalink anchors beside headings.
var navigationWords = map[string]bool{"nav": true, "navbar": true, "navigation": true, "navheader": true,
	"navfooter": true, "navlinks": true, "menu": true, "menubar": true, "sidebar": true,
	"sphinxsidebar": true, "breadcrumb": true, "breadcrumbs": true, "pagination": true,
	"pager": true, "skiplink": true, "footer": true, "headerlink": true, "permalink": true}

// navigationNames are whole class names and ids of tables of contents
// (DocBook's toc, Sphinx's localtoc): "toc" alone, as a word of a longer
// name it may be a heading's link back to one.
var navigationNames = map[string]bool{"toc": true, "localtoc": true, "table-of-contents": true}

// inSection reports whether n lies inside an article, aside, main, nav or
// section element: a header or footer there belongs to that section.
func inSection(n *html.Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		switch p.DataAtom {
		case atom.Article, atom.Aside, atom.Main, atom.Nav, atom.Section:
			return true
		}
	}
	return false
}

// hidden reports whether n is hidden from a reader.
func hidden(n *html.Node) bool {
	if hasAttr(n, "hidden") || strings.EqualFold(attr(n, "aria-hidden"), "true") {
		return true
	}
	style := strings.ToLower(strings.Join(strings.Fields(attr(n, "style")), ""))
	return strings.Contains(style, "display:none") || strings.Contains(style, "visibility:hidden")
}

// namesNavigation reports whether n's id or one of its classes holds a
// navigation word.
func namesNavigation(n *html.Node) bool {
	names := strings.Fields(attr(n, "class"))
	if id := attr(n, "id"); id != "" {
		names = append(names, id)
	}
	for _, name := range names {
		if navigationNames[strings.ToLower(name)] {
			return true
		}
		for _, word := range strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r == '-' || r == '_' }) {
			if navigationWords[word] {
				return true
			}
		}
	}
	return false
}

// attr is the value of n's attribute key, or "".
func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

// hasAttr reports whether n has the attribute key.
func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return true
		}
	}
	return false
}
