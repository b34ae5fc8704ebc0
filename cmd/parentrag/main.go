// Command parentrag is parentrag's one binary: the command line for
// splitting, local indexing, querying and evaluation.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/parentrag/parentrag/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := cli.NewRootCommand().ExecuteContext(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "parentrag: %v\n", err)
		os.Exit(1)
	}
}
