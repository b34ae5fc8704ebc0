package split

import "testing"

func TestLanguageOfPath(t *testing.T) {
	for name, want := range map[string]Language{
		"main.go": LanguageGo, "pkg/a/b.PY": LanguagePython, "App.tsx": LanguageTS, "x.mjs": LanguageJS,
		"Ledger.java": LanguageJava, "lib.rs": LanguageRust, "stack.hpp": LanguageCPP, "m.h": LanguageC,
		"Orders.cs": LanguageCSharp, "stats.R": LanguageR, "deploy.ps1": LanguagePowerShell,
		"Invoice.bas": LanguageVisualBasic6, "guide.rst": LanguageRST, "notes.tex": LanguageLaTeX,
		"README.md": LanguageMarkdown, "index.html": LanguageHTML, "a.go.gz": LanguageGo,
		"Makefile": "", "notes.txt": "", "archive.tar.gz": "", "": "",
	} {
		if got := LanguageOfPath(name); got != want {
			t.Errorf("LanguageOfPath(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestLanguageOfShebang(t *testing.T) {
	for text, want := range map[string]Language{
		"#!/usr/bin/env python3\nprint(1)\n": LanguagePython,
		"#!/usr/bin/python3.11 -u\n":         LanguagePython,
		"#!/usr/bin/env -S node --harmony\n": LanguageJS,
		"#!/bin/ruby -w":                     LanguageRuby,
		"#!/usr/bin/perl5\n":                 LanguagePerl,
		"#!/usr/bin/env Rscript\n":           LanguageR,
		"#!/bin/sh\n":                        "",
		"#!\n":                               "",
		"# not a shebang\n":                  "",
		" #!/usr/bin/python\n":               "",
	} {
		if got := LanguageOfShebang(text); got != want {
			t.Errorf("LanguageOfShebang(%q) = %q, want %q", text, got, want)
		}
	}
	if got := DetectLanguage("bin/tool", "#!/usr/bin/env python\n"); got != LanguagePython {
		t.Errorf("DetectLanguage by shebang = %q", got)
	}
	if got := DetectLanguage("tool.rb", "#!/usr/bin/env python\n"); got != LanguageRuby {
		t.Errorf("the extension must win over the shebang, got %q", got)
	}
}

func TestEveryCodeLanguageHasASyntaxAndAnExtension(t *testing.T) {
	exts := map[Language]bool{}
	for _, lang := range languageByExtension {
		exts[lang] = true
	}
	for _, lang := range Languages() {
		if !exts[lang] {
			t.Errorf("%s: no file extension detects it", lang)
		}
		if _, ok := syntaxes[lang]; ok != IsCode(lang) {
			t.Errorf("%s: IsCode %v but syntax known %v", lang, IsCode(lang), ok)
		}
	}
	if len(CodeExtensions()) == 0 || IsCode(LanguageMarkdown) || !IsCode(LanguageGo) {
		t.Error("CodeExtensions or IsCode wrong")
	}
}
