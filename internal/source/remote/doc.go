// Package remote reads documents from a URL: one HTTP(S) file, or a tar,
// gzipped tar or zip archive such as a Flux source-controller artifact.
//
// The content is untrusted. Downloads and unpacked archives are bounded in
// size and file count; entries that leave the archive root, links, special
// files, oversized, binary and non-UTF-8 files are refused one by one, each
// as a DocumentError that names the entry and says why, while the rest of
// the source is kept. Only problems with the source as a whole (transport
// errors, bad statuses, checksum mismatches, exceeded totals) fail it.
package remote
