// Package document knows the formats parentrag reads and turns a file of
// any of them into documents: Markdown, plain text, reStructuredText and
// JSON Lines as they are, HTML (and XHTML), PDF and DOCX converted into
// Markdown-shaped text whose headings are the document's own structure,
// so that section parents follow it. Every source (local files and
// folders, HTTP(S) files and archives, Flux artifacts, ConfigMaps, inline
// text) asks this package what a file is and how to read it.
//
// A file that cannot be read is an error that names it and says why; no
// file can make a reader run or grow without bound: see Limits.
package document
