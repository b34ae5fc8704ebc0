package document

import (
	"strings"
	"testing"
)

// TestCheckText checks CheckText on valid and refused texts.
func TestCheckText(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string // "" for valid
	}{
		{"empty", "", ""},
		{"ascii", "hello", ""},
		{"multi-byte and emoji", "größe 日本 🎉", ""},
		{"NUL first", "\x00abc", "binary file (NUL byte at offset 0)"},
		{"NUL wins over bad UTF-8", "\xff\x00", "NUL byte at offset 1"},
		{"lone continuation byte", "ab\x80", "invalid UTF-8 at byte offset 2"},
		{"overlong encoding", "a\xc0\xafb", "invalid UTF-8 at byte offset 1"},
		{"surrogate half", "é\xed\xa0\x80", "invalid UTF-8 at byte offset 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckText([]byte(tt.data))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("CheckText = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("CheckText = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestMarkdownTitle(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"first line", "# Title\n\nbody", "Title"},
		{"after front text", "intro\n\n# Later Title\n", "Later Title"},
		{"level two is no title", "## Section\n\ntext", ""},
		{"no space is no heading", "#hashtag\n", ""},
		{"first of several", "# One\n# Two\n", "One"},
		{"surrounding space", "#   Spaced out   \n", "Spaced out"},
		{"CRLF", "# Windows\r\nbody\r\n", "Windows"},
		{"tab after hash", "#\tTabbed\n", "Tabbed"},
		{"closing hashes", "# Closed ##\n", "Closed"},
		{"hash inside title", "# C# in depth\n", "C# in depth"},
		{"indented up to three", "   # Indented\n", "Indented"},
		{"indented four is code", "    # Code\n# Real\n", "Real"},
		{"empty heading skipped", "#\n# Real\n", "Real"},
		{"byte-order mark", "\ufeff# BOM\n", "BOM"},
		{"inside a code fence", "```sh\n# install deps\nmake\n```\n# Real Title\n", "Real Title"},
		{"inside a tilde fence", "~~~\n# not this\n~~~\n", ""},
		{"unclosed fence", "```\n# never\n", ""},
		{"unicode", "# Größe 🎉\n", "Größe 🎉"},
		{"within the first 50 lines", strings.Repeat("text\n", 49) + "# Fiftieth\n", "Fiftieth"},
		{"beyond the first 50 lines", strings.Repeat("text\n", 50) + "# Fifty-first\n", ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MarkdownTitle(tt.text); got != tt.want {
				t.Errorf("MarkdownTitle(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}
