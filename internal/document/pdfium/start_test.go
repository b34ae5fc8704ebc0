package pdfium

import (
	"testing"
)

// BenchmarkStart measures what the first PDF of a process costs before
// any page is read: compiling PDFium's WebAssembly module to machine code,
// without a compilation cache and with a warm one.
func BenchmarkStart(b *testing.B) {
	b.Run("compile", func(b *testing.B) {
		b.Setenv(CacheDirEnv, "off")
		startPools(b)
	})
	b.Run("cached", func(b *testing.B) {
		b.Setenv(CacheDirEnv, b.TempDir())
		start(b) // fills the cache
		b.ResetTimer()
		startPools(b)
	})
}

// startPools starts a pool and its first instance b.N times.
func startPools(b *testing.B) {
	for b.Loop() {
		start(b)
	}
}

// start compiles the module into a pool, takes an instance and closes
// both.
func start(b *testing.B) {
	pool, err := newPool()
	if err != nil {
		b.Fatal(err)
	}
	inst, err := pool.GetInstance(0)
	if err != nil {
		b.Fatal(err)
	}
	inst.Close()
	pool.Close()
	releaseMemory()
}
