package synthtest

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkMachine characterises the core a benchmark runs on, so that a
// build's throughput measured at one moment can be told apart from the
// machine's speed at that moment: "sha256" is pure computation (MB/s),
// and "chase" follows a random cycle through a table of the given size,
// one 64-byte line a step, each read waiting for the last (ns/read): how
// long a random read costs once a table outgrows each cache. A build's
// tables of words and terms are read at random, so it slows with the
// chase at 2 to 8 MiB where computation does not. Run it pinned to the
// core under test (taskset -c N ... -cpu 1).
func BenchmarkMachine(b *testing.B) {
	b.Run("sha256", func(b *testing.B) {
		buf := make([]byte, 1<<20)
		b.SetBytes(int64(len(buf)))
		for b.Loop() {
			sha256.Sum256(buf)
		}
	})
	for _, kib := range []int{256, 1024, 2048, 4096, 8192, 32768} {
		b.Run(fmt.Sprintf("chase/%dKiB", kib), func(b *testing.B) {
			next := randomCycle(kib << 10 / lineBytes)
			at := 0
			for b.Loop() {
				for range chaseSteps {
					at = next[at]
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chaseSteps), "ns/read")
			sinkIndex = at
		})
	}
}

// lineBytes is the size of a cache line; chaseSteps the reads of one
// iteration of the chase.
const (
	lineBytes  = 64
	chaseSteps = 1 << 16
)

// sinkIndex keeps the chase's last read, so that the loop is not removed.
var sinkIndex int

// randomCycle returns a table of lines lines of 64 bytes, each line's
// first word the index of the next line's first word, along one random
// cycle through them all.
func randomCycle(lines int) []int {
	words := lineBytes / 8
	next := make([]int, lines*words)
	order := rand.New(rand.NewPCG(1, 2)).Perm(lines)
	for i, line := range order {
		next[line*words] = order[(i+1)%lines] * words
	}
	return next
}
