// Package docs ships parentrag's documentation inside the binary, so that
// `parentrag local demo` has a corpus to index on any machine.
package docs

import "embed"

// Files holds every Markdown page under docs/.
//
//go:embed *.md spec/*.md protocols/*.md
var Files embed.FS
