package segment

// SeedParents sets how many parents of largest bound Search scores before
// it sweeps the segments it adds bounds up in.
func (s *Set) SeedParents(n int) { s.seeds = n }
