package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// queryFlags tune a retrieval from the command line.
type queryFlags struct {
	maxParents  int
	childTopK   int
	aggregation string
	budget      int
	asJSON      bool
	mode        string
	adaptive    adaptiveFlags
	search      searchFlags
}

// register adds the query flags to cmd.
func (f *queryFlags) register(cmd *cobra.Command) {
	cmd.Flags().IntVar(&f.maxParents, "max-parents", retrieve.DefaultMaxParents, "most parents returned")
	cmd.Flags().IntVar(&f.childTopK, "child-top-k", retrieve.DefaultChildTopK, "children fetched first (more are fetched until max-parents distinct parents are found)")
	cmd.Flags().StringVar(&f.aggregation, "aggregation", string(retrieve.AggregateMax), "how child scores make a parent score: Max, Mean or Sum")
	cmd.Flags().IntVar(&f.budget, "budget", 0, "cap on the returned text, in the policy's length unit (0: none)")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the results as JSON")
	cmd.Flags().StringVar(&f.mode, "mode", string(retrieve.DefaultMode), "what is returned: Parents (each hit child's parent) or Adaptive (the unit of the level that holds enough of the evidence)")
	f.adaptive.register(cmd.Flags())
	f.search.register(cmd)
}

// options converts the flags, refusing values out of range.
func (f *queryFlags) options(m bundle.Manifest) (retrieve.Options, error) {
	agg := retrieve.Aggregation(f.aggregation)
	if agg != retrieve.AggregateMax && agg != retrieve.AggregateMean && agg != retrieve.AggregateSum {
		return retrieve.Options{}, fmt.Errorf("--aggregation %q: want Max, Mean or Sum", f.aggregation)
	}
	if f.maxParents < 1 || f.childTopK < 1 || f.budget < 0 {
		return retrieve.Options{}, fmt.Errorf("--max-parents and --child-top-k must be at least 1, --budget at least 0")
	}
	if err := checkMode(f.mode, f.adaptive); err != nil {
		return retrieve.Options{}, err
	}
	length, err := policy.LengthFunc(m.LengthUnit, m.Tokenizer)
	if err != nil {
		return retrieve.Options{}, err
	}
	o := retrieve.Options{
		ChildTopK: f.childTopK, MaxParents: f.maxParents, Aggregation: agg, Budget: f.budget, Length: length,
		Mode: retrieve.Mode(f.mode), Adaptive: f.adaptive.options(),
	}
	return o, f.search.apply(&o)
}

// newLocalQueryCommand answers one question from a local index.
func newLocalQueryCommand() *cobra.Command {
	var (
		dir string
		qf  queryFlags
	)
	cmd := &cobra.Command{
		Use:   `query --index DIR [--max-parents N] [--json] "question"`,
		Short: "Ask a local index a question; matching children return their parents",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				return fmt.Errorf("--index is required: the directory written by parentrag local index")
			}
			b, err := openLocalIndex(dir)
			if err != nil {
				return err
			}
			defer b.Close()
			return runQuery(cmd, b, strings.Join(args, " "), qf)
		},
	}
	cmd.Flags().StringVar(&dir, "index", "", "index directory written by parentrag local index")
	qf.register(cmd)
	return cmd
}

// runQuery retrieves for question and prints the results.
func runQuery(cmd *cobra.Command, b *bundle.Bundle, question string, qf queryFlags) error {
	opts, err := qf.options(b.Manifest)
	if err != nil {
		return err
	}
	results, err := b.Retriever.Retrieve(cmd.Context(), question, opts)
	if err != nil {
		return err
	}
	if qf.asJSON {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"query": question, "revision": b.Manifest.Revision, "results": nonNil(results)})
	}
	printResults(cmd.OutOrStdout(), question, results)
	return nil
}

// unwrapPathError drops the operation and path of an *fs.PathError, which
// the caller's message already names.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// nonNil makes an empty result list print as [] rather than null.
func nonNil(results []retrieve.Result) []retrieve.Result {
	if results == nil {
		return []retrieve.Result{}
	}
	return results
}

// printResults writes results for a person: rank, score, document and the
// parent's text, indented.
func printResults(w io.Writer, question string, results []retrieve.Result) {
	if len(results) == 0 {
		fmt.Fprintf(w, "no parent matches %q\n", question)
		return
	}
	for i, r := range results {
		title := r.DocID
		if r.Title != "" {
			title = fmt.Sprintf("%s (%s)", r.Title, r.DocID)
		}
		level := ""
		if r.Level != hierarchy.LevelParent {
			level = "  " + string(r.Level)
		}
		fmt.Fprintf(w, "%d. %s  score %.3f%s  %d matching children\n", i+1, title, r.Score, level, len(r.Matches))
		for _, line := range strings.Split(strings.TrimSpace(r.Text), "\n") {
			fmt.Fprintf(w, "   | %s\n", line)
		}
		fmt.Fprintln(w)
	}
}
