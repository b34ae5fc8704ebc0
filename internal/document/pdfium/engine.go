// Package pdfium reads the text and outline of PDF files with PDFium, the
// PDF engine of Chromium, compiled to WebAssembly and run by wazero: pure
// Go, no cgo, nothing downloaded at run time (the module is compiled into
// the binary). Each file is read by a fresh instance whose memory is
// capped and whose run is stopped at a deadline, so no file can make the
// process use more memory than the cap or run past the deadline.
package pdfium

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"time"

	gopdfium "github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// MemoryLimit is the most memory one file may make PDFium use: the
// WebAssembly instance's linear memory is capped at it.
const MemoryLimit = 512 << 20

// wasmPage is the size of a WebAssembly memory page.
const wasmPage = 64 << 10

// engine is the compiled PDFium module, shared by every read of the
// process. Compiling it takes seconds, so it happens once, at the first
// PDF, and the compiled code is kept in the user's cache directory when
// there is one that can be written, so that later processes start in
// about a tenth of a second.
var engine struct {
	once sync.Once
	pool gopdfium.Pool
	err  error
}

// instance returns a fresh PDFium instance, compiling the module at the
// first call. Instances are handed out one at a time: a second caller
// waits for the first to close its instance.
func instance(ctx context.Context) (gopdfium.Pdfium, error) {
	engine.once.Do(func() { engine.pool, engine.err = newPool() })
	if engine.err != nil {
		return nil, engine.err
	}
	return engine.pool.GetInstanceWithContext(ctx)
}

// newPool compiles the module into a pool of at most one instance at a
// time, each new for its file (no state passes from one file to the
// next), with no file system, its memory capped at MemoryLimit (and
// mapped outside the Go heap where the system allows) and its calls
// stopped when the instance is killed.
func newPool() (gopdfium.Pool, error) {
	cfg := wazero.NewRuntimeConfig().
		WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesExceptionHandling).
		WithMemoryLimitPages(MemoryLimit / wasmPage).
		WithCloseOnContextDone(true)
	if cache := compilationCache(); cache != nil {
		cfg = cfg.WithCompilationCache(cache)
	}
	return webassembly.Init(webassembly.Config{
		Context:       experimental.WithMemoryAllocator(context.Background(), memoryAllocator),
		MaxTotal:      1,
		FSConfig:      wazero.NewFSConfig(),
		RuntimeConfig: cfg,
		Stdout:        discard{},
		Stderr:        discard{},
	})
}

// CacheDirEnv names the environment variable that sets the directory the
// compiled module is kept in; "off" keeps it in memory only. By default it
// is parentrag/pdfium in the user's cache directory.
const CacheDirEnv = "PARENTRAG_PDFIUM_CACHE"

// compilationCache is the on-disk cache of compiled code, or nil when
// there is no directory it can be kept in (a read-only file system).
func compilationCache() wazero.CompilationCache {
	dir := os.Getenv(CacheDirEnv)
	if dir == "off" {
		return nil
	}
	if dir == "" {
		root, err := os.UserCacheDir()
		if err != nil {
			return nil
		}
		dir = filepath.Join(root, "parentrag", "pdfium")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil
	}
	probe, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return nil
	}
	probe.Close()
	os.Remove(probe.Name())
	cache, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		return nil
	}
	return cache
}

// discard is an io.Writer that keeps nothing: PDFium's own messages.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// killAfter stops inst at the deadline unless stop is called first. It
// reports, once stop has been called, whether inst was killed.
func killAfter(inst gopdfium.Pdfium, d time.Duration) (stop func() bool) {
	var mu sync.Mutex
	killed, stopped := false, false
	timer := time.AfterFunc(d, func() {
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			killed = true
			inst.Kill()
		}
	})
	return func() bool {
		timer.Stop()
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		return killed
	}
}
