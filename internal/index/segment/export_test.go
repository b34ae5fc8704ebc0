package segment

// WalkCheapest, WalkByParent and WalkByBound choose how Search walks
// every segment: as the query makes cheapest (the default), or always
// one way.
func (s *Set) WalkCheapest() { s.walk = walkCheapest }
func (s *Set) WalkByParent() { s.walk = walkByParent }
func (s *Set) WalkByBound()  { s.walk = walkByBound }

// SeedParents sets how many parents of largest bound Search scores before
// it sweeps the segments it adds bounds up in.
func (s *Set) SeedParents(n int) { s.seeds = n }
