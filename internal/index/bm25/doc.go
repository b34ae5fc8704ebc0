// Package bm25 is the lexical analysis every exact lexical child index
// shares: the analyzer (words, stop words, Porter2 stems), term counts, the
// corpus statistics and the BM25 embedder (Lexical) whose sparse inner
// product with a query's vector is the exact BM25 score. The embedded
// store indexes its vectors; segments store its counts and weigh them at
// search time with the same arithmetic (DocWeights), so both score a child
// bit for bit alike.
package bm25
