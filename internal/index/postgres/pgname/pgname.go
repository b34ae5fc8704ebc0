// Package pgname makes PostgreSQL identifiers of Kubernetes names: the
// tables and views of a Corpus. It depends on nothing but the standard
// library, so the API types can name what they own.
package pgname

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxLength is PostgreSQL's identifier length, in bytes.
const MaxLength = 63

// Identifier joins parts (a namespace, a corpus name, a revision) with
// underscores into a valid identifier that never needs quoting rules
// beyond double quotes: upper case is lowered, every other character that
// is not a letter, digit or underscore becomes an underscore, a leading
// digit gets an underscore in front, and a name over 63 bytes keeps its
// first 46 and ends with "_" and 16 hex digits of a SHA-256 of the whole,
// so distinct long names stay distinct. Kubernetes names map injectively
// except that "." and "-" both become "_".
func Identifier(parts ...string) string {
	joined := strings.Join(parts, "_")
	var b strings.Builder
	for i := 0; i < len(joined); i++ {
		c := joined[i]
		switch {
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		case c == '_' || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'):
			b.WriteByte(c)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	if name == "" || (name[0] >= '0' && name[0] <= '9') {
		name = "_" + name
	}
	if len(name) > MaxLength {
		sum := sha256.Sum256([]byte(joined))
		name = name[:MaxLength-17] + "_" + hex.EncodeToString(sum[:8])
	}
	return name
}
