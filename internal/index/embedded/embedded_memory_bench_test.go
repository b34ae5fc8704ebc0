package embedded

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// The memory benchmarks measure in a fresh process each (the test binary
// re-run as TestMemoryProcess), so that one mode's heap and peak RSS never
// count against another's. PARENTRAG_BENCH_CHILDREN sets the corpus size
// (default 1M): the sparse BM25-style children of BenchmarkSparseSearch;
// PARENTRAG_BENCH_DENSE=D gives each child a D-dimensional dense vector
// too (searches stay sparse).

const memProcessEnv = "PARENTRAG_MEM_PROCESS"

// memCorpus is the corpus the memory benchmarks measure.
type memCorpus struct{ Children, Dims int }

// memRequest tells the helper process what to measure.
type memRequest struct {
	Mode string // mapped or heap (serving), save or writer (writing)
	Path string // the file to load, or the directory to write into
	memCorpus
}

func memCorpusOf(b *testing.B) memCorpus {
	c := memCorpus{Children: 1_000_000}
	for env, v := range map[string]*int{"PARENTRAG_BENCH_CHILDREN": &c.Children, "PARENTRAG_BENCH_DENSE": &c.Dims} {
		s := os.Getenv(env)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("%s=%q is not a positive number", env, s)
		}
		*v = n
	}
	return c
}

// batches calls fn with the corpus in batches of 10k children.
func (c memCorpus) batches(fn func([]index.Record) error) error {
	return synthBatches(newZipfGen(uint64(c.Children)), c.Children, c.Dims, fn)
}

// synthBatches calls fn with n synthetic sparse children drawn from g in
// batches of 10k, each with a dense vector of dims dimensions when dims is
// positive; sparseCorpus indexes them from newZipfGen(n) without.
func synthBatches(g *zipfGen, n, dims int, fn func([]index.Record) error) error {
	const batch = 10000
	r := rand.New(rand.NewPCG(uint64(n), uint64(dims)))
	for i := 0; i < n; i += batch {
		recs := make([]index.Record, min(batch, n-i))
		for j := range recs {
			v := vector.Vector{Sparse: g.child()}
			if dims > 0 {
				v.Dense = randDense(r, dims, false)
			}
			recs[j] = childRecord(i+j, v)
		}
		if err := fn(recs); err != nil {
			return err
		}
	}
	return nil
}

// memFile writes the n-child file once per benchmark run, with the
// streaming writer so the benchmark process stays small.
var memFile struct {
	sync.Mutex
	corpus memCorpus
	path   string
}

func memCorpusFile(b *testing.B, c memCorpus) string {
	memFile.Lock()
	defer memFile.Unlock()
	if memFile.path != "" && memFile.corpus == c {
		return memFile.path
	}
	dir, err := os.MkdirTemp("", "parentrag-mem-bench-")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	w, err := NewFileWriter(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := c.batches(func(recs []index.Record) error { return w.Upsert(ctx, recs) }); err != nil {
		b.Fatal(err)
	}
	if err := w.Finish(ctx, c.Children); err != nil {
		b.Fatal(err)
	}
	if memFile.path != "" {
		os.RemoveAll(filepath.Dir(memFile.path))
	}
	memFile.corpus, memFile.path = c, filepath.Join(dir, File)
	return memFile.path
}

// BenchmarkServeMemory loads the n-child file mapped and into the heap and
// reports, per mode, the load time (and for the mapping, the time the
// body checksum takes over it) and the process's memory after loading and
// after 2000 searches: VmRSS and its anonymous and file-backed (page
// cache) shares from /proc/self/status, and the Go heap in use.
func BenchmarkServeMemory(b *testing.B) {
	c := memCorpusOf(b)
	path := memCorpusFile(b, c)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d children, %d dense dims, file %.0f MiB", c.Children, c.Dims, float64(st.Size())/(1<<20))
	for _, mode := range []string{"mapped", "heap"} {
		b.Run("load="+mode, func(b *testing.B) {
			var res map[string]float64
			for b.Loop() {
				res = runMemProcess(b, memRequest{Mode: mode, Path: path, memCorpus: c})
			}
			reportAll(b, res)
		})
	}
}

// BenchmarkWriteFile writes the n-child file by Embedded Upsert and Save
// and by the streaming FileWriter, and reports per way the time spent in
// Upsert and in Save or Finish, the peak Go heap and the peak RSS.
func BenchmarkWriteFile(b *testing.B) {
	c := memCorpusOf(b)
	for _, mode := range []string{"save", "writer"} {
		b.Run("by="+mode, func(b *testing.B) {
			var res map[string]float64
			for b.Loop() {
				dir := b.TempDir()
				res = runMemProcess(b, memRequest{Mode: mode, Path: dir, memCorpus: c})
			}
			reportAll(b, res)
		})
	}
}

func reportAll(b *testing.B, res map[string]float64) {
	for unit, v := range res {
		b.ReportMetric(v, unit)
	}
}

// runMemProcess runs the measurement in a fresh test process and returns
// what it reported.
func runMemProcess(b *testing.B, req memRequest) map[string]float64 {
	spec, _ := json.Marshal(req)
	cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryProcess$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), memProcessEnv+"="+string(spec))
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("memory process: %v\n%s", err, out)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "MEMRESULT "); ok {
			var res map[string]float64
			if err := json.Unmarshal([]byte(line), &res); err != nil {
				b.Fatal(err)
			}
			return res
		}
	}
	b.Fatalf("memory process reported nothing:\n%s", out)
	return nil
}

// TestMemoryProcess is the helper process of the memory benchmarks; it
// runs only when one of them starts it.
func TestMemoryProcess(t *testing.T) {
	spec := os.Getenv(memProcessEnv)
	if spec == "" {
		t.Skip("helper process of BenchmarkServeMemory and BenchmarkWriteFile; runs only when they start it")
	}
	var req memRequest
	if err := json.Unmarshal([]byte(spec), &req); err != nil {
		t.Fatal(err)
	}
	var res map[string]float64
	var err error
	switch req.Mode {
	case "mapped", "heap":
		res, err = measureServing(req)
	case "save", "writer":
		res, err = measureWriting(req)
	default:
		err = fmt.Errorf("unknown mode %q", req.Mode)
	}
	if err != nil {
		t.Fatal(err)
	}
	line, _ := json.Marshal(res)
	fmt.Printf("MEMRESULT %s\n", line)
}

// measureServing loads the file and searches it, reading memory after each.
func measureServing(req memRequest) (map[string]float64, error) {
	res := map[string]float64{}
	base := procStatus()
	start := time.Now()
	e, err := loadFile(req.Path, req.Mode == "mapped")
	if err != nil {
		return nil, err
	}
	defer e.Close()
	res["load-s"] = time.Since(start).Seconds()
	if (req.Mode == "mapped") != e.Mapped() {
		return nil, fmt.Errorf("mode %s loaded a store with Mapped() %v", req.Mode, e.Mapped())
	}
	record := func(prefix string) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s := procStatus()
		res[prefix+"rss-MiB"] = s["VmRSS"] - base["VmRSS"]
		res[prefix+"anon-MiB"] = s["RssAnon"] - base["RssAnon"]
		res[prefix+"file-MiB"] = s["RssFile"] - base["RssFile"]
		res[prefix+"heap-MiB"] = float64(ms.HeapAlloc) / (1 << 20)
	}
	record("")
	if e.mapping != nil {
		start := time.Now()
		crc32.Checksum(e.mapping.data, castagnoli)
		res["crc-s"] = time.Since(start).Seconds()
	}
	g := newZipfGen(uint64(req.Children) + 1)
	idf := zipfIDF(req.Children)
	ctx := context.Background()
	for range benchQueries {
		if _, err := e.Search(ctx, index.SearchRequest{Vector: vector.Vector{Sparse: g.query(idf)}, TopK: 10}); err != nil {
			return nil, err
		}
	}
	record("searched-")
	return res, nil
}

// measureWriting writes the corpus by Save or by the writer, sampling the
// heap every 10ms for its peak.
func measureWriting(req memRequest) (map[string]float64, error) {
	stop := sampleHeapPeak()
	ctx := context.Background()
	var upsert func([]index.Record) error
	var finish func() error
	switch req.Mode {
	case "save":
		e, err := New(Options{})
		if err != nil {
			return nil, err
		}
		upsert = func(recs []index.Record) error { return e.Upsert(ctx, recs) }
		finish = func() error { return e.Save(req.Path) }
	default:
		w, err := NewFileWriter(req.Path, Options{})
		if err != nil {
			return nil, err
		}
		upsert = func(recs []index.Record) error { return w.Upsert(ctx, recs) }
		finish = func() error { return w.Finish(ctx, req.Children) }
	}
	var inUpsert time.Duration
	err := req.batches(func(recs []index.Record) error {
		start := time.Now()
		defer func() { inUpsert += time.Since(start) }()
		return upsert(recs)
	})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := finish(); err != nil {
		return nil, err
	}
	res := map[string]float64{"upsert-s": inUpsert.Seconds(), "finish-s": time.Since(start).Seconds()}
	res["peak-heap-MiB"] = stop()
	res["peak-rss-MiB"] = procStatus()["VmHWM"]
	st, err := os.Stat(filepath.Join(req.Path, File))
	if err != nil {
		return nil, err
	}
	res["file-MiB"] = float64(st.Size()) / (1 << 20)
	return res, nil
}

// sampleHeapPeak samples the live heap objects every 10ms until the
// returned function is called, which returns the peak in MiB.
func sampleHeapPeak() func() float64 {
	done := make(chan struct{})
	peak := make(chan float64)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		top := uint64(0)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			top = max(top, s[0].Value.Uint64())
			select {
			case <-done:
				peak <- float64(top) / (1 << 20)
				return
			case <-t.C:
			}
		}
	}()
	return func() float64 { close(done); return <-peak }
}

// procStatus returns the memory lines of /proc/self/status in MiB (empty
// where it cannot be read).
func procStatus() map[string]float64 {
	out := map[string]float64{}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		key, val, ok := strings.Cut(line, ":")
		fields := strings.Fields(val)
		if !ok || len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		if kb, err := strconv.ParseFloat(fields[0], 64); err == nil {
			out[key] = kb / 1024
		}
	}
	return out
}
