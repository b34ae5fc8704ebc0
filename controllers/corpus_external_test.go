package controllers

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
)

// The tests of this file run the Corpus reconciler's steps one at a time
// against the suite's API server, with its Milvus collections and
// PostgreSQL tables held in memory behind the externalIndex seam
// (memoryIndexes). Each runs once for each kind of external index.

// stepReconciler is a Corpus reconciler on the suite's API server whose
// external indexes are the databases in memory of dbs, and the recorder of
// its events.
func stepReconciler(t *testing.T, dbs map[*indexKind]*memoryIndexes) (*CorpusReconciler, *events.FakeRecorder) {
	t.Helper()
	if suiteClient == nil {
		t.Fatal("no API server: the suite's TestMain did not hand its client over")
	}
	rec := events.NewFakeRecorder(100)
	return &CorpusReconciler{Client: suiteClient, Recorder: rec, indexClients: func(k *indexKind) externalIndex { return dbs[k] }}, rec
}

// stepDatabases is an empty database in memory for each kind.
func stepDatabases() map[*indexKind]*memoryIndexes {
	dbs := map[*indexKind]*memoryIndexes{}
	for _, k := range indexKinds {
		dbs[k] = newMemoryIndexes()
	}
	return dbs
}

// stepNamespace creates a namespace for one test.
func stepNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "step-"}}
	if err := suiteClient.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// stepCorpus is a suspended Corpus in namespace ns whose children go to
// kind k (nil: the revision holds them); it exists in memory only, unless
// a test creates it.
func stepCorpus(ns string, k *indexKind) *v1alpha1.Corpus {
	c := &v1alpha1.Corpus{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "docs"},
		Spec: v1alpha1.CorpusSpec{
			ChunkingPolicyRef: v1alpha1.PolicyReference{Name: "policy"}, Suspend: true,
			Sources: []v1alpha1.Source{{Name: "inline", Inline: []v1alpha1.InlineDocument{{ID: "a", Text: "text"}}}},
		},
	}
	switch k {
	case &milvusIndexes:
		c.Spec.VectorStore = &v1alpha1.VectorStore{Milvus: &v1alpha1.MilvusVectorStore{Address: "milvus.test:19530"}}
	case &postgresIndexes:
		c.Spec.VectorStore = &v1alpha1.VectorStore{Postgres: &v1alpha1.PostgresVectorStore{SecretRef: v1alpha1.LocalObjectReference{Name: "pg"}, Schema: "rag"}}
	}
	return c
}

// stock creates the index of kind k of each revision in db and lists it
// in the Corpus's inventory.
func stock(c *v1alpha1.Corpus, k *indexKind, db *memoryIndexes, revisions ...string) {
	inv := inventoryOf(c)
	for _, rev := range revisions {
		name := k.indexName(c, rev)
		db.indexes[name] = true
		if k == &milvusIndexes {
			inv.Collections = append(inv.Collections, v1alpha1.InventoryCollection{Name: name, Revision: rev, Address: "milvus.test:19530"})
		} else {
			inv.Tables = append(inv.Tables, v1alpha1.InventoryTable{Name: name, Revision: rev, Address: "pg.test:5432", Database: "app", Schema: "rag"})
		}
	}
}

// pointAt has the Corpus's stable name of kind k read the revision's
// index, in db and in the inventory.
func pointAt(c *v1alpha1.Corpus, k *indexKind, db *memoryIndexes, revision string) {
	index := k.indexName(c, revision)
	db.names[k.pointerName(c)] = index
	if k == &milvusIndexes {
		inventoryOf(c).Alias = &v1alpha1.InventoryAlias{Name: c.MilvusAlias(), Collection: index}
	} else {
		inventoryOf(c).View = &v1alpha1.InventoryView{Name: c.PostgresView(), Table: index}
	}
}

// listed returns the revisions whose indexes of kind k the Corpus's
// inventory lists, in order, and the index its stable name reads.
func listed(c *v1alpha1.Corpus, k *indexKind) (revisions []string, read string) {
	inv := c.Status.Inventory
	switch {
	case inv == nil:
	case k == &milvusIndexes:
		for _, col := range inv.Collections {
			revisions = append(revisions, col.Revision)
		}
		if inv.Alias != nil {
			read = inv.Alias.Collection
		}
	default:
		for _, t := range inv.Tables {
			revisions = append(revisions, t.Revision)
		}
		if inv.View != nil {
			read = inv.View.Table
		}
	}
	return revisions, read
}

// indexesIn lists the revisions whose indexes db holds, sorted.
func indexesIn(c *v1alpha1.Corpus, k *indexKind, db *memoryIndexes) []string {
	var revisions []string
	for name := range db.indexes {
		revisions = append(revisions, strings.TrimPrefix(name, k.indexName(c, "")))
	}
	slices.Sort(revisions)
	return revisions
}

// droppedEvent is the event of a dropped index, as the Corpus's events
// say it today.
func droppedEvent(c *v1alpha1.Corpus, k *indexKind, revision string) string {
	if k == &milvusIndexes {
		return "Normal CollectionDropped dropped Milvus collection " + c.MilvusCollection(revision)
	}
	return "Normal TableDropped dropped Postgres table rag." + c.PostgresTable(revision)
}

// recorded drains the events recorded so far.
func recorded(rec *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// stepRetriever creates a suspended Retriever of the Corpus on the track,
// which says it serves the revision.
func stepRetriever(t *testing.T, ns, name, corpus string, track v1alpha1.Track, serving string) *v1alpha1.Retriever {
	t.Helper()
	rt := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: corpus}, Track: track, Suspend: true}}
	if err := suiteClient.Create(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
	serveRevision(t, rt, serving)
	return rt
}

// serveRevision has the Retriever say in its status that it serves the
// revision.
func serveRevision(t *testing.T, rt *v1alpha1.Retriever, revision string) {
	t.Helper()
	base := rt.DeepCopy()
	rt.Status.ServingRevision = revision
	if err := suiteClient.Status().Patch(context.Background(), rt, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
}

// forEachKind runs the test once for each kind of external index.
func forEachKind(t *testing.T, test func(t *testing.T, k *indexKind)) {
	for _, k := range indexKinds {
		t.Run(k.store, func(t *testing.T) { test(t, k) })
	}
}

// TestRecordIndexPublishesTheInventoryFirst: the revision's index is
// listed in the Corpus's status on the API server before any build could
// create it, once however often the step runs, with where it is created.
func TestRecordIndexPublishesTheInventoryFirst(t *testing.T) {
	forEachKind(t, func(t *testing.T, k *indexKind) {
		ctx := context.Background()
		c := stepCorpus(stepNamespace(t), k)
		if err := suiteClient.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
		dbs := stepDatabases()
		r, _ := stepReconciler(t, dbs)
		s := &corpusState{corpus: c, revision: "r1", progress: r.newProgressPatcher(ctx, c, c.DeepCopy()),
			vectorStore: bundle.VectorStoreRef{Address: "db.test:1", Database: "app", Schema: "rag"}}
		for range 2 {
			if err := r.recordIndex(s, k); err != nil {
				t.Fatal(err)
			}
		}
		var published v1alpha1.Corpus
		if err := suiteClient.Get(ctx, client.ObjectKeyFromObject(c), &published); err != nil {
			t.Fatal(err)
		}
		if revs, _ := listed(&published, k); !slices.Equal(revs, []string{"r1"}) {
			t.Fatalf("the API server's inventory lists revisions %v, want [r1]: %+v", revs, published.Status.Inventory)
		}
		inv := published.Status.Inventory
		want := childIndex{name: k.indexName(c, "r1"), revision: "r1", address: "db.test:1", database: "app"}
		got := childIndex{}
		if k == &milvusIndexes {
			col := inv.Collections[0]
			got = childIndex{name: col.Name, revision: col.Revision, address: col.Address, database: col.Database}
		} else {
			tb := inv.Tables[0]
			want.schema = "rag"
			got = childIndex{name: tb.Name, revision: tb.Revision, address: tb.Address, database: tb.Database, schema: tb.Schema}
		}
		if got != want {
			t.Errorf("inventoried %+v, want %+v", got, want)
		}
		if calls := dbs[k].calls; len(calls) != 0 {
			t.Errorf("recording asked the database %v", calls)
		}
	})
}

// TestStableNameMovesOnceEveryActiveRetrieverServes: the alias or view
// stays on the old revision's index while a Retriever on the Active track
// still serves that revision, whatever previews and other Corpora's
// Retrievers serve; it moves once, with an event, when the last one
// serves the active revision.
func TestStableNameMovesOnceEveryActiveRetrieverServes(t *testing.T) {
	forEachKind(t, func(t *testing.T, k *indexKind) {
		ctx := context.Background()
		ns := stepNamespace(t)
		c := stepCorpus(ns, k)
		c.Status.ActiveRevision = &v1alpha1.RevisionStatus{Name: "r2"}
		dbs := stepDatabases()
		db := dbs[k]
		stock(c, k, db, "r1", "r2")
		pointAt(c, k, db, "r1")
		live := stepRetriever(t, ns, "live", c.Name, v1alpha1.TrackActive, "r1")
		stepRetriever(t, ns, "preview", c.Name, v1alpha1.TrackCandidate, "r3")
		stepRetriever(t, ns, "elsewhere", "other", v1alpha1.TrackActive, "r1")
		r, rec := stepReconciler(t, dbs)
		s := &corpusState{corpus: c}

		if res, err := r.pointStableName(ctx, s); err != nil || !res.IsZero() {
			t.Fatalf("result %+v, error %v", res, err)
		}
		if _, read := listed(c, k); len(db.calls) != 0 || read != k.indexName(c, "r1") {
			t.Fatalf("moved while Retriever live serves r1: calls %v, the inventory's stable name reads %s", db.calls, read)
		}

		serveRevision(t, live, "r2")
		for range 2 {
			if res, err := r.pointStableName(ctx, s); err != nil || !res.IsZero() {
				t.Fatalf("result %+v, error %v", res, err)
			}
		}
		name, active := k.pointerName(c), k.indexName(c, "r2")
		if want := []string{"point " + name + " " + active}; !slices.Equal(db.calls, want) {
			t.Errorf("calls %v, want %v", db.calls, want)
		}
		if _, read := listed(c, k); read != active || db.names[name] != active {
			t.Errorf("the inventory's stable name reads %s and the database's %s, want %s", read, db.names[name], active)
		}
		want := "Normal AliasMoved alias " + c.MilvusAlias() + " now points at " + active
		if k == &postgresIndexes {
			want = "Normal ViewMoved view rag." + c.PostgresView() + " now reads " + active
		}
		if got := recorded(rec); !slices.Equal(got, []string{want}) {
			t.Errorf("events %q, want %q", got, want)
		}
	})
}

// TestCollectGarbageDropsExactlyTheRevisionsNoLongerKept: of four
// inventoried revisions, the one neither current, in the history nor read
// by the stable name is dropped, with an event; the others stay, in the
// database and in the inventory, in order.
func TestCollectGarbageDropsExactlyTheRevisionsNoLongerKept(t *testing.T) {
	forEachKind(t, func(t *testing.T, k *indexKind) {
		ctx := context.Background()
		c := stepCorpus(stepNamespace(t), k)
		c.Status.History = []v1alpha1.RevisionStatus{{Name: "r3"}, {Name: "r2"}}
		dbs := stepDatabases()
		db := dbs[k]
		stock(c, k, db, "r0", "r1", "r2", "r3")
		pointAt(c, k, db, "r1")
		r, rec := stepReconciler(t, dbs)
		s := &corpusState{corpus: c, revision: "r3", progress: r.newProgressPatcher(ctx, c, c.DeepCopy())}

		if res, err := r.collectGarbage(ctx, s); err != nil || !res.IsZero() {
			t.Fatalf("result %+v, error %v", res, err)
		}
		if want := []string{"drop " + k.indexName(c, "r0")}; !slices.Equal(db.calls, want) {
			t.Errorf("calls %v, want %v", db.calls, want)
		}
		kept := []string{"r1", "r2", "r3"}
		if revs, read := listed(c, k); !slices.Equal(revs, kept) || read != k.indexName(c, "r1") {
			t.Errorf("the inventory lists %v with the stable name on %s, want %v with it on r1's", revs, read, kept)
		}
		if got := indexesIn(c, k, db); !slices.Equal(got, kept) {
			t.Errorf("the database holds %v, want %v", got, kept)
		}
		if got, want := recorded(rec), []string{droppedEvent(c, k, "r0")}; !slices.Equal(got, want) {
			t.Errorf("events %q, want %q", got, want)
		}
	})
}

// TestAFailedDropIsRetriedAndLosesNothing: a drop the database refuses
// fails the reconcile with its error (retried, reason Progressing, the
// active revision still serving) and leaves its index in the inventory;
// the other drops go on; the next reconcile drops it.
func TestAFailedDropIsRetriedAndLosesNothing(t *testing.T) {
	forEachKind(t, func(t *testing.T, k *indexKind) {
		ctx := context.Background()
		c := stepCorpus(stepNamespace(t), k)
		c.Status.ActiveRevision = &v1alpha1.RevisionStatus{Name: "r2"}
		c.Status.History = []v1alpha1.RevisionStatus{{Name: "r2"}}
		dbs := stepDatabases()
		db := dbs[k]
		stock(c, k, db, "r0", "r1", "r2")
		pointAt(c, k, db, "r2")
		db.failing[k.indexName(c, "r0")] = errors.New("connection refused")
		r, rec := stepReconciler(t, dbs)
		s := &corpusState{corpus: c, revision: "r2", progress: r.newProgressPatcher(ctx, c, c.DeepCopy())}

		res, err := r.collectGarbage(ctx, s)
		if err == nil || isStalled(err) {
			t.Fatalf("error %v, want one that is retried", err)
		}
		r.summarize(s, res, err)
		ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
		if want := "connection refused; revision r2 keeps serving"; ready == nil || ready.Status != metav1.ConditionFalse ||
			ready.Reason != v1alpha1.ReasonProgressing || ready.Message != want {
			t.Errorf("Ready %+v, want False, %s, %q", ready, v1alpha1.ReasonProgressing, want)
		}
		if revs, _ := listed(c, k); !slices.Equal(revs, []string{"r0", "r2"}) {
			t.Errorf("the inventory lists %v, want r0 (its drop failed) and r2", revs)
		}
		if got := recorded(rec); !slices.Equal(got, []string{droppedEvent(c, k, "r1")}) {
			t.Errorf("events %q, want only r1's drop", got)
		}

		delete(db.failing, k.indexName(c, "r0"))
		if _, err := r.collectGarbage(ctx, s); err != nil {
			t.Fatal(err)
		}
		if revs, _ := listed(c, k); !slices.Equal(revs, []string{"r2"}) || !slices.Equal(indexesIn(c, k, db), []string{"r2"}) {
			t.Errorf("after the retry the inventory lists %v and the database holds %v, want r2 alone", revs, indexesIn(c, k, db))
		}
	})
}

// TestCollectGarbageEmptiesAStoreTheCorpusLeft: once the Corpus keeps its
// children in the revision, its stable name goes, then every index of
// the store it left; a failure is a Warning event that holds nothing
// back, and what failed stays listed until a later reconcile drops it.
func TestCollectGarbageEmptiesAStoreTheCorpusLeft(t *testing.T) {
	forEachKind(t, func(t *testing.T, k *indexKind) {
		ctx := context.Background()
		c := stepCorpus(stepNamespace(t), k)
		dbs := stepDatabases()
		db := dbs[k]
		stock(c, k, db, "r1", "r2")
		pointAt(c, k, db, "r2")
		c.Spec.VectorStore = nil
		db.failing[k.indexName(c, "r1")] = errors.New("connection refused")
		r, rec := stepReconciler(t, dbs)
		s := &corpusState{corpus: c, revision: "r3", progress: r.newProgressPatcher(ctx, c, c.DeepCopy())}

		if _, err := r.collectGarbage(ctx, s); err != nil {
			t.Fatalf("a store the Corpus left held it back: %v", err)
		}
		want := []string{"unpoint " + k.pointerName(c), "drop " + k.indexName(c, "r1"), "drop " + k.indexName(c, "r2")}
		if !slices.Equal(db.calls, want) {
			t.Errorf("calls %v, want %v", db.calls, want)
		}
		if revs, read := listed(c, k); !slices.Equal(revs, []string{"r1"}) || read != "" || len(db.names) != 0 {
			t.Errorf("the inventory lists %v with the stable name on %q, the database %v; want r1 alone, no stable name", revs, read, db.names)
		}
		warning := "Warning CollectionDropFailed the Corpus no longer uses Milvus, but its collections could not be dropped: connection refused"
		if k == &postgresIndexes {
			warning = "Warning TableDropFailed the Corpus no longer uses Postgres, but its tables could not be dropped: connection refused"
		}
		if got, want := recorded(rec), []string{droppedEvent(c, k, "r2"), warning}; !slices.Equal(got, want) {
			t.Errorf("events %q, want %q", got, want)
		}

		delete(db.failing, k.indexName(c, "r1"))
		if _, err := r.collectGarbage(ctx, s); err != nil {
			t.Fatal(err)
		}
		if revs, _ := listed(c, k); len(revs) != 0 || len(db.indexes) != 0 {
			t.Errorf("after the retry the inventory lists %v and the database holds %v", revs, db.indexes)
		}
	})
}

// TestDiscardRevisionDropsOnlyItsIndex: a superseded revision loses its
// index and nothing else.
func TestDiscardRevisionDropsOnlyItsIndex(t *testing.T) {
	forEachKind(t, func(t *testing.T, k *indexKind) {
		c := stepCorpus(stepNamespace(t), k)
		dbs := stepDatabases()
		db := dbs[k]
		stock(c, k, db, "r1", "r2", "r3")
		pointAt(c, k, db, "r1")
		r, _ := stepReconciler(t, dbs)
		if err := r.discardRevision(context.Background(), c, "r2"); err != nil {
			t.Fatal(err)
		}
		if want := []string{"drop " + k.indexName(c, "r2")}; !slices.Equal(db.calls, want) {
			t.Errorf("calls %v, want %v", db.calls, want)
		}
		if revs, _ := listed(c, k); !slices.Equal(revs, []string{"r1", "r3"}) {
			t.Errorf("the inventory lists %v, want [r1 r3]", revs)
		}
	})
}

// movedCorpus is a Corpus that moved from Milvus to PostgreSQL: its
// inventory lists a collection with the alias on it and a table with the
// view on it, which dbs hold.
func movedCorpus(t *testing.T, dbs map[*indexKind]*memoryIndexes) *v1alpha1.Corpus {
	c := stepCorpus(stepNamespace(t), &postgresIndexes)
	stock(c, &milvusIndexes, dbs[&milvusIndexes], "r1")
	pointAt(c, &milvusIndexes, dbs[&milvusIndexes], "r1")
	stock(c, &postgresIndexes, dbs[&postgresIndexes], "r2")
	pointAt(c, &postgresIndexes, dbs[&postgresIndexes], "r2")
	return c
}

// TestDeletionPolicyReleasesEveryIndexOrNone: deleting a Corpus with
// deletionPolicy Delete removes the stable names and drops the indexes of
// every store it used; Retain asks no database anything and keeps the
// inventory as it was.
func TestDeletionPolicyReleasesEveryIndexOrNone(t *testing.T) {
	for _, policy := range []v1alpha1.DeletionPolicy{v1alpha1.DeletionDelete, v1alpha1.DeletionRetain} {
		t.Run(string(policy), func(t *testing.T) {
			dbs := stepDatabases()
			c := movedCorpus(t, dbs)
			c.Spec.DeletionPolicy = policy
			before := c.Status.Inventory.DeepCopy()
			r, _ := stepReconciler(t, dbs)
			if res, err := r.releaseExternal(context.Background(), c); err != nil || !res.IsZero() {
				t.Fatalf("result %+v, error %v", res, err)
			}
			for k, rev := range map[*indexKind]string{&milvusIndexes: "r1", &postgresIndexes: "r2"} {
				var want []string
				if policy == v1alpha1.DeletionDelete {
					want = []string{"unpoint " + k.pointerName(c), "drop " + k.indexName(c, rev)}
				}
				if calls := dbs[k].calls; !slices.Equal(calls, want) {
					t.Errorf("%s calls %v, want %v", k.store, calls, want)
				}
			}
			switch policy {
			case v1alpha1.DeletionDelete:
				if inv := c.Status.Inventory; len(inv.Collections)+len(inv.Tables) != 0 || inv.Alias != nil || inv.View != nil {
					t.Errorf("inventory %+v after releasing everything", inv)
				}
			case v1alpha1.DeletionRetain:
				if !equality.Semantic.DeepEqual(c.Status.Inventory, before) {
					t.Errorf("inventory %+v, want %+v", c.Status.Inventory, before)
				}
			}
		})
	}
}

// TestReleaseStopsAtAFailureAndLosesNothing: a collection Milvus refuses
// to drop fails the deletion with the deletion policy in the message,
// before PostgreSQL is asked anything; the alias and the other collection
// go, the refused one stays in the inventory for the retry.
func TestReleaseStopsAtAFailureAndLosesNothing(t *testing.T) {
	dbs := stepDatabases()
	c := movedCorpus(t, dbs)
	milvusDB := dbs[&milvusIndexes]
	stock(c, &milvusIndexes, milvusDB, "r0")
	milvusDB.failing[c.MilvusCollection("r0")] = errors.New("connection refused")
	r, _ := stepReconciler(t, dbs)
	_, err := r.releaseExternal(context.Background(), c)
	if want := "releasing Milvus objects (deletionPolicy Delete): connection refused"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	want := []string{"unpoint " + c.MilvusAlias(), "drop " + c.MilvusCollection("r1"), "drop " + c.MilvusCollection("r0")}
	if !slices.Equal(milvusDB.calls, want) {
		t.Errorf("Milvus calls %v, want %v", milvusDB.calls, want)
	}
	if revs, read := listed(c, &milvusIndexes); !slices.Equal(revs, []string{"r0"}) || read != "" {
		t.Errorf("the inventory lists collections of %v, the alias on %q; want r0's alone, no alias", revs, read)
	}
	if calls := dbs[&postgresIndexes].calls; len(calls) != 0 {
		t.Errorf("PostgreSQL was asked %v after Milvus failed", calls)
	}
	if revs, read := listed(c, &postgresIndexes); !slices.Equal(revs, []string{"r2"}) || read == "" {
		t.Errorf("the inventory lists tables of %v, the view on %q; want r2's, read by the view", revs, read)
	}
}

// TestReleaseWaitsForAGoneSecretThenLetsGo: while the Secret that reaches
// the tables is gone, the deleted Corpus waits the grace for it (reason
// SecretGone); past the grace it leaves the tables, listed in a Warning,
// and lets go.
func TestReleaseWaitsForAGoneSecretThenLetsGo(t *testing.T) {
	dbs := stepDatabases()
	c := stepCorpus(stepNamespace(t), &postgresIndexes)
	stock(c, &postgresIndexes, dbs[&postgresIndexes], "r1")
	gone := apierrors.NewNotFound(corev1.Resource("secrets"), "pg")
	dbs[&postgresIndexes].failing[c.PostgresTable("r1")] = gone
	r, rec := stepReconciler(t, dbs)
	r.SecretGoneGrace = time.Minute

	c.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	res, err := r.releaseExternal(context.Background(), c)
	if err != nil || res.RequeueAfter <= 0 || res.RequeueAfter > time.Minute {
		t.Fatalf("result %+v, error %v; want a wait of at most the grace", res, err)
	}
	ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
	if ready == nil || ready.Reason != v1alpha1.ReasonSecretGone || !strings.Contains(ready.Message, `releasing Postgres tables (deletionPolicy Delete): secrets "pg" not found`) {
		t.Errorf("Ready %+v, want reason SecretGone naming the Secret", ready)
	}

	c.DeletionTimestamp = &metav1.Time{Time: time.Now().Add(-2 * time.Minute)}
	if res, err := r.releaseExternal(context.Background(), c); err != nil || !res.IsZero() {
		t.Fatalf("past the grace: result %+v, error %v", res, err)
	}
	events := recorded(rec)
	if len(events) != 1 || !strings.HasPrefix(events[0], "Warning ExternalObjectsLeft left [] and [pg.test:5432/app/rag."+c.PostgresTable("r1")+"] in place") {
		t.Errorf("events %q, want one ExternalObjectsLeft naming the table", events)
	}
	if !maps.Equal(dbs[&postgresIndexes].indexes, map[string]bool{c.PostgresTable("r1"): true}) {
		t.Errorf("the database holds %v, want the table left in place", dbs[&postgresIndexes].indexes)
	}
}
