package remote

import "testing"

func TestMatchGlob(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"**/*.md", "README.md", true},
		{"**/*.md", "docs/a/b/c.md", true},
		{"**/*.md", "docs/a/b/c.txt", false},
		{"*.md", "docs/a.md", false},
		{"docs/**", "docs/a/b.md", true},
		{"docs/**", "other/a.md", false},
		{"docs/**/b.md", "docs/b.md", true},
		{"docs/**/b.md", "docs/x/y/b.md", true},
		{"docs/**/b.md", "docs/x/y/c.md", false},
		{"**/drafts/**", "a/drafts/b/c.md", true},
		{"**/*.md", ".github/a.md", false},
		{"**/*.md", "docs/.hidden/a.md", false},
		{"**/*.md", "docs/.a.md", false},
		{".github/**/*.md", ".github/x/a.md", true},
		{"docs/.*.md", "docs/.a.md", true},
		{"docs/[ab].md", "docs/b.md", true},
		{"docs/?.md", "docs/ab.md", false},
		{"docs/*", "docs/a/b.md", false},
	}
	for _, tt := range tests {
		if got := matchGlob(tt.pattern, tt.name); got != tt.want {
			t.Errorf("matchGlob(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestCheckPattern(t *testing.T) {
	for p, ok := range map[string]bool{"**/*.md": true, "a/**/b": true, "[": false, "a/[/b": false, "": false} {
		if err := checkPattern(p); (err == nil) != ok {
			t.Errorf("checkPattern(%q) = %v, want ok %v", p, err, ok)
		}
	}
}

func TestCleanPath(t *testing.T) {
	for name, want := range map[string]string{
		"a/b.md": "a/b.md", "./a/b.md": "a/b.md", "a//b/./c.md": "a/b/c.md", `a\b.md`: "a/b.md",
		"a/../b.md": "b.md", "./": "", "../a": "!", "a/../../b": "!", "/a": "!", "C:x": "!", "a\x00b": "!",
	} {
		got, err := cleanPath(name)
		if want == "!" {
			if err == nil {
				t.Errorf("cleanPath(%q) = %q, want an error", name, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("cleanPath(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
}
