package controllers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/controllers"
	"github.com/parentrag/parentrag/internal/cmbundle"
	"github.com/parentrag/parentrag/internal/devcluster"
	"github.com/parentrag/parentrag/internal/kubetest"
	"github.com/parentrag/parentrag/internal/milvustest"
)

// The tests of this file kill the operator in the middle of a build and
// start another one, so each runs its own control plane and operator: the
// suite's operator serves every other test and cannot be stopped.

// TestCrashMidBuildLeavesNothingBehind kills the operator while a revision's
// children are being inserted into Milvus, twice: once to let the next
// operator finish that revision, once while the spec moves on, so that the
// next operator builds another one. Either way the unfinished collection
// must be accounted for (in status.inventory before it exists), reused
// without duplicate rows or dropped, and no ConfigMap, collection or alias
// may outlive retention.
func TestCrashMidBuildLeavesNothingBehind(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own control plane and three operators over a deliberately slow Milvus (20-35s, 30-45s under -race); TestCrashBetweenShardsAndManifest covers crash recovery in -short runs")
	}
	env := startControlPlane(t)
	cl := env.Client
	srv := milvustest.Start(t)
	ns := createNamespaceIn(t, cl)
	p := createPolicyIn(t, cl, 800, 100)
	c := inlineCorpus(ns, p.Name, manyDocs(300)...)
	c.Spec.VectorStore = &v1alpha1.VectorStore{Milvus: &v1alpha1.MilvusVectorStore{Address: srv.Addr()}}
	c.Spec.RetainRevisions = 2
	if err := cl.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	dumpOnFailure(t, cl, c, srv)
	op := startOperator(t, env)
	first := waitActive(t, cl, srv, c, "", 60*time.Second)
	assertNothingLeaked(t, cl, srv, c)

	// Crash 1: revision 2's collection is half filled.
	srv.SetLatency(300 * time.Millisecond)
	setChildSize(t, cl, p, 80)
	second := waitInsertsUnderway(t, cl, srv, c, first)
	op.kill()
	partial := srv.RowCount(c.MilvusCollection(second))
	assertCrashedMidInsert(t, cl, srv, c, first, second)

	srv.SetLatency(0)
	op = startOperator(t, env)
	if got := waitActive(t, cl, srv, c, first, 60*time.Second); got != second {
		t.Fatalf("after the restart revision %s is active, want %s, whose build was interrupted", got, second)
	}
	if c.Status.ActiveRevision.Children <= partial {
		t.Fatalf("revision %s has %d children, and the crash left %d rows: the build was not interrupted mid-way; insert more documents", second, c.Status.ActiveRevision.Children, partial)
	}
	t.Logf("revision %s resumed: the crash left %d rows, the collection now holds %d (its children)", second, partial, srv.RowCount(c.MilvusCollection(second)))
	assertNothingLeaked(t, cl, srv, c)

	// Crash 2: revision 3's collection is half filled, then the spec moves
	// on while no operator runs; revision 3 is never finished.
	srv.SetLatency(300 * time.Millisecond)
	setChildSize(t, cl, p, 120)
	third := waitInsertsUnderway(t, cl, srv, c, second)
	op.kill()
	assertCrashedMidInsert(t, cl, srv, c, second, third)
	setChildSize(t, cl, p, 140)
	srv.SetLatency(0)
	op = startOperator(t, env)
	fourth := waitActive(t, cl, srv, c, second, 60*time.Second)
	if fourth == third {
		t.Fatalf("revision %s is active, but the spec moved on from it", third)
	}
	t.Logf("revision %s is active after the spec moved on from %s; history %v", fourth, third, historyOf(c))
	for _, gone := range []string{first, third} {
		if n := srv.RowCount(c.MilvusCollection(gone)); n != -1 {
			t.Errorf("the collection of revision %s still exists with %d rows; it is past retention or was never finished", gone, n)
		}
		if cms := corpusConfigMaps(t, cl, c, gone); len(cms) > 0 {
			t.Errorf("revision %s still has %d ConfigMaps", gone, len(cms))
		}
	}
	if names := historyOf(c); !slices.Equal(names, []string{fourth, second}) {
		t.Errorf("history %v, want [%s %s]", names, fourth, second)
	}
	assertNothingLeaked(t, cl, srv, c)
}

// TestLoweringRetainRevisionsReleasesOlderRevisions lowers retainRevisions
// on a Corpus that keeps two revisions: the older one is past retention at
// once, so its ConfigMaps and its collection must go without waiting for
// another revision. It needs no crash, so it runs on the suite's operator.
func TestLoweringRetainRevisionsReleasesOlderRevisions(t *testing.T) {
	srv := milvustest.Start(t)
	ns := createNamespaceIn(t, k8s)
	p := createPolicyIn(t, k8s, 800, 160)
	c := inlineCorpus(ns, p.Name, manyDocs(20)...)
	c.Spec.VectorStore = &v1alpha1.VectorStore{Milvus: &v1alpha1.MilvusVectorStore{Address: srv.Addr()}}
	c.Spec.RetainRevisions = 2
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	dumpOnFailure(t, k8s, c, srv)
	first := waitActive(t, k8s, srv, c, "", 60*time.Second)
	setChildSize(t, k8s, p, 120)
	second := waitActive(t, k8s, srv, c, first, 60*time.Second)
	if names := historyOf(c); !slices.Equal(names, []string{second, first}) {
		t.Fatalf("history %v, want [%s %s]", names, second, first)
	}
	assertNothingLeaked(t, k8s, srv, c)

	updateCorpus(t, k8s, c, func(c *v1alpha1.Corpus) { c.Spec.RetainRevisions = 1 })
	eventually(t, 15*time.Second, "the history to shrink to retainRevisions 1", func() (bool, error) {
		getIn(t, k8s, c)
		observed := c.Status.ObservedGeneration == c.Generation
		return observed && len(c.Status.History) == 1, fmt.Errorf("observedGeneration %d of %d, history %v", c.Status.ObservedGeneration, c.Generation, historyOf(c))
	})
	assertNothingLeaked(t, k8s, srv, c)
	if n := srv.RowCount(c.MilvusCollection(first)); n != -1 {
		t.Errorf("the collection of revision %s, no longer retained, still holds %d rows", first, n)
	}
	if cms := corpusConfigMaps(t, k8s, c, first); len(cms) > 0 {
		t.Errorf("revision %s, no longer retained, still has %d ConfigMaps", first, len(cms))
	}
}

// TestCrashBetweenShardsAndManifest kills the operator after it created a
// revision's shard ConfigMaps and right before it creates the manifest, and
// leaves shards of a revision the spec no longer calls for beside them. The
// next operator must complete the revision from the shards it finds (they
// must match what the new manifest records) and delete the others.
func TestCrashBetweenShardsAndManifest(t *testing.T) {
	t.Parallel()
	env := startControlPlane(t)
	cl := env.Client
	ns := createNamespaceIn(t, cl)
	p := createPolicyIn(t, cl, 800, 100)
	c := inlineCorpus(ns, p.Name, manyDocs(300)...)
	if err := cl.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	dumpOnFailure(t, cl, c, nil)
	op := startOperator(t, env)
	first := waitActive(t, cl, nil, c, "", 60*time.Second)
	assertNothingLeaked(t, cl, nil, c)

	op.api.cutBefore(func(req *http.Request, body []byte) bool {
		return isManifestCreate(req, body, c)
	})
	setChildSize(t, cl, p, 80)
	op.waitCut(60 * time.Second)
	op.kill()

	// The dead operator's status may lag; the shards say which revision
	// it was building.
	var leftovers []corev1.ConfigMap
	second := ""
	for _, cm := range corpusConfigMaps(t, cl, c, "") {
		rev := cm.Labels[cmbundle.LabelRevision]
		if rev == first {
			continue
		}
		if second != "" && rev != second {
			t.Fatalf("the crashed build left ConfigMaps of revisions %s and %s", second, rev)
		}
		second = rev
		leftovers = append(leftovers, cm)
		if cm.Labels[cmbundle.LabelRole] != cmbundle.RoleShard {
			t.Fatalf("ConfigMap %s of the crashed build is a %s, want only shards", cm.Name, cm.Labels[cmbundle.LabelRole])
		}
	}
	if len(leftovers) == 0 {
		t.Fatal("the crashed build left no shard")
	}
	getIn(t, cl, c)
	if c.Status.ActiveRevision.Name != first {
		t.Fatalf("after the crash revision %s is active, want %s", c.Status.ActiveRevision.Name, first)
	}
	uids := map[string]string{}
	for _, cm := range leftovers {
		uids[cm.Name] = string(cm.UID)
	}
	// An earlier build, of a revision the spec no longer calls for, died
	// after its first shard.
	stale := "00000000deadbeef"
	staleShard := leftovers[0].DeepCopy()
	staleShard.ObjectMeta = metav1.ObjectMeta{
		Namespace: c.Namespace, Name: c.RevisionObjectName(stale) + "-0",
		Labels:          map[string]string{controllers.LabelManagedBy: controllers.ManagedByValue, cmbundle.LabelCorpus: c.Name, cmbundle.LabelRevision: stale, cmbundle.LabelRole: cmbundle.RoleShard},
		OwnerReferences: leftovers[0].OwnerReferences,
	}
	if err := cl.Create(context.Background(), staleShard); err != nil {
		t.Fatal(err)
	}
	t.Logf("the crash left %d shards of revision %s and no manifest; added a shard of stale revision %s", len(leftovers), second, stale)

	startOperator(t, env)
	if got := waitActive(t, cl, nil, c, first, 60*time.Second); got != second {
		t.Fatalf("after the restart revision %s is active, want %s", got, second)
	}
	assertNothingLeaked(t, cl, nil, c)
	if cms := corpusConfigMaps(t, cl, c, stale); len(cms) > 0 {
		t.Errorf("the shard of stale revision %s is still there", stale)
	}
	reused := 0
	for _, cm := range corpusConfigMaps(t, cl, c, second) {
		if uids[cm.Name] == string(cm.UID) {
			reused++
		}
	}
	t.Logf("revision %s completed: %d of its %d shards were reused from the crashed build", second, reused, len(leftovers))
}

// operator is a parentrag operator run by one test, which can kill it at
// any moment.
type operator struct {
	t      *testing.T
	api    *apiLine
	cancel context.CancelFunc
	done   chan struct{}
}

// startOperator starts an operator against env that the test kills, or
// that is killed when the test ends.
func startOperator(t *testing.T, env *devcluster.Env) *operator {
	t.Helper()
	op := &operator{t: t, api: &apiLine{cut: make(chan struct{})}, done: make(chan struct{})}
	managerConfig, err := env.ManagerConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(managerConfig)
	cfg.Wrap(op.api.wrap)
	// Controller names are registered per process; the suite's operator
	// has registered them already.
	skip := true
	// The cache and client options of the real operator: Secrets and
	// ConfigMaps are read from the API server, as its RBAC allows.
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:     controllers.NewScheme(),
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: &skip},
		Cache:      controllers.CacheOptions(),
		Client:     controllers.ClientOptions(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := controllers.Setup(mgr, controllers.Options{Image: "parentrag:test"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	op.cancel = cancel
	go func() {
		defer close(op.done)
		_ = mgr.Start(ctx) // whatever it says while dying is of no interest
	}()
	t.Cleanup(op.kill)
	return op
}

// kill cuts the operator off the API server, so nothing it does from now on
// reaches the cluster, as if the process had died, then stops it and waits
// until it has. It is idempotent.
func (op *operator) kill() {
	op.t.Helper()
	op.api.kill()
	op.cancel()
	select {
	case <-op.done:
	case <-time.After(60 * time.Second):
		op.t.Fatal("the killed operator did not stop within 60s")
	}
}

// waitCut waits until the line to the API server was cut by the tripwire
// set with cutBefore.
func (op *operator) waitCut(timeout time.Duration) {
	op.t.Helper()
	select {
	case <-op.api.cut:
	case <-time.After(timeout):
		op.t.Fatalf("the operator did not reach the crash point within %s", timeout)
	}
}

// errKilled is what every request of a killed operator fails with.
var errKilled = errors.New("the operator was killed")

// apiLine is an operator's line to the API server. Once cut, every request
// fails before it leaves the process.
type apiLine struct {
	dead     atomic.Bool
	once     sync.Once
	cut      chan struct{}
	tripwire atomic.Pointer[func(*http.Request, []byte) bool]
}

// roundTripFunc is an http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// wrap puts the line between an operator and the API server.
func (a *apiLine) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if a.dead.Load() {
			return nil, errKilled
		}
		trip := a.tripwire.Load()
		if trip == nil || req.Body == nil || req.Method != http.MethodPost {
			return rt.RoundTrip(req)
		}
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		if (*trip)(req, body) {
			a.kill()
			return nil, errKilled
		}
		return rt.RoundTrip(req)
	})
}

// cutBefore cuts the line just before the first POST that trip accepts,
// which fails.
func (a *apiLine) cutBefore(trip func(req *http.Request, body []byte) bool) {
	a.tripwire.Store(&trip)
}

// kill cuts the line.
func (a *apiLine) kill() {
	a.once.Do(func() {
		a.dead.Store(true)
		close(a.cut)
	})
}

// isManifestCreate reports whether a request creates the manifest
// ConfigMap of one of c's revisions.
func isManifestCreate(req *http.Request, body []byte, c *v1alpha1.Corpus) bool {
	if !strings.HasSuffix(req.URL.Path, "/namespaces/"+c.Namespace+"/configmaps") {
		return false
	}
	// Built-in kinds travel as protobuf; the universal deserializer reads
	// that as well as JSON.
	obj, _, err := requestCodecs.UniversalDeserializer().Decode(body, nil, nil)
	cm, ok := obj.(*corev1.ConfigMap)
	if err != nil || !ok {
		return false
	}
	return cm.Labels[cmbundle.LabelCorpus] == c.Name && cm.Labels[cmbundle.LabelRole] == cmbundle.RoleManifest
}

// requestCodecs decode the bodies of an operator's requests.
var requestCodecs = serializer.NewCodecFactory(controllers.NewScheme())

// startControlPlane starts a control plane of the test's own, stopped when
// the test ends.
func startControlPlane(t *testing.T) *devcluster.Env {
	t.Helper()
	env, err := devcluster.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Stop() })
	return env
}

// waitInsertsUnderway waits until the Corpus builds a revision other than
// previous, that revision's collection is in status.inventory and holds
// some rows, and returns the revision.
func waitInsertsUnderway(t *testing.T, cl client.Client, srv *milvustest.Server, c *v1alpha1.Corpus, previous string) string {
	t.Helper()
	var rev string
	eventually(t, 60*time.Second, "a new revision's children to be under way into Milvus", func() (bool, error) {
		assertEveryCollectionInventoried(t, cl, srv, c)
		pr := c.Status.Progress
		if pr == nil || pr.Revision == previous {
			return false, fmt.Errorf("progress %+v", pr)
		}
		rev = pr.Revision
		coll := c.MilvusCollection(rev)
		rows := srv.RowCount(coll)
		return inventoried(c, coll) && rows > 0, fmt.Errorf("progress %+v, collection %s inventoried %t with %d rows", pr, coll, inventoried(c, coll), rows)
	})
	return rev
}

// assertEveryCollectionInventoried fails the test at once when a
// collection exists on the server that status.inventory does not list: an
// operator dying at that moment would leak it. The server is read first:
// the operator records a collection before it creates it and drops it
// before it forgets it, so the status read next lists every collection
// the server held, unless that one has been dropped since. It leaves the
// Corpus refreshed.
func assertEveryCollectionInventoried(t *testing.T, cl client.Client, srv *milvustest.Server, c *v1alpha1.Corpus) {
	t.Helper()
	held := srv.Collections()
	getIn(t, cl, c)
	for _, name := range held {
		if rows := srv.RowCount(name); !inventoried(c, name) && rows >= 0 {
			t.Fatalf("collection %s (%d rows) exists on the server but status.inventory lists only %v: an operator dying now would leak it", name, rows, inventoryNames(c))
		}
	}
}

// assertCrashedMidInsert checks what an operator killed while inserting
// building's children leaves: the collection, partly filled and in the
// inventory; no ConfigMap of the revision; active still serving, alias
// included.
func assertCrashedMidInsert(t *testing.T, cl client.Client, srv *milvustest.Server, c *v1alpha1.Corpus, active, building string) {
	t.Helper()
	getIn(t, cl, c)
	coll := c.MilvusCollection(building)
	if !inventoried(c, coll) {
		t.Errorf("collection %s exists but is not in status.inventory: a crash now would leak it", coll)
	}
	if n := srv.RowCount(coll); n <= 0 {
		t.Errorf("collection %s holds %d rows, want some", coll, n)
	}
	if a := c.Status.ActiveRevision; a == nil || a.Name != active {
		t.Errorf("active revision %v, want %s to keep serving", a, active)
	}
	if got := srv.Aliases()[c.MilvusAlias()]; got != c.MilvusCollection(active) {
		t.Errorf("alias %s points at %q, want %s", c.MilvusAlias(), got, c.MilvusCollection(active))
	}
	if cms := corpusConfigMaps(t, cl, c, building); len(cms) > 0 {
		t.Errorf("revision %s has %d ConfigMaps before its collection was finished", building, len(cms))
	}
	t.Logf("killed the operator with %d rows in %s (progress %+v)", srv.RowCount(coll), coll, c.Status.Progress)
}

// assertNothingLeaked checks, once the Corpus is Ready, that it owns
// exactly its retained revisions: each one's ConfigMaps are the names its
// manifest lists, all controlled by the Corpus and intact; with srv, each
// one's collection holds exactly its children, the inventory lists exactly
// the server's collections, and the one alias points at the active one.
func assertNothingLeaked(t *testing.T, cl client.Client, srv *milvustest.Server, c *v1alpha1.Corpus) {
	t.Helper()
	getIn(t, cl, c)
	st := &c.Status
	if st.Progress != nil {
		t.Errorf("status.progress %+v outlives the build", st.Progress)
	}
	retained := map[string]v1alpha1.RevisionStatus{}
	for _, h := range st.History {
		retained[h.Name] = h
	}
	if len(st.History) > c.GetRetainRevisions() {
		t.Errorf("history %v holds more than retainRevisions %d", historyOf(c), c.GetRetainRevisions())
	}
	if _, ok := retained[st.ActiveRevision.Name]; !ok {
		t.Errorf("active revision %s is not in the history %v", st.ActiveRevision.Name, historyOf(c))
	}
	assertConfigMapsRetained(t, cl, c, retained)
	if srv == nil {
		return
	}
	inv := st.Inventory
	if inv == nil {
		t.Fatal("a Milvus Corpus has no status.inventory")
	}
	listed := map[string]bool{}
	for _, col := range inv.Collections {
		listed[col.Name] = true
		h, ok := retained[col.Revision]
		switch {
		case !ok:
			t.Errorf("collection %s of revision %s is inventoried, but the revision is not retained", col.Name, col.Revision)
		case col.Name != c.MilvusCollection(col.Revision):
			t.Errorf("inventoried collection %s is not the one of revision %s", col.Name, col.Revision)
		case srv.RowCount(col.Name) != h.Children:
			t.Errorf("collection %s holds %d rows, revision %s has %d children", col.Name, srv.RowCount(col.Name), h.Name, h.Children)
		}
	}
	for _, name := range srv.Collections() {
		if !listed[name] {
			t.Errorf("collection %s exists on the server but not in status.inventory: leaked", name)
		}
	}
	for rev := range retained {
		if !listed[c.MilvusCollection(rev)] {
			t.Errorf("retained revision %s has no inventoried collection", rev)
		}
	}
	active := c.MilvusCollection(st.ActiveRevision.Name)
	aliases := srv.Aliases()
	if len(aliases) != 1 || aliases[c.MilvusAlias()] != active {
		t.Errorf("aliases on the server %v, want only %s -> %s", aliases, c.MilvusAlias(), active)
	}
	if inv.Alias == nil || inv.Alias.Name != c.MilvusAlias() || inv.Alias.Collection != active {
		t.Errorf("inventoried alias %+v, want %s -> %s", inv.Alias, c.MilvusAlias(), active)
	}
}

// assertConfigMapsRetained checks that every ConfigMap of the Corpus's
// namespace belongs to a retained revision, is controlled by the Corpus,
// and that each revision's ConfigMaps are exactly those its manifest lists
// and unpack to the bundle it records.
func assertConfigMapsRetained(t *testing.T, cl client.Client, c *v1alpha1.Corpus, retained map[string]v1alpha1.RevisionStatus) {
	t.Helper()
	ctx := context.Background()
	var list corev1.ConfigMapList
	if err := cl.List(ctx, &list, client.InNamespace(c.Namespace)); err != nil {
		t.Fatal(err)
	}
	byRevision := map[string][]string{}
	for _, cm := range list.Items {
		if cm.Name == "kube-root-ca.crt" {
			continue
		}
		if owner := metav1.GetControllerOf(&cm); owner == nil || owner.UID != c.UID {
			t.Errorf("ConfigMap %s is not controlled by Corpus %s (owner %v)", cm.Name, c.Name, owner)
		}
		if cm.Labels[cmbundle.LabelCorpus] != c.Name {
			t.Errorf("ConfigMap %s is not labelled for Corpus %s (labels %v)", cm.Name, c.Name, cm.Labels)
			continue
		}
		rev := cm.Labels[cmbundle.LabelRevision]
		byRevision[rev] = append(byRevision[rev], cm.Name)
	}
	for rev, names := range byRevision {
		h, ok := retained[rev]
		if !ok {
			t.Errorf("ConfigMaps %v belong to revision %s, which is not retained", names, rev)
			continue
		}
		var manifest corev1.ConfigMap
		if err := cl.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.RevisionObjectName(rev)}, &manifest); err != nil {
			t.Errorf("retained revision %s: %v", rev, err)
			continue
		}
		want, err := cmbundle.Names(&manifest)
		if err != nil {
			t.Errorf("revision %s: %v", rev, err)
			continue
		}
		slices.Sort(want)
		slices.Sort(names)
		if !slices.Equal(names, want) {
			t.Errorf("revision %s has ConfigMaps %v, its manifest lists %v", rev, names, want)
		}
		if len(want) != h.ConfigMaps {
			t.Errorf("revision %s: the manifest lists %d ConfigMaps, status says %d", rev, len(want), h.ConfigMaps)
		}
		// Unpack checks every file against the size and sha256 the manifest
		// records: shards left by a crashed build must match.
		if _, err := cmbundle.Unpack(ctx, cl, c.Namespace, manifest.Name, filepath.Join(t.TempDir(), "bundle")); err != nil {
			t.Errorf("revision %s does not unpack: %v", rev, err)
		}
	}
	for rev := range retained {
		if len(byRevision[rev]) == 0 {
			t.Errorf("retained revision %s has no ConfigMap", rev)
		}
	}
}

// waitActive waits until the Corpus is Ready, Current in kstatus terms, on
// a revision other than previous, and returns that revision. With srv, it
// checks all along that no collection escapes the inventory.
func waitActive(t *testing.T, cl client.Client, srv *milvustest.Server, c *v1alpha1.Corpus, previous string, timeout time.Duration) string {
	t.Helper()
	eventually(t, timeout, fmt.Sprintf("Corpus %s to be Ready on a revision other than %q", c.Name, previous), func() (bool, error) {
		if srv != nil {
			assertEveryCollectionInventoried(t, cl, srv, c)
		}
		getIn(t, cl, c)
		a := c.Status.ActiveRevision
		ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
		if a == nil || a.Name == previous || c.Status.ObservedGeneration < c.Generation || !meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionReady) {
			return false, fmt.Errorf("active %v, observedGeneration %d of %d, Ready %+v, progress %+v", a, c.Status.ObservedGeneration, c.Generation, ready, c.Status.Progress)
		}
		res := kstatusIn(t, cl, c)
		return res.Status == status.CurrentStatus, fmt.Errorf("kstatus %s: %s", res.Status, res.Message)
	})
	return c.Status.ActiveRevision.Name
}

// kstatusIn computes the kstatus of an object as cl reads it.
func kstatusIn(t *testing.T, cl client.Client, obj client.Object) *status.Result {
	t.Helper()
	res, err := kubetest.Kstatus(cl.Scheme(), obj)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// dumpOnFailure logs the Corpus's status, its ConfigMaps and, with srv,
// the Milvus server's collections when the test has failed.
func dumpOnFailure(t *testing.T, cl client.Client, c *v1alpha1.Corpus, srv *milvustest.Server) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		ctx := context.Background()
		var now v1alpha1.Corpus
		if err := cl.Get(ctx, client.ObjectKeyFromObject(c), &now); err != nil {
			t.Logf("dump: %v", err)
			return
		}
		js, _ := json.MarshalIndent(now.Status, "", "  ")
		t.Logf("dump: Corpus %s/%s generation %d status:\n%s", now.Namespace, now.Name, now.Generation, js)
		var list corev1.ConfigMapList
		if err := cl.List(ctx, &list, client.InNamespace(c.Namespace)); err == nil {
			for _, cm := range list.Items {
				t.Logf("dump: ConfigMap %s labels %v owners %d", cm.Name, cm.Labels, len(cm.OwnerReferences))
			}
		}
		if srv != nil {
			for _, coll := range srv.Collections() {
				t.Logf("dump: collection %s: %d rows", coll, srv.RowCount(coll))
			}
			t.Logf("dump: aliases %v", srv.Aliases())
		}
	})
}

// corpusConfigMaps lists the ConfigMaps labelled for one revision of the
// Corpus, or for any revision when revision is "".
func corpusConfigMaps(t *testing.T, cl client.Client, c *v1alpha1.Corpus, revision string) []corev1.ConfigMap {
	t.Helper()
	var list corev1.ConfigMapList
	sel := client.MatchingLabels{cmbundle.LabelCorpus: c.Name}
	if revision != "" {
		sel[cmbundle.LabelRevision] = revision
	}
	if err := cl.List(context.Background(), &list, client.InNamespace(c.Namespace), sel); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// inventoried reports whether the Corpus's inventory lists the collection.
func inventoried(c *v1alpha1.Corpus, collection string) bool {
	if c.Status.Inventory == nil {
		return false
	}
	for _, col := range c.Status.Inventory.Collections {
		if col.Name == collection {
			return true
		}
	}
	return false
}

// inventoryNames lists the collections of the Corpus's inventory.
func inventoryNames(c *v1alpha1.Corpus) []string {
	var out []string
	if inv := c.Status.Inventory; inv != nil {
		for _, col := range inv.Collections {
			out = append(out, col.Name)
		}
	}
	return out
}

// historyOf lists the revisions of the Corpus's history.
func historyOf(c *v1alpha1.Corpus) []string {
	var out []string
	for _, h := range c.Status.History {
		out = append(out, h.Name)
	}
	return out
}

// getIn refreshes obj from cl.
func getIn(t *testing.T, cl client.Client, obj client.Object) {
	t.Helper()
	if err := cl.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
}

// createNamespaceIn creates a namespace for one test through cl.
func createNamespaceIn(t *testing.T, cl client.Client) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: uniqueName("crash")}}
	if err := cl.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// createPolicyIn creates a ParentChild policy with the given sizes through
// cl.
func createPolicyIn(t *testing.T, cl client.Client, parent, child int) *v1alpha1.ChunkingPolicy {
	t.Helper()
	p := &v1alpha1.ChunkingPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: uniqueName("policy")},
		Spec: v1alpha1.ChunkingPolicySpec{
			Parent: &v1alpha1.ChunkSize{ChunkSize: parent},
			Child:  &v1alpha1.ChunkSize{ChunkSize: child, ChunkOverlap: child / 10},
		},
	}
	if err := cl.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

// setChildSize changes the policy's child size, which calls for a new
// revision of every Corpus that uses it.
func setChildSize(t *testing.T, cl client.Client, p *v1alpha1.ChunkingPolicy, child int) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := cl.Get(context.Background(), client.ObjectKeyFromObject(p), p); err != nil {
			return err
		}
		p.Spec.Child = &v1alpha1.ChunkSize{ChunkSize: child, ChunkOverlap: child / 10}
		return cl.Update(context.Background(), p)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// updateCorpus applies change to the Corpus's spec.
func updateCorpus(t *testing.T, cl client.Client, c *v1alpha1.Corpus, change func(*v1alpha1.Corpus)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := cl.Get(context.Background(), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		change(c)
		return cl.Update(context.Background(), c)
	})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}

// manyDocs returns n short documents of eight paragraphs each, with
// distinct words, so that a build has thousands of children.
func manyDocs(n int) []v1alpha1.InlineDocument {
	subjects := []string{"glaciers", "orchards", "lighthouses", "beekeeping", "tramways", "lichens", "kilns", "estuaries", "looms", "comets", "ferries", "moss"}
	verbs := []string{"shapes", "slows", "feeds", "cools", "guides", "shelters", "carries", "warms"}
	docs := make([]v1alpha1.InlineDocument, n)
	for i := range docs {
		var b strings.Builder
		subject := subjects[i%len(subjects)]
		fmt.Fprintf(&b, "# Note %d on %s\n\n", i, subject)
		for j := range 8 {
			other := subjects[(i+j+1)%len(subjects)]
			fmt.Fprintf(&b, "Note %d part %d: how %s %s the %s of valley %d, season %d.\n\n", i, j, subject, verbs[(i+j)%len(verbs)], other, i*7+j, j)
		}
		docs[i] = v1alpha1.InlineDocument{ID: fmt.Sprintf("note-%03d", i), Title: fmt.Sprintf("Note %d", i), Text: b.String()}
	}
	return docs
}
