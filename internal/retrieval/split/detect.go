package split

import (
	"path"
	"slices"
	"strings"
)

// languageByExtension maps lower-case file extensions to the language
// LangChain would split them as.
var languageByExtension = map[string]Language{
	".c": LanguageC, ".h": LanguageC,
	".cc": LanguageCPP, ".cpp": LanguageCPP, ".cxx": LanguageCPP, ".c++": LanguageCPP,
	".hh": LanguageCPP, ".hpp": LanguageCPP, ".hxx": LanguageCPP, ".h++": LanguageCPP,
	".cs":  LanguageCSharp,
	".cob": LanguageCOBOL, ".cbl": LanguageCOBOL, ".cpy": LanguageCOBOL,
	".ex": LanguageElixir, ".exs": LanguageElixir,
	".go":   LanguageGo,
	".hs":   LanguageHaskell,
	".html": LanguageHTML, ".htm": LanguageHTML, ".xhtml": LanguageHTML,
	".java": LanguageJava,
	".js":   LanguageJS, ".mjs": LanguageJS, ".cjs": LanguageJS, ".jsx": LanguageJS,
	".kt": LanguageKotlin, ".kts": LanguageKotlin,
	".tex": LanguageLaTeX,
	".lua": LanguageLua,
	".md":  LanguageMarkdown, ".markdown": LanguageMarkdown,
	".pl": LanguagePerl, ".pm": LanguagePerl,
	".php": LanguagePHP,
	".ps1": LanguagePowerShell, ".psm1": LanguagePowerShell,
	".proto": LanguageProto,
	".py":    LanguagePython, ".pyi": LanguagePython, ".pyw": LanguagePython,
	".r":   LanguageR,
	".rst": LanguageRST,
	".rb":  LanguageRuby, ".rake": LanguageRuby,
	".rs":    LanguageRust,
	".scala": LanguageScala, ".sc": LanguageScala,
	".sol":   LanguageSolidity,
	".swift": LanguageSwift,
	".ts":    LanguageTS, ".tsx": LanguageTS, ".mts": LanguageTS, ".cts": LanguageTS,
	".bas": LanguageVisualBasic6, ".frm": LanguageVisualBasic6,
}

// languageByInterpreter maps the program a script's "#!" line runs, less
// any version digits, to its language.
var languageByInterpreter = map[string]Language{
	"python": LanguagePython, "ruby": LanguageRuby, "perl": LanguagePerl, "php": LanguagePHP,
	"node": LanguageJS, "lua": LanguageLua, "rscript": LanguageR, "pwsh": LanguagePowerShell,
	"elixir": LanguageElixir, "runhaskell": LanguageHaskell, "runghc": LanguageHaskell,
}

// LanguageOfPath returns the language of a file by its extension, in any
// case ("main.go" is go, "App.TSX" ts), or "" when the extension names no
// language. A ".gz" suffix is looked through.
func LanguageOfPath(name string) Language {
	name = strings.TrimSuffix(strings.ToLower(name), ".gz")
	return languageByExtension[path.Ext(name)]
}

// LanguageOfShebang returns the language of a script whose first line is
// "#!" and names its interpreter ("#!/usr/bin/env python3", "#!/bin/ruby
// -w"), or "" when it has no such line or the interpreter is not known.
func LanguageOfShebang(text string) Language {
	line, _, _ := strings.Cut(text, "\n")
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return ""
	}
	fields := strings.Fields(rest)
	for len(fields) > 0 && (path.Base(fields[0]) == "env" || strings.HasPrefix(fields[0], "-")) {
		fields = fields[1:] // "env" and its flags ("-S") come before the program
	}
	if len(fields) == 0 {
		return ""
	}
	program := strings.ToLower(path.Base(fields[0]))
	return languageByInterpreter[strings.TrimRight(program, "0123456789.")]
}

// DetectLanguage returns the language of a document named name (a file
// path) holding text: by the extension, else by a "#!" line; "" when
// neither names one.
func DetectLanguage(name, text string) Language {
	if lang := LanguageOfPath(name); lang != "" {
		return lang
	}
	return LanguageOfShebang(text)
}

// IsCode reports whether lang is a programming language: every language
// but markdown, html, rst and latex, which are documents of their own
// formats that LangChain also knows separators for.
func IsCode(lang Language) bool {
	switch lang {
	case "", LanguageMarkdown, LanguageHTML, LanguageRST, LanguageLaTeX:
		return false
	}
	return IsLanguage(string(lang))
}

// CodeExtensions returns the file extensions whose files are code
// (IsCode), sorted.
func CodeExtensions() []string {
	var out []string
	for ext, lang := range languageByExtension {
		if IsCode(lang) {
			out = append(out, ext)
		}
	}
	slices.Sort(out)
	return out
}
