// Command glove serves GloVe sentence vectors (internal/glove) over the
// OpenAI /v1/embeddings protocol, for tests, `parentrag eval` and demos:
//
//	(cd test/glove && npm ci) && go run ./test/glove -listen 127.0.0.1:8089
//	parentrag eval ... --embedding-endpoint http://127.0.0.1:8089/v1 --embedding-model glove-sif
//
// It is a weak model (a bag of word vectors): run Text Embeddings
// Inference, Ollama, vLLM or OpenAI for real retrieval.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/parentrag/parentrag/internal/glove"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "glove:", err)
		os.Exit(1)
	}
}

// run loads the vectors, listens and serves until SIGINT or SIGTERM.
func run() error {
	listen := flag.String("listen", "127.0.0.1:8089", "address to listen on (0.0.0.0:8089 for pods of a cluster on this machine)")
	dir := flag.String("dir", "", "folder where npm ci installed "+glove.Package+" (default: test/glove of this source tree, or $"+glove.DirEnv+")")
	flag.Parse()
	if *dir == "" {
		d, err := glove.InstallDir()
		if err != nil {
			return err
		}
		*dir = d
	}
	start := time.Now()
	m, err := glove.Open(*dir, glove.Options{})
	if err != nil {
		return err
	}
	s, err := glove.NewServer(m)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	fmt.Printf("loaded %d words in %s; serving %s and %s on http://%s/v1\n", m.Words(), time.Since(start).Round(time.Millisecond), glove.ModelSIF, glove.ModelMean, ln.Addr())
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
