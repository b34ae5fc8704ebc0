package server

// Query-cost limits grow with the loaded index: a question's terms reach
// more postings in a larger index, so a fixed limit that suits 100,000
// children makes ordinary questions heavy, or refused, at millions. Each
// limit is the larger of its floor (HeavyPostings, MaxPostings) and its
// multiple of the index's children (HeavyPostingsPerChild,
// MaxPostingsPerChild): the postings of a query whose terms each appear in
// every child, repeated that many times.

// Defaults of the per-child multiples.
const (
	// DefaultHeavyPostingsPerChild makes a query heavy past 8 postings per
	// child: eight of its terms in every child of the index.
	DefaultHeavyPostingsPerChild = 8
	// DefaultMaxPostingsPerChild refuses a query past 64 postings per
	// child.
	DefaultMaxPostingsPerChild = 64
)

// costLimits are the limits of one loaded index, in postings; 0 is none.
type costLimits struct {
	heavy, max int
}

// costLimitsFor returns the limits for an index of children children.
func (o Options) costLimitsFor(children int) costLimits {
	return costLimits{
		heavy: scaledLimit(o.HeavyPostings, o.HeavyPostingsPerChild, children),
		max:   scaledLimit(o.MaxPostings, o.MaxPostingsPerChild, children),
	}
}

// scaledLimit is max(floor, perChild × children); a floor of 0 or less
// (no limit) stays none, and a perChild of 0 or less keeps the floor.
func scaledLimit(floor, perChild, children int) int {
	if floor <= 0 {
		return 0
	}
	if perChild <= 0 {
		return floor
	}
	return max(floor, perChild*children)
}
