package split

import "slices"

// delimiter opens and closes a string or a comment.
type delimiter struct {
	open, close string
	// escapes: a backslash escapes the character after it.
	escapes bool
	// multiline: the string may run past the end of its line; otherwise an
	// unclosed one ends there, so a misread quote spoils one line at most.
	multiline bool
}

// codeSyntax is what finding definitions needs to know of a language: where
// comments and strings are (brackets inside them do not count), how
// blocks nest, and which lines continue a block or belong to the
// definition below them.
type codeSyntax struct {
	// lineComments start a comment that ends with the line.
	lineComments []string
	// blockComments may span lines.
	blockComments []delimiter
	// strings, longest opening first.
	strings []delimiter
	// indented: blocks are made by indentation (Python, Ruby, ...), not
	// by brackets.
	indented bool
	// closers are the first words (lower case) of lines that continue or
	// end the block above rather than start a new one: "end", "else".
	closers []string
	// attached are the prefixes of lines that belong to the line below
	// them: decorators, annotations, attributes.
	attached []string
	// nameIsFirstWord: a definition is named by its first word, the
	// function it defines a clause of (Haskell).
	nameIsFirstWord bool
	// special holds the bytes that may start a comment or a string, or
	// are brackets: the lexer looks closer at these only.
	special [256]bool
}

// init fills in the special bytes of every syntax.
func init() {
	for _, syn := range syntaxes {
		for _, c := range "()[]{}" {
			syn.special[c] = true
		}
		for _, c := range syn.lineComments {
			syn.special[c[0]] = true
		}
		for _, d := range append(slices.Clone(syn.blockComments), syn.strings...) {
			syn.special[d.open[0]] = true
		}
	}
}

// The delimiters most languages share.
var (
	slashComments = []string{"//"}
	cBlock        = []delimiter{{open: "/*", close: "*/", multiline: true}}
	doubleQuote   = delimiter{open: `"`, close: `"`, escapes: true}
	singleQuote   = delimiter{open: "'", close: "'", escapes: true}
	tripleQuote   = delimiter{open: `"""`, close: `"""`, escapes: true, multiline: true}
	cQuotes       = []delimiter{doubleQuote, singleQuote}
	elseCatch     = []string{"else", "catch", "finally"}
)

// syntaxes holds the syntax of every programming language (IsCode).
var syntaxes = map[Language]*codeSyntax{
	LanguageC:    {lineComments: slashComments, blockComments: cBlock, strings: cQuotes, closers: []string{"else"}},
	LanguageCPP:  {lineComments: slashComments, blockComments: cBlock, strings: cQuotes, closers: []string{"else", "catch"}, attached: []string{"template", "[["}},
	LanguageGo:   {lineComments: slashComments, blockComments: cBlock, strings: []delimiter{{open: "`", close: "`", multiline: true}, doubleQuote, singleQuote}},
	LanguageJava: {lineComments: slashComments, blockComments: cBlock, strings: []delimiter{tripleQuote, doubleQuote, singleQuote}, closers: elseCatch, attached: []string{"@"}},
	LanguageKotlin: {lineComments: slashComments, blockComments: cBlock, strings: []delimiter{{open: `"""`, close: `"""`, multiline: true}, doubleQuote, singleQuote},
		closers: elseCatch, attached: []string{"@"}},
	LanguageJS: {lineComments: slashComments, blockComments: cBlock, strings: []delimiter{{open: "`", close: "`", escapes: true, multiline: true}, doubleQuote, singleQuote},
		closers: elseCatch, attached: []string{"@"}},
	LanguageTS: {lineComments: slashComments, blockComments: cBlock, strings: []delimiter{{open: "`", close: "`", escapes: true, multiline: true}, doubleQuote, singleQuote},
		closers: elseCatch, attached: []string{"@"}},
	LanguagePHP: {lineComments: []string{"//", "#"}, blockComments: cBlock,
		strings: []delimiter{{open: `"`, close: `"`, escapes: true, multiline: true}, {open: "'", close: "'", escapes: true, multiline: true}},
		closers: []string{"else", "elseif", "catch", "finally"}, attached: []string{"#["}},
	LanguageProto:  {lineComments: slashComments, blockComments: cBlock, strings: cQuotes},
	LanguagePython: {lineComments: []string{"#"}, strings: []delimiter{tripleQuote, {open: "'''", close: "'''", escapes: true, multiline: true}, doubleQuote, singleQuote}, indented: true, closers: []string{"else", "elif", "except", "finally"}, attached: []string{"@"}},
	LanguageR: {lineComments: []string{"#"},
		strings: []delimiter{{open: `"`, close: `"`, escapes: true, multiline: true}, {open: "'", close: "'", escapes: true, multiline: true}, {open: "`", close: "`"}},
		closers: []string{"else"}},
	LanguageRuby: {lineComments: []string{"#"}, blockComments: []delimiter{{open: "=begin", close: "=end", multiline: true}},
		strings:  []delimiter{{open: `"`, close: `"`, escapes: true, multiline: true}, {open: "'", close: "'", escapes: true, multiline: true}},
		indented: true, closers: []string{"end", "else", "elsif", "rescue", "ensure", "when", "in"}},
	LanguageRust: {lineComments: slashComments, blockComments: cBlock,
		strings: []delimiter{{open: `r#"`, close: `"#`, multiline: true}, {open: `"`, close: `"`, escapes: true, multiline: true}},
		closers: []string{"else"}, attached: []string{"#["}},
	LanguageScala: {lineComments: slashComments, blockComments: cBlock, strings: []delimiter{{open: `"""`, close: `"""`, multiline: true}, doubleQuote, singleQuote},
		closers: elseCatch, attached: []string{"@"}},
	LanguageSwift: {lineComments: slashComments, blockComments: cBlock, strings: []delimiter{tripleQuote, doubleQuote},
		closers: elseCatch, attached: []string{"@"}},
	LanguageSolidity: {lineComments: slashComments, blockComments: cBlock, strings: cQuotes, closers: []string{"else"}},
	LanguageCSharp: {lineComments: slashComments, blockComments: cBlock,
		strings: []delimiter{{open: `"""`, close: `"""`, multiline: true}, {open: `@"`, close: `"`, multiline: true}, doubleQuote, singleQuote},
		closers: elseCatch, attached: []string{"["}},
	LanguageCOBOL: {lineComments: []string{"*>"}, strings: []delimiter{doubleQuote, singleQuote}, indented: true},
	LanguageLua: {lineComments: []string{"--"}, blockComments: []delimiter{{open: "--[[", close: "]]", multiline: true}},
		strings:  []delimiter{{open: "[[", close: "]]", multiline: true}, doubleQuote, singleQuote},
		indented: true, closers: []string{"end", "else", "elseif", "until"}},
	LanguagePerl: {lineComments: []string{"#"}, blockComments: []delimiter{{open: "=pod", close: "=cut", multiline: true}, {open: "=head", close: "=cut", multiline: true}},
		strings: []delimiter{{open: `"`, close: `"`, escapes: true, multiline: true}, {open: "'", close: "'", escapes: true, multiline: true}},
		closers: []string{"else", "elsif"}},
	LanguageHaskell: {lineComments: []string{"--"}, blockComments: []delimiter{{open: "{-", close: "-}", multiline: true}},
		strings: []delimiter{doubleQuote}, indented: true, nameIsFirstWord: true},
	LanguageElixir: {lineComments: []string{"#"}, strings: []delimiter{tripleQuote, {open: `"`, close: `"`, escapes: true, multiline: true}, singleQuote},
		indented: true, closers: []string{"end", "else", "rescue", "catch", "after"}, attached: []string{"@doc", "@spec", "@impl"}},
	LanguagePowerShell: {lineComments: []string{"#"}, blockComments: []delimiter{{open: "<#", close: "#>", multiline: true}},
		strings: []delimiter{{open: `@"`, close: `"@`, multiline: true}, {open: "@'", close: "'@", multiline: true},
			{open: `"`, close: `"`, multiline: true}, {open: "'", close: "'", multiline: true}},
		closers: elseCatch, attached: []string{"["}},
	LanguageVisualBasic6: {lineComments: []string{"'"}, strings: []delimiter{{open: `"`, close: `"`}}, indented: true,
		closers: []string{"end", "else", "elseif", "next", "loop", "wend", "case"}},
}
