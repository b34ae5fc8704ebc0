package remote

import (
	"path"
	"strings"
)

// doubleStar is the pattern segment that matches any number of path
// segments.
const doubleStar = "**"

// checkPattern refuses a glob that path.Match cannot parse or that is
// empty.
func checkPattern(pattern string) error {
	if pattern == "" {
		return path.ErrBadPattern
	}
	for _, seg := range strings.Split(pattern, "/") {
		if seg == doubleStar {
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return err
		}
	}
	return nil
}

// matchAny reports whether name matches one of patterns.
func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if matchGlob(p, name) {
			return true
		}
	}
	return false
}

// matchGlob reports whether the slash-separated name matches pattern as
// a whole: segments match as in path.Match, "**" matches zero or more
// segments, and wildcards never match a dot-segment (".github") unless the
// pattern segment starts with a dot too.
func matchGlob(pattern, name string) bool {
	return matchSegments(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

// matchSegments matches pattern segments against name segments.
func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == doubleStar {
			return matchDoubleStar(pat[1:], name)
		}
		if len(name) == 0 || !matchSegment(pat[0], name[0]) {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// matchDoubleStar matches the rest of a pattern after "**" against every
// suffix of name that "**" may skip to, never skipping a dot-segment.
func matchDoubleStar(rest, name []string) bool {
	for i := 0; i <= len(name); i++ {
		if matchSegments(rest, name[i:]) {
			return true
		}
		if i < len(name) && hidden(name[i]) {
			return false
		}
	}
	return false
}

// matchSegment matches one segment; a dot-segment needs a pattern that
// starts with a dot.
func matchSegment(pat, seg string) bool {
	if hidden(seg) && !strings.HasPrefix(pat, ".") {
		return false
	}
	ok, _ := path.Match(pat, seg)
	return ok
}

// hidden reports whether a path segment is a dot-file or dot-folder.
func hidden(seg string) bool {
	return strings.HasPrefix(seg, ".")
}
