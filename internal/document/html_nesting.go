package document

import (
	"bytes"
	"fmt"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The HTML parser's tree construction looks down its stack of open
// elements for many start and end tags, so a page nested n deep costs
// about n per tag; and formatting elements (b, i, font...) that a
// paragraph closed while they were open are created again for every
// later run of text. checkNesting follows the page's tags before it is
// parsed, as the parser would stack them, and refuses a page that would
// nest deeper than MaxDepth or create more than maxHTMLElements elements:
// the parser's time is then bounded by the page's size times MaxDepth,
// and its memory by the element count.

// maxHTMLElements bounds the elements the parser may create for one page.
const maxHTMLElements = 2_000_000

// checkNesting refuses a page whose elements would nest deeper than
// maxDepth or number more than maxHTMLElements, as estimated from its
// tags. The estimate may be higher than what the parser builds, never
// lower: where a rule of the HTML standard is not followed here, it is
// one that would close elements.
func checkNesting(data []byte, maxDepth int) error {
	z := html.NewTokenizer(bytes.NewReader(data))
	e := newNestEstimate()
	for {
		switch z.Next() {
		case html.ErrorToken:
			return nil // io.EOF: the tokenizer reports nothing else for in-memory input
		case html.StartTagToken:
			e.start(tagAtom(z), false)
		case html.SelfClosingTagToken:
			e.start(tagAtom(z), true)
		case html.EndTagToken:
			e.end(tagAtom(z))
		case html.TextToken:
			e.reopenFormatting()
		default:
			continue
		}
		if e.depth() > maxDepth {
			return fmt.Errorf("HTML elements nest deeper than %d (the limit)", maxDepth)
		}
		if len(e.active) > maxActiveFormatting {
			return fmt.Errorf("HTML leaves more than %d formatting elements (b, i, font...) open (the limit)", maxActiveFormatting)
		}
		if e.created > maxHTMLElements {
			return fmt.Errorf("HTML page makes more than %d elements (the limit)", maxHTMLElements)
		}
	}
}

// tagAtom is the atom of the tag the tokenizer is on; unknown names share
// the zero atom, which no rule names.
func tagAtom(z *html.Tokenizer) atom.Atom {
	name, _ := z.TagName()
	return atom.Lookup(name)
}

// class is a set of elements a rule looks for on the stack.
type class int

const (
	classSpecial     class = iota // the standard's "special" category
	classScope                    // the boundaries of "has an element in scope"
	classButtonScope              // ... in button scope
	classListItemEnd              // what stops the search for an li to close
	classDefEnd                   // what stops the search for a dd or dt to close
	classTableScope               // the boundaries of "in table scope"
	classCell                     // td, th
	classRowPart                  // tr, td, th
	classTablePart                // tbody, thead, tfoot, tr, td, th, caption, colgroup
	classHeading                  // h1 to h6
	numClasses
)

// nestEstimate follows the stack of open elements as the parser would
// build it (void elements never stay open, start tags close the elements
// the standard says they close, end tags close what is in their scope),
// with the elements the parser adds by itself: a table row and body
// around a cell outside one, and the formatting elements it opens again.
type nestEstimate struct {
	stack     []atom.Atom
	open      map[atom.Atom][]int // element -> its stack indexes, innermost last
	classes   [numClasses][]int   // class -> stack indexes of its elements, innermost last
	active    []activeFormatting  // formatting elements started and not ended
	created   int                 // elements the parser creates
	phantoms  int                 // of the stack, elements no tag opened (html, head, body)
	formCount int                 // open form elements
}

func newNestEstimate() *nestEstimate {
	return &nestEstimate{open: map[atom.Atom][]int{}, phantoms: 3, created: 3}
}

// depth is how deep the parser's stack of open elements is.
func (e *nestEstimate) depth() int { return len(e.stack) + e.phantoms }

// activeFormatting is a formatting element the parser keeps in its list
// of active formatting elements, and whether it is open.
type activeFormatting struct {
	a    atom.Atom
	open bool
}

// maxActiveFormatting bounds the formatting elements that may be active
// at once.
const maxActiveFormatting = 64

// start records a start tag; selfClosing is the syntax <x/>, which leaves
// only void elements and those inside svg or math unopened.
func (e *nestEstimate) start(a atom.Atom, selfClosing bool) {
	switch {
	case a == atom.Html || a == atom.Head || a == atom.Body:
		return // merged into the elements the parser made
	case a == atom.Form && e.formCount > 0:
		return // a form inside a form is ignored
	}
	e.closeBefore(a)
	e.reopenFormatting()
	if voidElements[a] || selfClosing && e.inForeignContent() {
		e.created++
		return
	}
	e.addImpliedTableParts(a)
	e.push(a)
	if formattingElements[a] {
		e.active = append(e.active, activeFormatting{a: a, open: true})
	}
}

// closeBefore closes what a start tag of a closes before it opens.
func (e *nestEstimate) closeBefore(a atom.Atom) {
	if closesParagraph[a] {
		e.closeIfAbove([]atom.Atom{atom.P}, classButtonScope)
	}
	switch a {
	case atom.Li:
		e.closeIfAbove([]atom.Atom{atom.Li}, classListItemEnd)
	case atom.Dd, atom.Dt:
		e.closeIfAbove([]atom.Atom{atom.Dd, atom.Dt}, classDefEnd)
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		e.closeTopIf(classHeading)
	case atom.Option, atom.Optgroup:
		e.closeTopAtom(atom.Option)
	case atom.Button:
		e.closeIfAbove([]atom.Atom{atom.Button}, classScope)
	case atom.Select:
		e.closeIfAbove([]atom.Atom{atom.Select}, classTableScope)
	case atom.Td, atom.Th:
		e.closeIfAbove([]atom.Atom{atom.Td, atom.Th}, classTableScope)
	case atom.Tr:
		e.closeIfAbove([]atom.Atom{atom.Tr}, classTableScope) // and the cell open in it
	case atom.Tbody, atom.Thead, atom.Tfoot:
		e.closeIfAbove([]atom.Atom{atom.Tbody, atom.Thead, atom.Tfoot}, classTableScope)
		e.closeIfAbove([]atom.Atom{atom.Tr}, classTableScope)
	case atom.Caption, atom.Colgroup:
		if table := e.innermostAtom(atom.Table); table >= 0 {
			e.popTo(table + 1) // back to the table itself
		}
	case atom.Table:
		table := e.innermostAtom(atom.Table)
		if table >= 0 && max(e.innermostClass(classCell), e.innermostAtom(atom.Caption)) < table {
			e.popTo(table) // a table directly in a table ends it
		}
	case atom.A, atom.Nobr:
		e.endFormatting(a) // a link in a link ends it, as its end tag would
	}
}

// end records an end tag: the innermost open element of its name closes,
// with everything opened inside it, when the standard's scope allows.
func (e *nestEstimate) end(a atom.Atom) {
	stop := classSpecial
	switch {
	case formattingElements[a]:
		e.endFormatting(a)
		return
	case a == atom.P:
		stop = classButtonScope
	case headingAtoms[a]:
		e.closeIfAbove(headingList, classScope)
		return
	case specialElements[a]:
		stop = classScope
	}
	e.closeIfAbove([]atom.Atom{a}, stop)
}

// endFormatting ends the innermost active formatting element a, as the
// standard's adoption agency does: when no special element was opened
// inside it, it closes with everything opened inside it; otherwise the
// stack keeps its depth (the element is replaced by a copy), and here it
// is left as it is.
func (e *nestEstimate) endFormatting(a atom.Atom) {
	i := e.lastActive(a)
	if i < 0 {
		return
	}
	if at := e.innermostAtom(a); e.active[i].open && at > e.innermostClass(classScope) && e.innermostClass(classSpecial) < at {
		e.popTo(at)
	}
	e.active = append(e.active[:i], e.active[i+1:]...)
}

// lastActive is the index in the active list of the innermost active
// formatting element a, or -1.
func (e *nestEstimate) lastActive(a atom.Atom) int {
	for i := len(e.active) - 1; i >= 0; i-- {
		if e.active[i].a == a {
			return i
		}
	}
	return -1
}

// reopenFormatting opens again, as the parser does before text and most
// start tags, the active formatting elements that were closed around
// them.
func (e *nestEstimate) reopenFormatting() {
	for i := range e.active {
		if !e.active[i].open {
			e.push(e.active[i].a)
			e.active[i].open = true
		}
	}
}

// addImpliedTableParts counts the row and table body the parser adds
// around a cell or row that lacks them.
func (e *nestEstimate) addImpliedTableParts(a atom.Atom) {
	table := e.innermostAtom(atom.Table)
	if table < 0 {
		return
	}
	if (a == atom.Td || a == atom.Th) && e.innermostAtom(atom.Tr) < table {
		e.push(atom.Tr)
	}
	if a == atom.Tr && max(e.innermostAtom(atom.Tbody), e.innermostAtom(atom.Thead), e.innermostAtom(atom.Tfoot)) < table {
		e.push(atom.Tbody)
	}
}

// closeIfAbove closes the innermost open element among kinds when it lies
// above the innermost open element of class stop.
func (e *nestEstimate) closeIfAbove(kinds []atom.Atom, stop class) {
	at := -1
	for _, k := range kinds {
		at = max(at, e.innermostAtom(k))
	}
	if at >= 0 && at >= e.innermostClass(stop) {
		e.popTo(at)
	}
}

// closeTopIf closes the current element when it is of class c.
func (e *nestEstimate) closeTopIf(c class) {
	if top := len(e.stack) - 1; top >= 0 && e.innermostClass(c) == top {
		e.popTo(top)
	}
}

// closeTopAtom closes the current element when it is a.
func (e *nestEstimate) closeTopAtom(a atom.Atom) {
	if top := len(e.stack) - 1; top >= 0 && e.stack[top] == a {
		e.popTo(top)
	}
}

// innermostAtom is the stack index of the innermost open a, or -1.
func (e *nestEstimate) innermostAtom(a atom.Atom) int {
	if idx := e.open[a]; len(idx) > 0 {
		return idx[len(idx)-1]
	}
	return -1
}

// innermostClass is the stack index of the innermost open element of
// class c, or -1.
func (e *nestEstimate) innermostClass(c class) int {
	if idx := e.classes[c]; len(idx) > 0 {
		return idx[len(idx)-1]
	}
	return -1
}

// push opens a.
func (e *nestEstimate) push(a atom.Atom) {
	i := len(e.stack)
	e.stack = append(e.stack, a)
	e.open[a] = append(e.open[a], i)
	for c, in := range classesOf(a) {
		if in {
			e.classes[c] = append(e.classes[c], i)
		}
	}
	if a == atom.Form {
		e.formCount++
	}
	e.created++
}

// popTo closes the element at stack index i and every element above it;
// the formatting elements among them stay active, to be opened again.
func (e *nestEstimate) popTo(i int) {
	for len(e.stack) > i {
		top := len(e.stack) - 1
		a := e.stack[top]
		e.stack = e.stack[:top]
		e.open[a] = e.open[a][:len(e.open[a])-1]
		for c := range e.classes {
			if idx := e.classes[c]; len(idx) > 0 && idx[len(idx)-1] == top {
				e.classes[c] = idx[:len(idx)-1]
			}
		}
		if a == atom.Form {
			e.formCount--
		}
		if formattingElements[a] {
			e.closeActive(a)
		}
	}
}

// closeActive marks the innermost open active formatting element a as
// closed: the parser opens it again before the next text.
func (e *nestEstimate) closeActive(a atom.Atom) {
	for i := len(e.active) - 1; i >= 0; i-- {
		if e.active[i].a == a && e.active[i].open {
			e.active[i].open = false
			return
		}
	}
}

// inForeignContent reports whether an svg or math element is open.
func (e *nestEstimate) inForeignContent() bool {
	return len(e.open[atom.Svg]) > 0 || len(e.open[atom.Math]) > 0
}

// classesOf says which classes a is in.
func classesOf(a atom.Atom) [numClasses]bool {
	var in [numClasses]bool
	special := specialElements[a]
	in[classSpecial] = special
	in[classScope] = scopeElements[a]
	in[classButtonScope] = scopeElements[a] || a == atom.Button
	in[classListItemEnd] = special && a != atom.Address && a != atom.Div && a != atom.P && a != atom.Li
	in[classDefEnd] = special && a != atom.Address && a != atom.Div && a != atom.P && a != atom.Dd && a != atom.Dt
	in[classTableScope] = a == atom.Html || a == atom.Table || a == atom.Template
	in[classCell] = a == atom.Td || a == atom.Th
	in[classRowPart] = in[classCell] || a == atom.Tr
	in[classTablePart] = tablePartSet[a]
	in[classHeading] = headingAtoms[a]
	return in
}

// voidElements never have content and never stay open.
var voidElements = atomSet(atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img,
	atom.Input, atom.Keygen, atom.Link, atom.Meta, atom.Param, atom.Source, atom.Track, atom.Wbr)

// formattingElements are those the parser opens again after a paragraph
// that closed them.
var formattingElements = atomSet(atom.A, atom.B, atom.Big, atom.Code, atom.Em, atom.Font, atom.I,
	atom.Nobr, atom.S, atom.Small, atom.Strike, atom.Strong, atom.Tt, atom.U)

// closesParagraph are the start tags that close an open p element.
var closesParagraph = atomSet(atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Center,
	atom.Details, atom.Dialog, atom.Dir, atom.Div, atom.Dl, atom.Fieldset, atom.Figcaption, atom.Figure,
	atom.Footer, atom.Header, atom.Hgroup, atom.Main, atom.Menu, atom.Nav, atom.Ol, atom.P, atom.Search,
	atom.Section, atom.Summary, atom.Ul, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Pre,
	atom.Listing, atom.Form, atom.Li, atom.Dd, atom.Dt, atom.Plaintext, atom.Table, atom.Hr, atom.Xmp)

// scopeElements are the boundaries of "has an element in scope".
var scopeElements = atomSet(atom.Applet, atom.Caption, atom.Html, atom.Table, atom.Td, atom.Th,
	atom.Marquee, atom.Object, atom.Template)

// specialElements are the standard's "special" category.
var specialElements = atomSet(atom.Address, atom.Applet, atom.Area, atom.Article, atom.Aside, atom.Base,
	atom.Basefont, atom.Bgsound, atom.Blockquote, atom.Body, atom.Br, atom.Button, atom.Caption,
	atom.Center, atom.Col, atom.Colgroup, atom.Dd, atom.Details, atom.Dir, atom.Div, atom.Dl, atom.Dt,
	atom.Embed, atom.Fieldset, atom.Figcaption, atom.Figure, atom.Footer, atom.Form, atom.Frame,
	atom.Frameset, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Head, atom.Header,
	atom.Hgroup, atom.Hr, atom.Html, atom.Iframe, atom.Img, atom.Input, atom.Keygen, atom.Li, atom.Link,
	atom.Listing, atom.Main, atom.Marquee, atom.Menu, atom.Meta, atom.Nav, atom.Noembed, atom.Noframes,
	atom.Noscript, atom.Object, atom.Ol, atom.P, atom.Param, atom.Plaintext, atom.Pre, atom.Script,
	atom.Search, atom.Section, atom.Select, atom.Source, atom.Style, atom.Summary, atom.Table, atom.Tbody,
	atom.Td, atom.Template, atom.Textarea, atom.Tfoot, atom.Th, atom.Thead, atom.Title, atom.Tr,
	atom.Track, atom.Ul, atom.Wbr, atom.Xmp)

var (
	headingList  = []atom.Atom{atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6}
	headingAtoms = atomSet(headingList...)
	tableParts   = []atom.Atom{atom.Tbody, atom.Thead, atom.Tfoot, atom.Tr, atom.Td, atom.Th, atom.Caption, atom.Colgroup}
	tablePartSet = atomSet(tableParts...)
)

// atomSet makes a set of atoms.
func atomSet(atoms ...atom.Atom) map[atom.Atom]bool {
	s := make(map[atom.Atom]bool, len(atoms))
	for _, a := range atoms {
		s[a] = true
	}
	return s
}
