package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"

	"github.com/spf13/cobra"

	"github.com/parentrag/parentrag/internal/inspector"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/server"
)

// defaultUIAddr keeps the local inspector, which has no auth, to this
// machine.
const defaultUIAddr = "127.0.0.1:8080"

// newLocalUICommand serves the inspector on a local index.
func newLocalUICommand() *cobra.Command {
	var dir, addr string
	cmd := &cobra.Command{
		Use:   "ui [--index DIR] [--addr 127.0.0.1:8080]",
		Short: "Open the inspector on a local index: answers with their matching children, and a policy preview",
		Long: "ui serves the inspector page, the query API of a local index (written by parentrag local index)\n" +
			"and the policy preview, with no auth, on this machine's loopback address by default. Without\n" +
			"--index only the policy preview answers. It stops on Ctrl-C.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runLocalUI(cmd, dir, addr)
		},
	}
	cmd.Flags().StringVar(&dir, "index", "", "index directory written by parentrag local index (default: none, the policy preview only)")
	cmd.Flags().StringVar(&addr, "addr", defaultUIAddr, "address to listen on; anyone who reaches it may query the index")
	return cmd
}

// runLocalUI opens the index, when there is one, and serves it with the
// inspector until the command's context is cancelled.
func runLocalUI(cmd *cobra.Command, dir, addr string) error {
	log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
	srv := server.New(server.Options{ShutdownDelay: -1, Inspector: server.InspectorOptions{Enabled: true}})
	if dir != "" {
		b, err := openLocalIndex(dir)
		if err != nil {
			return err
		}
		defer b.Close()
		srv.SetBundle(b)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", addr, err)
	}
	log.Info("serving", "addr", ln.Addr().String())
	fmt.Fprintf(cmd.OutOrStdout(), "parentrag inspector: http://%s%s (Ctrl-C stops it)\n", ln.Addr(), inspector.Prefix)
	if dir == "" {
		fmt.Fprintln(cmd.OutOrStdout(), "no --index: the policy preview answers, queries do not")
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	return srv.Serve(ctx, ln)
}

// openLocalIndex opens the index directory dir, naming it in the error
// when it is missing.
func openLocalIndex(dir string) (*bundle.Bundle, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("--index %s: %w", dir, unwrapPathError(err))
	}
	return bundle.Open(dir)
}
