package server

import (
	"strconv"
	"strings"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// HeadingPathSeparator joins the headings of a heading path where an
// answer gives it as one string.
const HeadingPathSeparator = " > "

// Location says where in its document a parent lies, as a person cites
// it: its heading path and its pages, "4 Proxies > 4.2 Configuring the
// proxy, pages 31-32"; "" when it has neither.
func Location(res retrieve.Result) string {
	var parts []string
	if len(res.HeadingPath) > 0 {
		parts = append(parts, strings.Join(res.HeadingPath, HeadingPathSeparator))
	}
	if res.Pages != nil {
		word := "pages "
		if res.Pages.First == res.Pages.Last {
			word = "page "
		}
		parts = append(parts, word+pageRange(res.Pages))
	}
	return strings.Join(parts, ", ")
}

// pageRange is "31-32", or "31" for a single page.
func pageRange(p *hierarchy.Pages) string {
	if p.First == p.Last {
		return strconv.Itoa(p.First)
	}
	return strconv.Itoa(p.First) + "-" + strconv.Itoa(p.Last)
}
