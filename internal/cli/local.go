package cli

import (
	"github.com/spf13/cobra"
)

// newLocalCommand groups the commands that index and query on one machine,
// without a cluster.
func newLocalCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "local",
		Short: "Index and query on this machine, without a cluster",
	}
	cmd.AddCommand(newLocalIndexCommand(), newLocalQueryCommand(), newLocalDemoCommand(), newLocalUICommand())
	return cmd
}
