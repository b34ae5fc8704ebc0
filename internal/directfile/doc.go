// Package directfile writes a new file from start to end without keeping
// its bytes in the writer's page cache where the file system allows it
// (O_DIRECT on Linux). A build writes each file of a bundle once, and
// other processes, often on other nodes, read it: copying every byte into
// the writer's page cache first costs the writer CPU (most of all on a
// virtual machine whose host takes back memory the guest leaves free, where
// each new page of cache is a fault in the host) and charges its memory
// cgroup for pages it never reads: `parentrag local index` of 500 MB into
// segments uses about 10% less CPU with direct writes than without
// (docs/benchmarks.md, "Bundle files past the page cache"). Where the
// file system refuses direct writes, a Writer writes as any file does;
// the bytes on disk are the same either way.
package directfile
