package split

import (
	"fmt"
)

// Separator preset names accepted by Separators.
const (
	// PresetDefault names LangChain's default separators for
	// RecursiveCharacterTextSplitter: paragraphs, lines, words, characters.
	PresetDefault = "default"
	// PresetMarkdown names LangChain's Language.MARKDOWN separators
	// (RecursiveCharacterTextSplitter.from_language / MarkdownTextSplitter):
	// headings, code-fence ends, horizontal rules, then the default ones.
	PresetMarkdown = "markdown"
)

// DefaultSeparators returns a new copy of LangChain's default separators,
// ["\n\n", "\n", " ", ""], matched literally (is_separator_regex=False).
func DefaultSeparators() []string {
	return []string{"\n\n", "\n", " ", ""}
}

// Separators returns the separators of a preset (PresetDefault, or the name
// of a Language, PresetMarkdown among them) and whether they are regular
// expressions. The slice is a new copy the caller may modify.
func Separators(preset string) (separators []string, isRegex bool, err error) {
	if preset == PresetDefault || preset == "" {
		return DefaultSeparators(), false, nil
	}
	if !IsLanguage(preset) {
		return nil, false, fmt.Errorf("split: unknown separator preset %q (want %q or a language such as %q)", preset, PresetDefault, PresetMarkdown)
	}
	seps, err := LanguageSeparators(Language(preset))
	return seps, err == nil, err
}
