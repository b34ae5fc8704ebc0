// Package cli implements the parentrag command line: splitting, local
// indexing and querying, and evaluation. cmd/parentrag only wires it up.
package cli

import (
	"github.com/spf13/cobra"
)

// NewRootCommand returns the parentrag command with every subcommand.
func NewRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "parentrag",
		Short:         "Parent-child (small-to-big) retrieval: split, index, query and evaluate",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newSplitCommand(), newLocalCommand(), newEvalCommand(), newManagerCommand())
	root.AddCommand(newServeCommand(), newIndexCommand())
	return root
}
