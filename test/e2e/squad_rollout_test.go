package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/cmbundle"
	"github.com/parentrag/parentrag/internal/devcluster"
	"github.com/parentrag/parentrag/internal/eval/evaltest"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/sharedtest"
)

// squadLabel marks the ConfigMaps that hold the SQuAD articles.
const squadLabel = "parentrag.io/e2e-corpus"

// maxSourceBytes bounds the data of one source ConfigMap, under the API
// server's 1 MiB object limit.
const maxSourceBytes = 900 << 10

// TestSquadRolloutReport serves the SQuAD v1.1 dev articles, changes the
// policy's child chunk size while questions keep coming through the
// Service's stand-in, and reports what the rollout cost: how long until the
// new revision served, the ConfigMap storage and query-server memory of
// both revisions, and the queries answered. It asserts only that no query
// failed and that the new revision served within the wait limit; the
// figures go to the log and, when PARENTRAG_REPORT_DIR is set, to
// squad-rollout.md there.
func TestSquadRolloutReport(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a whole control plane and indexes the SQuAD articles twice; skipped with -short")
	}
	dir := sharedtest.Dir(t, "eval", "squad-v1.1-dev")
	articles, queries, err := evaltest.LoadSet(dir, "articles.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := startCluster(t, ctx)
	bin, err := env.BuildBinary(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ns := "parentrag-squad"
	if err := createNamespace(ctx, env, ns); err != nil {
		t.Fatal(err)
	}
	rep := &rolloutReport{Articles: len(articles.Docs), Questions: len(queries)}
	created := time.Now()
	corpus, retriever := createSquad(t, ctx, env, ns, articles.Docs, rep)
	// The first revision counted is the one built from every article: the
	// operator may serve one built from a partial view of the sources
	// first, when its cache has not yet seen every ConfigMap.
	firstServed := waitRevisionServed(t, ctx, env, corpus, retriever, created, nil, "a revision of every article", func(a *v1alpha1.RevisionStatus) bool {
		return a.Documents == len(articles.Docs)
	})
	first := firstServed.Revision
	rep.FirstBuild = firstServed.Serving

	router, err := env.NewServiceRouter(ctx, bin, ns, retriever.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer router.Stop()
	parents := devcluster.NewRevisionParents(env.Client, corpus, t.TempDir())
	if _, err := parents.Of(ctx, first); err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(queries))
	for i, q := range queries {
		texts[i] = q.Text
	}
	l := startLoad(ctx, env, corpus.Namespace, router, parents, texts, 2)
	defer l.stop()
	l.waitAnswered(t, first, 10, time.Minute, router)

	s := startSampler(ctx, env, corpus.Namespace, corpus.Name, router)
	policy := changeChild(t, ctx, env, "squad", v1alpha1.ChunkSize{ChunkSize: 200, ChunkOverlap: 20})
	changed := time.Now()
	final := waitPolicyServed(t, ctx, env, corpus, retriever, policy.Spec.Revision(), changed, router)
	l.waitAnswered(t, final.Revision, 50, time.Minute, router)
	l.stop()
	s.stop()

	rep.First, rep.Final, rep.Replicas = first, final, retriever.GetReplicas()
	rep.Storage, rep.Memory = s.storage, s.memory
	rep.Answered, rep.Queries, rep.Errors, rep.Empty, rep.Wrong = l.answered, l.queries, l.errors, l.empty, l.wrong
	rep.Holds, rep.Held = router.Holds()
	rep.write(t)
	l.check(t, router)
	if final.Revision == first {
		t.Fatalf("the policy change did not make a new revision: still serving %s", first)
	}
	if l.answered[first] == 0 || l.answered[final.Revision] == 0 {
		t.Errorf("want answers from both revisions, got %v", l.answered)
	}
}

// createSquad puts the articles in labelled ConfigMaps and creates the
// ChunkingPolicy "squad", the Corpus "squad" selecting those ConfigMaps and
// a Retriever of 2 replicas over it.
func createSquad(t *testing.T, ctx context.Context, env *devcluster.Env, ns string, docs []hierarchy.Document, rep *rolloutReport) (*v1alpha1.Corpus, *v1alpha1.Retriever) {
	t.Helper()
	for _, cm := range articleConfigMaps(ns, docs) {
		if err := env.Client.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		rep.SourceConfigMaps++
		for k, v := range cm.Data {
			rep.SourceBytes += int64(len(k) + len(v))
		}
	}
	policy := &v1alpha1.ChunkingPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "squad"},
		Spec: v1alpha1.ChunkingPolicySpec{
			Strategy:   v1alpha1.StrategyParentChild,
			LengthUnit: v1alpha1.LengthCharacters,
			Parent:     &v1alpha1.ChunkSize{ChunkSize: 1500},
			Child:      &v1alpha1.ChunkSize{ChunkSize: 300, ChunkOverlap: 30},
		},
	}
	replicas := int32(2)
	corpus := &v1alpha1.Corpus{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "squad"},
		Spec: v1alpha1.CorpusSpec{
			ChunkingPolicyRef: v1alpha1.PolicyReference{Name: policy.Name},
			Sources: []v1alpha1.Source{{
				Name:     "articles",
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{squadLabel: "squad"}},
			}},
			Embedding:       &v1alpha1.Embedding{Builtin: &v1alpha1.BuiltinEmbedding{}},
			RetainRevisions: 2,
		},
	}
	retriever := &v1alpha1.Retriever{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "squad"},
		Spec:       v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: corpus.Name}, Replicas: &replicas},
	}
	for _, obj := range []client.Object{policy, corpus, retriever} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	return corpus, retriever
}

// articleConfigMaps packs the articles, one Markdown document a key titled
// with the article's title, into as few ConfigMaps as keep each one's data
// under maxSourceBytes.
func articleConfigMaps(ns string, docs []hierarchy.Document) []*corev1.ConfigMap {
	var out []*corev1.ConfigMap
	var cur *corev1.ConfigMap
	var size int
	for _, d := range docs {
		key := fmt.Sprintf("article-%s.md", d.ID)
		text := "# " + d.Title + "\n\n" + d.Text
		if cur == nil || size+len(key)+len(text) > maxSourceBytes {
			cur = &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("squad-articles-%d", len(out)), Labels: map[string]string{squadLabel: "squad"}},
				Data:       map[string]string{},
			}
			out, size = append(out, cur), 0
		}
		cur.Data[key] = text
		size += len(key) + len(text)
	}
	return out
}

// revisionStorage is what the ConfigMaps of one revision hold.
type revisionStorage struct {
	ConfigMaps int
	Bytes      int64
}

// sampler records, while a rollout runs, the largest ConfigMap storage of
// each revision of a Corpus and the largest resident memory of each
// revision's query server.
type sampler struct {
	stopCh chan struct{}
	done   chan struct{}
	// sample takes one sample.
	sample func()
	// storage and memory are keyed by revision; read them after stop.
	storage map[string]revisionStorage
	memory  map[string]devcluster.Memory
}

// startSampler samples the Corpus ns/name every 200 ms until stop.
func startSampler(ctx context.Context, env *devcluster.Env, ns, name string, router *devcluster.Router) *sampler {
	s := &sampler{stopCh: make(chan struct{}), done: make(chan struct{}), storage: map[string]revisionStorage{}, memory: map[string]devcluster.Memory{}}
	s.sample = func() {
		s.sampleStorage(ctx, env, ns, name)
		s.sampleMemory(router)
	}
	go func() {
		defer close(s.done)
		for {
			s.sample()
			select {
			case <-s.stopCh:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return s
}

// sampleStorage sums the data of the Corpus's revision ConfigMaps by
// revision: keys and values of data and binaryData.
func (s *sampler) sampleStorage(ctx context.Context, env *devcluster.Env, ns, name string) {
	var list corev1.ConfigMapList
	if err := env.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{cmbundle.LabelCorpus: name}); err != nil {
		return
	}
	now := map[string]revisionStorage{}
	for _, cm := range list.Items {
		rev := cm.Labels[cmbundle.LabelRevision]
		if rev == "" {
			continue
		}
		st := now[rev]
		st.ConfigMaps++
		for k, v := range cm.Data {
			st.Bytes += int64(len(k) + len(v))
		}
		for k, v := range cm.BinaryData {
			st.Bytes += int64(len(k) + len(v))
		}
		now[rev] = st
	}
	for rev, st := range now {
		if st.Bytes > s.storage[rev].Bytes {
			s.storage[rev] = st
		}
	}
}

// sampleMemory records the resident memory of every revision's query
// server that is up.
func (s *sampler) sampleMemory(router *devcluster.Router) {
	for _, rev := range router.Revisions() {
		srv := router.Server(rev)
		if srv == nil {
			continue
		}
		m, err := srv.Memory()
		if err != nil {
			continue
		}
		old := s.memory[rev]
		s.memory[rev] = devcluster.Memory{RSS: max(old.RSS, m.RSS), PeakRSS: max(old.PeakRSS, m.PeakRSS)}
	}
}

// stop stops sampling and takes a last sample, so that a revision
// completed while the previous sample was in flight is counted whole.
func (s *sampler) stop() {
	close(s.stopCh)
	<-s.done
	s.sample()
}

// rolloutReport is what TestSquadRolloutReport measured.
type rolloutReport struct {
	Articles, Questions int
	SourceConfigMaps    int
	SourceBytes         int64
	Replicas            int32
	FirstBuild          time.Duration
	First               string
	Final               served
	Storage             map[string]revisionStorage
	Memory              map[string]devcluster.Memory
	Answered            map[string]int
	Queries             int
	Errors, Empty       int
	Wrong               int
	Holds               int
	Held                time.Duration
}

// others counts the answers of revisions other than the first and the
// final one.
func (r *rolloutReport) others() int {
	n := 0
	for rev, count := range r.Answered {
		if rev != r.First && rev != r.Final.Revision {
			n += count
		}
	}
	return n
}

// markdown renders the report as a table.
func (r *rolloutReport) markdown() string {
	oldS, newS := r.Storage[r.First], r.Storage[r.Final.Revision]
	oldM, newM := r.Memory[r.First], r.Memory[r.Final.Revision]
	rows := [][2]string{
		{"corpus", fmt.Sprintf("%d SQuAD v1.1 dev articles in %d ConfigMaps (%s)", r.Articles, r.SourceConfigMaps, mib(r.SourceBytes))},
		{"Retriever replicas", fmt.Sprint(r.Replicas)},
		{"first build: creating the objects → served on every replica", seconds(r.FirstBuild)},
		{"policy change", "child chunk 300/30 → 200/20 characters"},
		{"update → Corpus Ready on the new revision", seconds(r.Final.Active)},
		{"update → Retriever serving it on every replica", seconds(r.Final.Serving)},
		{"revision ConfigMaps, old (" + short(r.First) + ")", fmt.Sprintf("%d, %s", oldS.ConfigMaps, mib(oldS.Bytes))},
		{"revision ConfigMaps, new (" + short(r.Final.Revision) + ")", fmt.Sprintf("%d, %s", newS.ConfigMaps, mib(newS.Bytes))},
		{"storage held during the rollout", fmt.Sprintf("%s (%s over the old alone)", mib(oldS.Bytes+newS.Bytes), percent(newS.Bytes, oldS.Bytes))},
		{"query server RSS, old revision (peak)", fmt.Sprintf("%s (%s)", mib(oldM.RSS), mib(oldM.PeakRSS))},
		{"query server RSS, new revision (peak)", fmt.Sprintf("%s (%s)", mib(newM.RSS), mib(newM.PeakRSS))},
		{"memory while both serve", fmt.Sprintf("%s (%s over the old alone)", mib(oldM.RSS+newM.RSS), percent(newM.RSS, oldM.RSS))},
		{"queries, from before the change to 50 answers from the new revision", fmt.Sprintf("%d: %d answered by the old revision, %d by the new, %d by others", r.Queries, r.Answered[r.First], r.Answered[r.Final.Revision], r.others())},
		{"query errors / empty / wrong revision", fmt.Sprintf("%d / %d / %d", r.Errors, r.Empty, r.Wrong)},
		{"queries held for a warming query server", fmt.Sprintf("%d (%s in all)", r.Holds, seconds(r.Held))},
	}
	var b strings.Builder
	b.WriteString("| measure | value |\n|---|---|\n")
	for _, row := range rows {
		fmt.Fprintf(&b, "| %s | %s |\n", row[0], row[1])
	}
	return b.String()
}

// write logs the report and writes it to $PARENTRAG_REPORT_DIR/squad-rollout.md
// when that is set.
func (r *rolloutReport) write(t *testing.T) {
	t.Helper()
	table := r.markdown()
	t.Logf("SQuAD rollout report:\n%s", table)
	dir := os.Getenv("PARENTRAG_REPORT_DIR")
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "squad-rollout.md")
	if err := os.WriteFile(path, []byte("# SQuAD rollout\n\n"+table), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("report written to %s", path)
}

// mib formats bytes in MiB.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// seconds formats a duration in seconds.
func seconds(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// percent is extra as a percentage of base.
func percent(extra, base int64) string {
	if base == 0 {
		return "n/a"
	}
	return fmt.Sprintf("+%.0f%%", 100*float64(extra)/float64(base))
}

// short is a revision's first 8 characters.
func short(rev string) string { return v1alpha1.ShortRevision(rev) }
