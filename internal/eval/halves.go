package eval

import "hash/fnv"

// Half returns the queries of one half of a set, 1 or 2: a query belongs
// to half 1 when the FNV-1a hash of its id is even, so the halves are
// fixed, about equal, and do not depend on the order of the file. Any
// other h returns every query. Settings are tuned on one half and
// reported on the other, so the reported figures are not those the
// settings were chosen for.
func Half(queries []Query, h int) []Query {
	if h != 1 && h != 2 {
		return queries
	}
	var out []Query
	for _, q := range queries {
		f := fnv.New32a()
		f.Write([]byte(q.ID))
		if int(f.Sum32()%2)+1 == h {
			out = append(out, q)
		}
	}
	return out
}
