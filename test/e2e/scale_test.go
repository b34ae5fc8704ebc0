package e2e

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/controllers"
	"github.com/parentrag/parentrag/internal/devcluster"
	"github.com/parentrag/parentrag/internal/embedtest"
	"github.com/parentrag/parentrag/internal/indexjob"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// Settings of the scale report.
const (
	// scaleVocabulary is the synthetic corpus's vocabulary.
	scaleVocabulary = 30000
	// scaleQueries are asked of each query server, one after another.
	scaleQueries = 200
	// embedDims is the fake embedding model's vector length.
	embedDims = 64
	// embedKey is the API key the fake model requires.
	embedKey = "scale-report-key"
	// jobCacheMount is where an indexing Job mounts the embedding cache.
	jobCacheMount = "/var/cache/parentrag"
)

// TestScaleReport indexes synthetic Markdown corpora of growing size
// through the Job path on this machine: each is served as a .tar.gz from a
// local HTTP server to a Corpus url source, the Job's `parentrag index`
// runs on the host, then `parentrag serve` serves the revision from the
// claim's directory as a query pod would. It reports indexing throughput,
// the peak memory of the indexer and of the query server (after loading and
// after a batch of queries), query latency, and the embedding cache's hit
// rate when only the child size changes and, for contrast, when only the
// parent size does (with a fake embedding model, on a smaller corpus). It asserts only that every step succeeds and that no
// answer is empty.
//
// PARENTRAG_SCALE_MB sets the largest size, which is also measured at a
// tenth and two fifths of it ("500": 50, 200 and 500 MB), or lists the
// sizes ("20,100"); PARENTRAG_SCALE_CACHE_MB sets the cache run's size
// (default 20, at most the largest size). The report goes to the log and,
// when PARENTRAG_REPORT_DIR is set, to scale.md there.
func TestScaleReport(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes hundreds of MB through a whole control plane; skipped with -short")
	}
	sizes, cacheMB := scaleSizes(t)
	if os.Getenv("PARENTRAG_E2E_WAIT_MINUTES") == "" {
		t.Setenv("PARENTRAG_E2E_WAIT_MINUTES", "30")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := startJobCluster(t, ctx)
	bin, err := env.BuildBinary(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	samples := filepath.Join(env.Root, "config", "samples")
	if _, err := env.Apply(ctx, "", filepath.Join(samples, "parentrag_v1alpha1_chunkingpolicy.yaml")); err != nil {
		t.Fatal(err)
	}
	files := t.TempDir()
	web := httptest.NewServer(http.FileServer(http.Dir(files)))
	defer web.Close()

	rep := &scaleReport{Cores: runtime.NumCPU(), Memory: totalMemory()}
	for _, mb := range sizes {
		rep.Rows = append(rep.Rows, measureScale(t, ctx, env, bin, files, web.URL, mb))
	}
	rep.Cache = measureCache(t, ctx, env, bin, files, web.URL, cacheMB)
	rep.write(t)
}

// scaleSizes reads the sizes to measure, in MB, and the cache run's size;
// it skips the test when PARENTRAG_SCALE_MB is unset.
func scaleSizes(t *testing.T) ([]int, int) {
	t.Helper()
	v := os.Getenv("PARENTRAG_SCALE_MB")
	if v == "" {
		t.Skip("a scale report takes minutes to an hour: set PARENTRAG_SCALE_MB to the largest corpus in MB (e.g. 500)")
	}
	var sizes []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			t.Fatalf("PARENTRAG_SCALE_MB=%q: want a positive number of MB or a list of them", v)
		}
		sizes = append(sizes, n)
	}
	if len(sizes) == 1 {
		n := sizes[0]
		sizes = slices.DeleteFunc([]int{n / 10, n * 2 / 5, n}, func(s int) bool { return s <= 0 })
	}
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	cacheMB := min(20, sizes[len(sizes)-1])
	if c := os.Getenv("PARENTRAG_SCALE_CACHE_MB"); c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n <= 0 {
			t.Fatalf("PARENTRAG_SCALE_CACHE_MB=%q: want a positive number of MB", c)
		}
		cacheMB = n
	}
	return sizes, cacheMB
}

// scaleRow is what one corpus size measured.
type scaleRow struct {
	MB                                  int
	Pages                               int
	Text, Archive                       int64
	Documents, Parents, Children        int
	ChildIndex, ParentIndex, ParentText int64
	// SourceRead is from creating the Corpus to its Job existing: the
	// operator downloads, reads and hashes the sources and plans.
	SourceRead time.Duration
	// OperatorHeap is the test process's heap growth once the Job exists,
	// and after the Corpus is deleted: the operator runs in it.
	OperatorHeap, OperatorHeapAfterDelete int64
	// OperatorCPU is the test process's CPU time while the Job ran, and
	// Reconciles and ReconcileTime the Corpus reconciles in that time.
	OperatorCPU     time.Duration
	Reconciles      int
	ReconcileTime   time.Duration
	Index           *devcluster.PodExit
	Load            time.Duration
	Loaded, Queried devcluster.Memory
	Latency         []time.Duration
	Empty           int
}

// measureScale indexes and serves a synthetic corpus of mb MB in its own
// namespace, then deletes the Corpus and its volume's directory.
func measureScale(t *testing.T, ctx context.Context, env *devcluster.Env, bin, files, base string, mb int) scaleRow {
	t.Helper()
	row := scaleRow{MB: mb}
	name := fmt.Sprintf("synthetic-%dmb.tar.gz", mb)
	start := time.Now()
	var err error
	if row.Pages, row.Text, row.Archive, err = writeSyntheticArchive(filepath.Join(files, name), int64(mb)<<20, uint64(mb)); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d MB: wrote %d pages (%s of text, %s archive) in %s", mb, row.Pages, mib(row.Text), mib(row.Archive), time.Since(start).Round(time.Millisecond))
	ns := fmt.Sprintf("scale-%dmb", mb)
	if err := createNamespace(ctx, env, ns); err != nil {
		t.Fatal(err)
	}
	heap := heapInUse()
	corpus, retriever := createScaleCorpus(t, ctx, env, ns, samplePolicy, urlSource(base+"/"+name, row.Text), nil)
	created := time.Now()
	job := waitIndexJob(t, ctx, env, corpus, "")
	row.SourceRead = time.Since(created)
	row.OperatorHeap = heapInUse() - heap
	cpu := selfCPU()
	reconciles, reconcileTime := corpusReconciles()
	run := runIndexJob(t, ctx, env, bin, corpus, "")
	row.OperatorCPU = selfCPU() - cpu
	n, d := corpusReconciles()
	row.Reconciles, row.ReconcileTime = n-reconciles, d-reconcileTime
	row.Index = run.Exit
	if run.Job.Name != job.Name {
		t.Fatalf("ran Job %s, want %s", run.Job.Name, job.Name)
	}
	checkPromoted(t, ctx, env, corpus, run)
	a := corpus.Status.ActiveRevision
	row.Documents, row.Parents, row.Children = a.Documents, a.Parents, a.Children
	dir := filepath.Join(run.Volume, indexjob.BundleDir)
	row.ChildIndex, row.ParentIndex, row.ParentText = duSize(filepath.Join(dir, bundle.ChildrenDir)), duSize(filepath.Join(dir, parentstore.IndexFile)), duSize(filepath.Join(dir, parentstore.DataFile))
	waitServing(t, env, corpus, retriever, "")
	measureQueries(t, ctx, env, bin, retriever, run, uint64(mb), &row)
	deleteScaleCorpus(t, ctx, env, corpus, retriever)
	row.OperatorHeapAfterDelete = heapInUse() - heap
	os.RemoveAll(run.Volume)
	os.Remove(filepath.Join(files, name))
	return row
}

// measureQueries serves the run's revision as the Retriever's pod
// template says, from the claim's directory, and measures how long it
// takes to turn ready, its memory after loading and after scaleQueries
// queries, and each query's latency.
func measureQueries(t *testing.T, ctx context.Context, env *devcluster.Env, bin string, r *v1alpha1.Retriever, run *jobRun, seed uint64, row *scaleRow) {
	t.Helper()
	var d appsv1.Deployment
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(r), &d); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	srv, hp, err := env.StartPodServeMounted(ctx, bin, d.Namespace, d.Name, &d.Spec.Template.Spec)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if hp.Mounts[queryClaimMount] != run.Volume {
		t.Fatalf("the query pod's claim resolved to %s, the Job wrote to %s", hp.Mounts[queryClaimMount], run.Volume)
	}
	if err := srv.WaitReady(time.Duration(waitMinutes()) * time.Minute); err != nil {
		t.Fatalf("%v\n%s", err, srv.Log())
	}
	row.Load = time.Since(start)
	if row.Loaded, err = srv.Memory(); err != nil {
		t.Fatal(err)
	}
	gen := synthtest.New(seed+1000, scaleVocabulary)
	for range scaleQueries {
		q := gen.Query(2, 5)
		start := time.Now()
		resp, err := srv.Retrieve(ctx, q, 3)
		if err != nil {
			t.Fatalf("query %q: %v", q, err)
		}
		row.Latency = append(row.Latency, time.Since(start))
		if resp.Revision != run.Revision {
			t.Fatalf("query %q answered from revision %s, want %s", q, resp.Revision, run.Revision)
		}
		if len(resp.Results) == 0 {
			row.Empty++
		}
	}
	if row.Queried, err = srv.Memory(); err != nil {
		t.Fatal(err)
	}
	if row.Empty > 0 {
		t.Errorf("%d MB: %d of %d queries came back empty", row.MB, row.Empty, scaleQueries)
	}
}

// createScaleCorpus creates a copy of the named ChunkingPolicy (named
// after the namespace, so that changing it changes only this Corpus), and a
// Corpus of the source on claims, built by Jobs, with a Retriever of one
// replica.
func createScaleCorpus(t *testing.T, ctx context.Context, env *devcluster.Env, ns, policy string, src v1alpha1.Source, embedding *v1alpha1.Embedding) (*v1alpha1.Corpus, *v1alpha1.Retriever) {
	t.Helper()
	var p v1alpha1.ChunkingPolicy
	if err := env.Client.Get(ctx, client.ObjectKey{Name: policy}, &p); err != nil {
		t.Fatal(err)
	}
	own := &v1alpha1.ChunkingPolicy{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: *p.Spec.DeepCopy()}
	if err := env.Client.Create(ctx, own); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	corpus := claimCorpus(ns, "synthetic", own.Name, src)
	corpus.Spec.ParentStore.PersistentVolumeClaim.Size = resource.MustParse("20Gi")
	corpus.Spec.Indexing.ActiveDeadlineSeconds = ptr.To[int64](6 * 3600)
	corpus.Spec.Embedding = embedding
	retriever := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "synthetic"}, Spec: v1alpha1.RetrieverSpec{
		CorpusRef: v1alpha1.LocalObjectReference{Name: corpus.Name}, Replicas: ptr.To[int32](1),
	}}
	for _, obj := range []client.Object{corpus, retriever} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	return corpus, retriever
}

// urlSource reads a .tar.gz of text bytes of Markdown, with room to spare.
func urlSource(url string, text int64) v1alpha1.Source {
	return v1alpha1.Source{Name: "synthetic", URL: &v1alpha1.URLSource{
		URL: url, MaxTotalSize: resource.NewQuantity(2*text+1<<30, resource.BinarySI),
	}}
}

// deleteScaleCorpus deletes the Retriever and the Corpus and waits until
// the Corpus's finalizer let it go.
func deleteScaleCorpus(t *testing.T, ctx context.Context, env *devcluster.Env, c *v1alpha1.Corpus, r *v1alpha1.Retriever) {
	t.Helper()
	for _, obj := range []client.Object{r, c} {
		if err := env.Client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
	eventually(t, time.Minute, "Corpus "+c.Name+" to be deleted", func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(c), &v1alpha1.Corpus{}))
	})
}

// cacheRun is what the embedding cache measured: three builds of one
// corpus, the second after only the child size changed, the third, for
// contrast, after only the parent size changed.
type cacheRun struct {
	MB            int
	Text          int64
	Builds        []cacheBuild
	ServedParents int
}

// cacheBuild is one build of the cache run.
type cacheBuild struct {
	Revision string
	Change   string
	Parent   v1alpha1.ChunkSize
	Child    v1alpha1.ChunkSize
	Children int
	// Embedded counts the texts the embedding model was sent.
	Embedded int64
	Cache    *v1alpha1.EmbeddingCacheStatus
	Index    *devcluster.PodExit
}

// measureCache builds a synthetic corpus of mb MB with a fake embedding
// model behind the embedding cache, changes only the child size and builds
// again with the same cache claim, then only the parent size and builds a
// third time, then serves the last revision once (the model's key comes
// from a Secret, in the Job and the query pod).
func measureCache(t *testing.T, ctx context.Context, env *devcluster.Env, bin, files, base string, mb int) cacheRun {
	t.Helper()
	out := cacheRun{MB: mb}
	name := "synthetic-cache.tar.gz"
	var err error
	if _, out.Text, _, err = writeSyntheticArchive(filepath.Join(files, name), int64(mb)<<20, 7); err != nil {
		t.Fatal(err)
	}
	model, embedded := hashingEmbeddingServer(t)
	ns := "scale-cache"
	if err := createNamespace(ctx, env, ns); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "embedding-key"}, StringData: map[string]string{"apiKey": embedKey}}
	if err := env.Client.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	emb := &v1alpha1.Embedding{OpenAI: &v1alpha1.OpenAIEmbedding{Endpoint: model.URL, Model: "hashed-words", Dimensions: embedDims,
		SecretRef: &v1alpha1.SecretKeyReference{Name: secret.Name}}}
	corpus, retriever := createScaleCorpus(t, ctx, env, ns, samplePolicy, urlSource(base+"/"+name, out.Text), emb)
	var p v1alpha1.ChunkingPolicy
	if err := env.Client.Get(ctx, client.ObjectKey{Name: ns}, &p); err != nil {
		t.Fatal(err)
	}
	parent, child := *p.Spec.Parent, *p.Spec.Child
	// Copies keep every other field (the parent's Sections boundaries and
	// minimum size), so each build changes one size and nothing else.
	smallerChild, largerParent := child, parent
	smallerChild.ChunkSize, smallerChild.ChunkOverlap = child.ChunkSize*5/6, child.ChunkOverlap*5/6
	largerParent.ChunkSize = parent.ChunkSize * 4 / 3
	builds := []cacheBuild{
		{Change: "first build, empty cache", Parent: parent, Child: child},
		{Change: "child size only", Parent: parent, Child: smallerChild},
		{Change: "parent size only", Parent: largerParent, Child: smallerChild},
	}
	var cacheDir, previous string
	for i, b := range builds {
		if i > 0 {
			setSizes(t, ctx, env, ns, b.Parent, b.Child)
		}
		sent := embedded.Load()
		run := runIndexJob(t, ctx, env, bin, corpus, previous)
		if want := controllers.IndexArgs(corpus, run.Revision, false); !slices.Equal(run.Job.Spec.Template.Spec.Containers[0].Args, want) {
			t.Fatalf("Job args %v, want %v", run.Job.Spec.Template.Spec.Containers[0].Args, want)
		}
		if dir := run.Host.Mounts[jobCacheMount]; dir == "" || cacheDir != "" && dir != cacheDir {
			t.Fatalf("build %d used cache directory %q, the first %q: the cache claim must be the same", i+1, dir, cacheDir)
		} else {
			cacheDir = dir
		}
		checkPromoted(t, ctx, env, corpus, run)
		lb := corpus.Status.LastBuild
		if lb.EmbeddingCache == nil {
			t.Fatalf("build %d reported no embedding cache: lastBuild %+v", i+1, lb)
		}
		b.Revision, b.Children, b.Embedded, b.Cache, b.Index = run.Revision, corpus.Status.ActiveRevision.Children, embedded.Load()-sent, lb.EmbeddingCache, run.Exit
		out.Builds = append(out.Builds, b)
		previous = run.Revision
	}
	if last := out.Builds[len(out.Builds)-1].Cache; last.Hits < last.Misses {
		t.Fatalf("a new parent size alone re-embedded %d children and reused %d: it moves few child boundaries", last.Misses, last.Hits)
	}
	waitServing(t, env, corpus, retriever, out.Builds[len(out.Builds)-2].Revision)
	var d appsv1.Deployment
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(retriever), &d); err != nil {
		t.Fatal(err)
	}
	srv, _, err := env.StartPodServeMounted(ctx, bin, ns, d.Name, &d.Spec.Template.Spec)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if err := srv.WaitReady(time.Duration(waitMinutes()) * time.Minute); err != nil {
		t.Fatalf("%v\n%s", err, srv.Log())
	}
	resp, err := srv.Retrieve(ctx, synthtest.New(99, scaleVocabulary).Query(2, 5), 3)
	if err != nil || resp.Revision != previous || len(resp.Results) == 0 {
		t.Fatalf("query with the model's key from the Secret: %+v, %v", resp, err)
	}
	out.ServedParents = len(resp.Results)
	return out
}

// setSizes sets the parent and child chunk sizes of a ChunkingPolicy.
func setSizes(t *testing.T, ctx context.Context, env *devcluster.Env, name string, parent, child v1alpha1.ChunkSize) {
	t.Helper()
	var p v1alpha1.ChunkingPolicy
	if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &p); err != nil {
		t.Fatal(err)
	}
	p.Spec.Parent, p.Spec.Child = &parent, &child
	if err := env.Client.Update(ctx, &p); err != nil {
		t.Fatal(err)
	}
}

// hashingEmbeddingServer is an OpenAI-compatible /v1/embeddings that
// requires embedKey and embeds a text as its words hashed into embedDims
// signed buckets, and counts the texts it embeds.
func hashingEmbeddingServer(t *testing.T) (*embedtest.Server, *atomic.Int64) {
	srv := embedtest.Start(t, embedtest.Options{APIKey: embedKey, Dimensions: embedDims, Model: "hashed-words", Embed: hashWords})
	return srv, &srv.Texts
}

// hashWords is a text's lower-cased words hashed into embedDims signed
// buckets; never the zero vector.
func hashWords(text string) []float32 {
	v := make([]float32, embedDims)
	v[0] = 0.01
	for _, w := range strings.Fields(strings.ToLower(text)) {
		h := fnv.New32a()
		h.Write([]byte(strings.Trim(w, ".,;:!?#()")))
		sum := h.Sum32()
		if sum&(1<<31) != 0 {
			v[sum%embedDims]--
		} else {
			v[sum%embedDims]++
		}
	}
	return v
}

// writeSyntheticArchive writes to path a .tar.gz of Markdown pages, drawn
// deterministically from seed, until they hold size bytes of text; it
// returns the pages, the text's bytes and the archive's.
func writeSyntheticArchive(path string, size int64, seed uint64) (int, int64, int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, 0, 0, err
	}
	defer f.Close()
	buf := bufio.NewWriterSize(f, 1<<20)
	gz, _ := gzip.NewWriterLevel(buf, gzip.BestSpeed)
	tw := tar.NewWriter(gz)
	gen := synthtest.New(seed, scaleVocabulary)
	r := rand.New(rand.NewPCG(seed, 17))
	var pages int
	var text int64
	mtime := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for text < size {
		page := syntheticPage(gen, r)
		hdr := &tar.Header{Name: fmt.Sprintf("handbook/part-%03d/page-%06d.md", pages/1000, pages), Mode: 0o644, Size: int64(len(page)), ModTime: mtime, Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return 0, 0, 0, err
		}
		if _, err := tw.Write([]byte(page)); err != nil {
			return 0, 0, 0, err
		}
		pages++
		text += int64(len(page))
	}
	for _, c := range []interface{ Close() error }{tw, gz} {
		if err := c.Close(); err != nil {
			return 0, 0, 0, err
		}
	}
	if err := buf.Flush(); err != nil {
		return 0, 0, 0, err
	}
	info, err := f.Stat()
	if err != nil {
		return 0, 0, 0, err
	}
	return pages, text, info.Size(), nil
}

// syntheticPage is a handbook page: a title, an introduction and four to
// nine sections of two to five paragraphs, about 9 KB, so that even 800 MB
// stay under a url source's limit of 100,000 files.
func syntheticPage(gen *synthtest.Corpus, r *rand.Rand) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s %s\n\n%s\n", gen.Word(), gen.Word(), gen.Paragraph())
	for range 4 + r.IntN(6) {
		fmt.Fprintf(&b, "\n## %s %s %s\n", gen.Word(), gen.Word(), gen.Word())
		for range 2 + r.IntN(4) {
			fmt.Fprintf(&b, "\n%s\n", gen.Paragraph())
		}
	}
	return b.String()
}

// heapInUse is the test process's heap in use after a collection.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// selfCPU is the user and system time the test process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// corpusReconciles reads from controller-runtime's metrics how many times
// the operator in this process reconciled a Corpus, and the time it spent.
func corpusReconciles() (int, time.Duration) {
	families, _ := metrics.Registry.Gather()
	var n float64
	var sum float64
	for _, f := range families {
		for _, m := range f.GetMetric() {
			corpus := false
			for _, l := range m.GetLabel() {
				corpus = corpus || l.GetName() == "controller" && l.GetValue() == "corpus"
			}
			switch {
			case !corpus:
			case f.GetName() == "controller_runtime_reconcile_total":
				n += m.GetCounter().GetValue()
			case f.GetName() == "controller_runtime_reconcile_time_seconds":
				sum += m.GetHistogram().GetSampleSum()
			}
		}
	}
	return int(n), time.Duration(sum * float64(time.Second))
}

// totalMemory is the machine's memory, from /proc/meminfo.
func totalMemory() int64 {
	data, _ := os.ReadFile("/proc/meminfo")
	var kib int64
	fmt.Sscanf(strings.TrimPrefix(strings.SplitN(string(data), "\n", 2)[0], "MemTotal:"), "%d", &kib)
	return kib << 10
}

// duSize is the bytes of a file or of every file under a directory.
func duSize(path string) int64 {
	var n int64
	filepath.Walk(path, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n
}

// scaleReport is what TestScaleReport measured.
type scaleReport struct {
	Cores  int
	Memory int64
	Rows   []scaleRow
	Cache  cacheRun
}

// markdown renders the report: one column per corpus size, then the cache
// run.
func (r *scaleReport) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "One machine: %d cores, %s of memory; every process on it (control plane, operator, `parentrag index`, `parentrag serve`).\n\n", r.Cores, gib(r.Memory))
	b.WriteString("| measure |")
	for _, row := range r.Rows {
		fmt.Fprintf(&b, " %d MB |", row.MB)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(r.Rows)) + "\n")
	line := func(name string, f func(scaleRow) string) {
		fmt.Fprintf(&b, "| %s |", name)
		for _, row := range r.Rows {
			fmt.Fprintf(&b, " %s |", f(row))
		}
		b.WriteString("\n")
	}
	line("Markdown pages (text)", func(s scaleRow) string { return fmt.Sprintf("%d (%s)", s.Pages, mib(s.Text)) })
	line(".tar.gz served to the url source", func(s scaleRow) string { return mib(s.Archive) })
	line("documents / parents / children", func(s scaleRow) string {
		return fmt.Sprintf("%d / %d / %d", s.Documents, s.Parents, s.Children)
	})
	line("Corpus created → Job created (operator reads and hashes the source)", func(s scaleRow) string { return seconds(s.SourceRead) })
	line("operator heap held once the Job exists", func(s scaleRow) string { return mib(s.OperatorHeap) })
	line("`parentrag index` wall time", func(s scaleRow) string { return seconds(s.Index.Wall) })
	line("indexing throughput (text)", func(s scaleRow) string {
		return fmt.Sprintf("%.1f MB/s", float64(s.Text)/(1<<20)/s.Index.Wall.Seconds())
	})
	line("`parentrag index` CPU (user+sys)", func(s scaleRow) string { return seconds(s.Index.CPU) })
	line("`parentrag index` peak RSS", func(s scaleRow) string { return mib(s.Index.PeakRSS) })
	line("operator process CPU while the Job ran", func(s scaleRow) string { return seconds(s.OperatorCPU) })
	line("Corpus reconciles while the Job ran (time in them)", func(s scaleRow) string {
		return fmt.Sprintf("%d (%s)", s.Reconciles, seconds(s.ReconcileTime))
	})
	line("bundle: child index / parent index / parent text", func(s scaleRow) string {
		return fmt.Sprintf("%s / %s / %s", mib(s.ChildIndex), mib(s.ParentIndex), mib(s.ParentText))
	})
	line("query server: start → ready", func(s scaleRow) string { return seconds(s.Load) })
	line("query server RSS after loading (peak)", func(s scaleRow) string {
		return fmt.Sprintf("%s (%s)", mib(s.Loaded.RSS), mib(s.Loaded.PeakRSS))
	})
	line(fmt.Sprintf("query server RSS after %d queries (peak)", scaleQueries), func(s scaleRow) string {
		return fmt.Sprintf("%s (%s)", mib(s.Queried.RSS), mib(s.Queried.PeakRSS))
	})
	line("query server peak RSS ÷ (child index + parent index)", func(s scaleRow) string {
		return fmt.Sprintf("%.2f", float64(s.Queried.PeakRSS)/float64(s.ChildIndex+s.ParentIndex))
	})
	line("query latency p50 / p95 / p99", func(s scaleRow) string {
		return fmt.Sprintf("%s / %s / %s", ms(quantile(s.Latency, 0.5)), ms(quantile(s.Latency, 0.95)), ms(quantile(s.Latency, 0.99)))
	})
	line("empty answers", func(s scaleRow) string { return fmt.Sprintf("%d of %d", s.Empty, len(s.Latency)) })
	line("operator heap held after the Corpus was deleted", func(s scaleRow) string { return mib(s.OperatorHeapAfterDelete) })

	c := r.Cache
	fmt.Fprintf(&b, "\nEmbedding cache (status.lastBuild.embeddingCache of each build), %d MB corpus (%s of text), fake %d-dimension model, one cache claim for every build:\n\n", c.MB, mib(c.Text), embedDims)
	b.WriteString("| build | change | parent / child chunk | children | texts sent to the model | cache hits | misses | hit rate | index wall time |\n|---|---|---|---|---|---|---|---|---|\n")
	for i, bl := range c.Builds {
		fmt.Fprintf(&b, "| %d (%s) | %s | %d/%d / %d/%d | %d | %d | %d | %d | %s | %s |\n", i+1, short(bl.Revision), bl.Change,
			bl.Parent.ChunkSize, bl.Parent.ChunkOverlap, bl.Child.ChunkSize, bl.Child.ChunkOverlap,
			bl.Children, bl.Embedded, bl.Cache.Hits, bl.Cache.Misses, bl.Cache.HitRate, seconds(bl.Index.Wall))
	}
	return b.String()
}

// write logs the report and writes it to $PARENTRAG_REPORT_DIR/scale.md
// when that is set.
func (r *scaleReport) write(t *testing.T) {
	t.Helper()
	table := r.markdown()
	t.Logf("scale report:\n%s", table)
	dir := os.Getenv("PARENTRAG_REPORT_DIR")
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "scale.md")
	if err := os.WriteFile(path, []byte("# Scale: the Job path on one machine\n\n"+table), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("report written to %s", path)
}

// quantile is the q-quantile of the durations (nearest rank).
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// ms formats a duration in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// gib formats bytes in GiB.
func gib(n int64) string { return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30)) }
