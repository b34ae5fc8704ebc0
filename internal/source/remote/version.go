package remote

import (
	"net/http"
	"strconv"
	"strings"
)

// Version identifies a source's content: the validators the server sent
// and the checksum of the bytes.
type Version struct {
	// ETag is the entity tag the server sent, verbatim.
	ETag string
	// LastModified is the Last-Modified header the server sent, verbatim.
	LastModified string
	// Checksum is "sha256:<hex>" of the downloaded bytes.
	Checksum string
}

// versionOf reads the validators of a response.
func versionOf(h http.Header, checksum string) Version {
	return Version{ETag: h.Get("ETag"), LastModified: h.Get("Last-Modified"), Checksum: checksum}
}

// IsZero reports whether v identifies nothing.
func (v Version) IsZero() bool {
	return v == Version{}
}

// String gives the set fields in a fixed order with quoted values, so that
// equal versions give equal strings and different ones different strings;
// it suits a revision digest. A zero Version gives "".
func (v Version) String() string {
	var parts []string
	for _, f := range []struct{ key, value string }{
		{"checksum", v.Checksum}, {"etag", v.ETag}, {"lastModified", v.LastModified},
	} {
		if f.value != "" {
			parts = append(parts, f.key+"="+strconv.Quote(f.value))
		}
	}
	return strings.Join(parts, " ")
}

// Matches reports whether v and o are known to name the same content: by
// Checksum when both have one, else by ETag, else by LastModified. Versions
// with nothing to compare do not match.
func (v Version) Matches(o Version) bool {
	switch {
	case v.Checksum != "" && o.Checksum != "":
		return v.Checksum == o.Checksum
	case v.ETag != "" && o.ETag != "":
		return v.ETag == o.ETag
	case v.LastModified != "" && o.LastModified != "":
		return v.LastModified == o.LastModified
	}
	return false
}
