// Package segment is a child index whose bytes do not depend on the
// corpus statistics: a segment stores, for the children of a group of
// documents, each term's frequency in each child and in each parent's
// context, and each text's length, and never a BM25 weight. A revision's
// child index is a Set of segments; its statistics (N, every term's
// document frequency, the average length) are the sums of the segments'
// own counts, so they are exact without reading any text, and a segment
// whose documents did not change is the same file in the next revision
// whatever else changed.
//
// A parent's context terms are stored once per parent, not once per
// child: a child's weight for a term is its own BM25 weight plus the
// context weight times its parent's context BM25 weight for that term,
// computed at search time from the counts with the lexical embedder's
// arithmetic (bm25.DocWeights), then summed over the query's terms in
// vocabulary order. Every score is therefore bit for bit the inner
// product of the query vector with the vector the indexer would have
// stored for the child (its BM25 vector plus the context weight times its
// context's, vector.AppendScaled).
package segment
