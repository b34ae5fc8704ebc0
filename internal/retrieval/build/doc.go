// Package build turns documents into a revision bundle: it splits them with
// a chunking policy, embeds the children, fills the revision's Milvus
// collection when there is one, and saves the bundle with its manifest.
// The operator, the indexing Job and the CLI call Run with their own
// sources and sinks, so a revision is built the same way everywhere.
package build
