// Command testjson reads the events of `go test -json` on its standard
// input, prints their output as `go test` would have, and writes the
// top-level tests that were skipped, one "package test" pair a line, to
// the file its one argument names. `make test` uses it to run again, without -short and
// without the race detector, the long runs that -short skips.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// event is the part of a test2json event this command reads.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go test -json ... | testjson SKIPPED-FILE")
		os.Exit(2)
	}
	skipped, err := copyEvents(os.Stdin, os.Stdout)
	if err == nil {
		err = os.WriteFile(os.Args[1], []byte(strings.Join(skipped, "\n")+"\n"), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testjson:", err)
		os.Exit(1)
	}
}

// copyEvents prints the output of the events read from in to out as
// `go test` prints it without -v: a test's output only when it fails, a
// package's summary line always. It returns the top-level tests skipped
// as "package test" lines, sorted. A line that is not an event (a build
// error) is printed as it is.
func copyEvents(in *os.File, out *os.File) ([]string, error) {
	w := bufio.NewWriter(out)
	defer w.Flush()
	held := map[string]*strings.Builder{} // output of the tests running, by package and name
	var skipped []string
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(w, sc.Text())
			continue
		}
		key := e.Package + " " + e.Test
		switch {
		case e.Test == "" && e.Action == "output" && e.Output != "PASS\n":
			w.WriteString(e.Output)
		case e.Test == "" && e.Action == "fail":
			flushHeld(w, held, e.Package+" ") // tests cut short by the package's end
		case e.Action == "output":
			if held[key] == nil {
				held[key] = &strings.Builder{}
			}
			held[key].WriteString(e.Output)
		case e.Action == "fail" && strings.Contains(e.Test, "/"):
			parent := e.Package + " " + e.Test[:strings.LastIndex(e.Test, "/")]
			if held[parent] == nil {
				held[parent] = &strings.Builder{}
			}
			if b := held[key]; b != nil {
				held[parent].WriteString(b.String()) // printed when its parent ends
			}
			delete(held, key)
		case e.Action == "fail":
			if b := held[key]; b != nil {
				w.WriteString(b.String())
			}
			delete(held, key)
		case e.Action == "pass" || e.Action == "skip":
			delete(held, key)
		}
		if e.Action == "skip" && e.Test != "" && !strings.Contains(e.Test, "/") {
			skipped = append(skipped, key)
		}
		w.Flush()
	}
	slices.Sort(skipped)
	return skipped, sc.Err()
}

// flushHeld prints, and forgets, the held output of every test whose key
// starts with prefix (every test of a package), in the order of their
// names.
func flushHeld(w *bufio.Writer, held map[string]*strings.Builder, prefix string) {
	var keys []string
	for k := range held {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.WriteString(held[k].String())
		delete(held, k)
	}
}
