package split

import (
	"fmt"
	"slices"
)

// Language is a value of LangChain's Language enum ("go", "python", ...):
// the languages RecursiveCharacterTextSplitter.from_language knows.
type Language string

// The languages of LangChain's Language enum, in its order.
const (
	LanguageCPP          Language = "cpp"
	LanguageGo           Language = "go"
	LanguageJava         Language = "java"
	LanguageKotlin       Language = "kotlin"
	LanguageJS           Language = "js"
	LanguageTS           Language = "ts"
	LanguagePHP          Language = "php"
	LanguageProto        Language = "proto"
	LanguagePython       Language = "python"
	LanguageR            Language = "r"
	LanguageRST          Language = "rst"
	LanguageRuby         Language = "ruby"
	LanguageRust         Language = "rust"
	LanguageScala        Language = "scala"
	LanguageSwift        Language = "swift"
	LanguageMarkdown     Language = "markdown"
	LanguageLaTeX        Language = "latex"
	LanguageHTML         Language = "html"
	LanguageSolidity     Language = "sol"
	LanguageCSharp       Language = "csharp"
	LanguageCOBOL        Language = "cobol"
	LanguageC            Language = "c"
	LanguageLua          Language = "lua"
	LanguagePerl         Language = "perl"
	LanguageHaskell      Language = "haskell"
	LanguageElixir       Language = "elixir"
	LanguagePowerShell   Language = "powershell"
	LanguageVisualBasic6 Language = "visualbasic6"
)

// languages lists every Language in LangChain's enum order.
var languages = []Language{
	LanguageCPP, LanguageGo, LanguageJava, LanguageKotlin, LanguageJS, LanguageTS, LanguagePHP,
	LanguageProto, LanguagePython, LanguageR, LanguageRST, LanguageRuby, LanguageRust, LanguageScala,
	LanguageSwift, LanguageMarkdown, LanguageLaTeX, LanguageHTML, LanguageSolidity, LanguageCSharp,
	LanguageCOBOL, LanguageC, LanguageLua, LanguagePerl, LanguageHaskell, LanguageElixir,
	LanguagePowerShell, LanguageVisualBasic6,
}

// Languages returns every language of LangChain's Language enum, in its
// order, as a new slice.
func Languages() []Language { return slices.Clone(languages) }

// IsLanguage reports whether name is a value of LangChain's Language enum.
func IsLanguage(name string) bool { return slices.Contains(languages, Language(name)) }

// LanguageSeparators returns a new copy of LangChain's
// get_separators_for_language(lang): regular expressions, as from_language
// uses them (is_separator_regex=True), tried in order. LangChain has no list
// for perl (it raises "Language Language.PERL is not implemented yet!");
// that, and a name outside the enum, is an error.
func LanguageSeparators(lang Language) ([]string, error) {
	seps, ok := languageSeparators[lang]
	if !ok {
		if lang == LanguagePerl {
			return nil, fmt.Errorf("split: LangChain has no separators for %s", lang)
		}
		return nil, fmt.Errorf("split: unknown language %q", lang)
	}
	return slices.Clone(seps), nil
}

// lines are the separators that end every list but LaTeX's, HTML's and
// COBOL's: blank lines, lines, words, characters.
var lines = []string{"\n\n", "\n", " ", ""}

// cFamily is the list C and C++ share.
var cFamily = append([]string{
	"\nclass ", "\nvoid ", "\nint ", "\nfloat ", "\ndouble ",
	"\nif ", "\nfor ", "\nwhile ", "\nswitch ", "\ncase ",
}, lines...)

// languageSeparators holds LangChain's separators, as its
// RecursiveCharacterTextSplitter.get_separators_for_language returns them
// (LangChain's public list; TestLanguageSeparatorsMatchLangChain compares
// it with what LangChain ships).
var languageSeparators = map[Language][]string{
	LanguageC:   cFamily,
	LanguageCPP: cFamily,
	LanguageGo: append([]string{
		"\nfunc ", "\nvar ", "\nconst ", "\ntype ",
		"\nif ", "\nfor ", "\nswitch ", "\ncase ",
	}, lines...),
	LanguageJava: append([]string{
		"\nclass ", "\npublic ", "\nprotected ", "\nprivate ", "\nstatic ",
		"\nif ", "\nfor ", "\nwhile ", "\nswitch ", "\ncase ",
	}, lines...),
	LanguageKotlin: append([]string{
		"\nclass ", "\npublic ", "\nprotected ", "\nprivate ", "\ninternal ", "\ncompanion ",
		"\nfun ", "\nval ", "\nvar ",
		"\nif ", "\nfor ", "\nwhile ", "\nwhen ", "\ncase ", "\nelse ",
	}, lines...),
	LanguageJS: append([]string{
		"\nfunction ", "\nconst ", "\nlet ", "\nvar ", "\nclass ",
		"\nif ", "\nfor ", "\nwhile ", "\nswitch ", "\ncase ", "\ndefault ",
	}, lines...),
	LanguageTS: append([]string{
		"\nenum ", "\ninterface ", "\nnamespace ", "\ntype ",
		"\nclass ", "\nfunction ", "\nconst ", "\nlet ", "\nvar ",
		"\nif ", "\nfor ", "\nwhile ", "\nswitch ", "\ncase ", "\ndefault ",
	}, lines...),
	LanguagePHP: append([]string{
		"\nfunction ", "\nclass ",
		"\nif ", "\nforeach ", "\nwhile ", "\ndo ", "\nswitch ", "\ncase ",
	}, lines...),
	LanguageProto: append([]string{
		"\nmessage ", "\nservice ", "\nenum ", "\noption ", "\nimport ", "\nsyntax ",
	}, lines...),
	LanguagePython: append([]string{"\nclass ", "\ndef ", "\n\tdef "}, lines...),
	LanguageR: append([]string{
		"\nfunction ", "\nsetClass\\(", "\nsetMethod\\(", "\nsetGeneric\\(",
		"\nif ", "\nelse ", "\nfor ", "\nwhile ", "\nrepeat ",
		"\nlibrary\\(", "\nrequire\\(",
	}, lines...),
	LanguageRST: append([]string{"\n=+\n", "\n-+\n", "\n\\*+\n", "\n\n.. *\n\n"}, lines...),
	LanguageRuby: append([]string{
		"\ndef ", "\nclass ",
		"\nif ", "\nunless ", "\nwhile ", "\nfor ", "\ndo ", "\nbegin ", "\nrescue ",
	}, lines...),
	LanguageRust: append([]string{
		"\nfn ", "\nconst ", "\nlet ",
		"\nif ", "\nwhile ", "\nfor ", "\nloop ", "\nmatch ", "\nconst ",
	}, lines...),
	LanguageScala: append([]string{
		"\nclass ", "\nobject ", "\ndef ", "\nval ", "\nvar ",
		"\nif ", "\nfor ", "\nwhile ", "\nmatch ", "\ncase ",
	}, lines...),
	LanguageSwift: append([]string{
		"\nfunc ", "\nclass ", "\nstruct ", "\nenum ",
		"\nif ", "\nfor ", "\nwhile ", "\ndo ", "\nswitch ", "\ncase ",
	}, lines...),
	LanguageMarkdown: append([]string{
		"\n#{1,6} ", "```\n", "\n\\*\\*\\*+\n", "\n---+\n", "\n___+\n",
	}, lines...),
	LanguageLaTeX: {
		"\n\\\\chapter{", "\n\\\\section{", "\n\\\\subsection{", "\n\\\\subsubsection{",
		"\n\\\\begin{enumerate}", "\n\\\\begin{itemize}", "\n\\\\begin{description}",
		"\n\\\\begin{list}", "\n\\\\begin{quote}", "\n\\\\begin{quotation}",
		"\n\\\\begin{verse}", "\n\\\\begin{verbatim}", "\n\\\\begin{align}",
		"$$", "$", " ", "",
	},
	LanguageHTML: {
		"<body", "<div", "<p", "<br", "<li", "<h1", "<h2", "<h3", "<h4", "<h5", "<h6",
		"<span", "<table", "<tr", "<td", "<th", "<ul", "<ol", "<header", "<footer", "<nav",
		"<head", "<style", "<script", "<meta", "<title", "",
	},
	LanguageSolidity: append([]string{
		"\npragma ", "\nusing ", "\ncontract ", "\ninterface ", "\nlibrary ", "\nconstructor ",
		"\ntype ", "\nfunction ", "\nevent ", "\nmodifier ", "\nerror ", "\nstruct ", "\nenum ",
		"\nif ", "\nfor ", "\nwhile ", "\ndo while ", "\nassembly ",
	}, lines...),
	LanguageCSharp: append([]string{
		"\ninterface ", "\nenum ", "\nimplements ", "\ndelegate ", "\nevent ",
		"\nclass ", "\nabstract ",
		"\npublic ", "\nprotected ", "\nprivate ", "\nstatic ", "\nreturn ",
		"\nif ", "\ncontinue ", "\nfor ", "\nforeach ", "\nwhile ", "\nswitch ", "\nbreak ",
		"\ncase ", "\nelse ", "\ntry ", "\nthrow ", "\nfinally ", "\ncatch ",
	}, lines...),
	LanguageCOBOL: {
		"\nIDENTIFICATION DIVISION.", "\nENVIRONMENT DIVISION.", "\nDATA DIVISION.",
		"\nPROCEDURE DIVISION.", "\nWORKING-STORAGE SECTION.", "\nLINKAGE SECTION.",
		"\nFILE SECTION.", "\nINPUT-OUTPUT SECTION.",
		"\nOPEN ", "\nCLOSE ", "\nREAD ", "\nWRITE ", "\nIF ", "\nELSE ", "\nMOVE ",
		"\nPERFORM ", "\nUNTIL ", "\nVARYING ", "\nACCEPT ", "\nDISPLAY ", "\nSTOP RUN.",
		"\n", " ", "",
	},
	LanguageLua: append([]string{
		"\nlocal ", "\nfunction ", "\nif ", "\nfor ", "\nwhile ", "\nrepeat ",
	}, lines...),
	LanguageHaskell: append([]string{
		"\nmain :: ", "\nmain = ", "\nlet ", "\nin ", "\ndo ", "\nwhere ", "\n:: ", "\n= ",
		"\ndata ", "\nnewtype ", "\ntype ", "\n:: ",
		"\nmodule ", "\nimport ", "\nqualified ", "\nimport qualified ",
		"\nclass ", "\ninstance ", "\ncase ", "\n| ", "\ndata ", "\n= {", "\n, ",
	}, lines...),
	LanguageElixir: append([]string{
		"\ndef ", "\ndefp ", "\ndefmodule ", "\ndefprotocol ", "\ndefmacro ", "\ndefmacrop ",
		"\nif ", "\nunless ", "\nwhile ", "\ncase ", "\ncond ", "\nwith ", "\nfor ", "\ndo ",
	}, lines...),
	LanguagePowerShell: append([]string{
		"\nfunction ", "\nparam ", "\nif ", "\nforeach ", "\nfor ", "\nwhile ", "\nswitch ",
		"\nclass ", "\ntry ", "\ncatch ", "\nfinally ",
	}, lines...),
	LanguageVisualBasic6: vb6Separators(),
}

// vb6Separators is LangChain's Visual Basic 6 list. Its entries are
// patterns that spell line breaks as \n and need lookahead, so they run
// on the Python-compatible engine.
func vb6Separators() []string {
	const vis = `(?:Public|Private|Friend|Global|Static)\s+?`
	return []string{
		`\n(?!End\s)` + vis + `Sub\s+`,
		`\n(?!End\s)` + vis + `Function\s+`,
		`\n(?!End\s)` + vis + `Property\s+(?:Get|Let|Set)\s+`,
		`\n(?!End\s)` + vis + `Type\s+`,
		`\n(?!End\s)` + vis + `Enum\s+`,
		`\n(?!End\s)If\s+`,
		`\nElseIf\s+`,
		`\nElse\s+`,
		`\nSelect\s+Case\s+`,
		`\nCase\s+`,
		`\nFor\s+`,
		`\nDo\s+`,
		`\nWhile\s+`,
		`\nWith\s+`,
		`\n\n`,
		`\n`,
		" ",
		"",
	}
}
