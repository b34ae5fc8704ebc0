// Command synthcorpus writes the synthetic corpus of the benchmarks (Zipf
// pseudo-words, internal/retrieval/synthtest) as JSON Lines, one document
// a line with "id", "title" and "text", about the given megabytes of text:
//
//	go run ./test/synthcorpus 500 > corpus.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "synthcorpus:", err)
		os.Exit(1)
	}
}

// run writes the corpus of args[0] megabytes to standard output.
func run(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: synthcorpus MEGABYTES")
	}
	mb, err := strconv.ParseFloat(args[0], 64)
	if err != nil || mb <= 0 {
		return fmt.Errorf("megabytes %q: want a positive number", args[0])
	}
	docs, _ := synthtest.BenchDocuments(int(mb * 1e6))
	w := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(w)
	for _, d := range docs {
		if err := enc.Encode(map[string]string{"id": d.ID, "title": d.Title, "text": d.Text}); err != nil {
			return err
		}
	}
	return w.Flush()
}
