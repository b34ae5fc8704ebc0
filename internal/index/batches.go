package index

// Batches splits records, in order, into runs of at most maxRows records
// whose sizes (as size estimates them) add up to about maxBytes: a run
// closes before the record that would pass either bound, and always holds
// at least one record. External stores use it to bound each insert.
func Batches(records []Record, maxRows, maxBytes int, size func(*Record) int) [][]Record {
	var out [][]Record
	start, total := 0, 0
	for i := range records {
		n := size(&records[i])
		if i > start && (i-start >= maxRows || total+n > maxBytes) {
			out = append(out, records[start:i])
			start, total = i, 0
		}
		total += n
	}
	if start < len(records) {
		out = append(out, records[start:])
	}
	return out
}
