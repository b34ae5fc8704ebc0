package controllers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/index/postgres/pgtest"
)

// TestCrashMidBuildLeavesNoTableBehind is TestCrashMidBuildLeavesNothingBehind
// for Postgres: the operator is killed while a revision's children are
// being written into its table, through a proxy that slows the writes,
// twice: once to let the next operator finish that revision, once while
// the spec moves on. The unfinished table must be in status.inventory
// before it exists, then reused without duplicate rows, or dropped; no
// table outlives retention and the view reads the active one.
func TestCrashMidBuildLeavesNoTableBehind(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own control plane and three operators over a deliberately slow Postgres")
	}
	env := startControlPlane(t)
	cl := env.Client
	db := newPGDatabase(t)
	proxy, dsn, err := pgtest.ProxyDSN(db.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	ns := createNamespaceIn(t, cl)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pg-app"}, StringData: map[string]string{"dsn": dsn}}
	if err := cl.Create(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	p := createPolicyIn(t, cl, 800, 100)
	c := inlineCorpus(ns, p.Name, manyDocs(300)...)
	c.Spec.VectorStore = &v1alpha1.VectorStore{Postgres: &v1alpha1.PostgresVectorStore{SecretRef: v1alpha1.LocalObjectReference{Name: secret.Name}, Schema: db.schema}}
	c.Spec.RetainRevisions = 2
	if err := cl.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	op := startOperator(t, env)
	first := waitActive(t, cl, nil, c, "", 90*time.Second)
	assertNoTableLeaked(t, cl, db, c)

	// Crash 1: revision 2's table is half filled.
	proxy.SetDelay(200 * time.Millisecond)
	setChildSize(t, cl, p, 80)
	second := waitRowsUnderway(t, cl, db, c, first)
	op.kill()
	partial := db.rows(t, c.PostgresTable(second))
	assertCrashedMidWrite(t, cl, db, c, first, second)
	proxy.SetDelay(0)
	op = startOperator(t, env)
	if got := waitActive(t, cl, nil, c, first, 90*time.Second); got != second {
		t.Fatalf("after the restart revision %s is active, want %s, whose build was interrupted", got, second)
	}
	if c.Status.ActiveRevision.Children <= partial {
		t.Fatalf("revision %s has %d children, and the crash left %d rows: the build was not interrupted mid-way", second, c.Status.ActiveRevision.Children, partial)
	}
	t.Logf("revision %s resumed: the crash left %d rows, the table now holds %d (its children)", second, partial, db.rows(t, c.PostgresTable(second)))
	assertNoTableLeaked(t, cl, db, c)

	// Crash 2: revision 3's table is half filled, then the spec moves on
	// while no operator runs; revision 3 is never finished.
	proxy.SetDelay(200 * time.Millisecond)
	setChildSize(t, cl, p, 120)
	third := waitRowsUnderway(t, cl, db, c, second)
	op.kill()
	assertCrashedMidWrite(t, cl, db, c, second, third)
	setChildSize(t, cl, p, 140)
	proxy.SetDelay(0)
	startOperator(t, env)
	fourth := waitActive(t, cl, nil, c, second, 90*time.Second)
	if fourth == third {
		t.Fatalf("revision %s is active, but the spec moved on from it", third)
	}
	eventually(t, 30*time.Second, "the tables of revisions past retention or never finished to go", func() (bool, error) {
		a, b := db.rows(t, c.PostgresTable(first)), db.rows(t, c.PostgresTable(third))
		return a == -1 && b == -1, fmt.Errorf("table of %s has %d rows, of %s %d", first, a, third, b)
	})
	assertNoTableLeaked(t, cl, db, c)
}

// waitRowsUnderway waits until a revision after previous is being
// written: its table inventoried and holding rows.
func waitRowsUnderway(t *testing.T, cl client.Client, db pgDatabase, c *v1alpha1.Corpus, previous string) string {
	t.Helper()
	var rev string
	eventually(t, 60*time.Second, "a new revision's children to be under way into Postgres", func() (bool, error) {
		assertEveryTableInventoried(t, cl, db, c)
		pr := c.Status.Progress
		if pr == nil || pr.Revision == previous {
			return false, fmt.Errorf("progress %+v", pr)
		}
		rev = pr.Revision
		rows := db.rows(t, c.PostgresTable(rev))
		return rows > 0, fmt.Errorf("progress %+v, table with %d rows", pr, rows)
	})
	return rev
}

// assertEveryTableInventoried fails when a table of the schema is not in
// the Corpus's inventory: a crash then would leak it.
func assertEveryTableInventoried(t *testing.T, cl client.Client, db pgDatabase, c *v1alpha1.Corpus) {
	t.Helper()
	tables := db.relations(t, "r")
	getIn(t, cl, c)
	for _, name := range tables {
		if c.Status.Inventory == nil || !tableInventoried(c, name) {
			t.Fatalf("table %s exists but is not in status.inventory %+v", name, c.Status.Inventory)
		}
	}
}

func tableInventoried(c *v1alpha1.Corpus, name string) bool {
	for _, tb := range c.Status.Inventory.Tables {
		if tb.Name == name {
			return true
		}
	}
	return false
}

// assertCrashedMidWrite checks the state a kill mid-write leaves: the
// table inventoried with some rows, the old revision active with the view
// on it, no ConfigMap of the new one.
func assertCrashedMidWrite(t *testing.T, cl client.Client, db pgDatabase, c *v1alpha1.Corpus, active, building string) {
	t.Helper()
	getIn(t, cl, c)
	table := c.PostgresTable(building)
	if !tableInventoried(c, table) {
		t.Errorf("table %s exists but is not in status.inventory", table)
	}
	if a := c.Status.ActiveRevision; a == nil || a.Name != active {
		t.Errorf("active revision %v, want %s to keep serving", a, active)
	}
	if v := c.Status.Inventory.View; v == nil || v.Table != c.PostgresTable(active) {
		t.Errorf("view %+v, want it on %s", v, c.PostgresTable(active))
	}
	if cms := corpusConfigMaps(t, cl, c, building); len(cms) > 0 {
		t.Errorf("revision %s has %d ConfigMaps before its table was finished", building, len(cms))
	}
	t.Logf("killed the operator with %d rows in %s", db.rows(t, table), table)
}

// assertNoTableLeaked checks that the tables in the schema are exactly
// those of the retained revisions, each as full as its revision, all in
// the inventory, and the one view reads the active revision's.
func assertNoTableLeaked(t *testing.T, cl client.Client, db pgDatabase, c *v1alpha1.Corpus) {
	t.Helper()
	assertNothingLeaked(t, cl, nil, c)
	retained := map[string]v1alpha1.RevisionStatus{}
	for _, h := range c.Status.History {
		retained[c.PostgresTable(h.Name)] = h
	}
	tables := db.relations(t, "r")
	for _, name := range tables {
		h, ok := retained[name]
		switch {
		case !tableInventoried(c, name):
			t.Errorf("table %s exists but not in status.inventory: leaked", name)
		case !ok:
			t.Errorf("table %s is not of a retained revision", name)
		case db.rows(t, name) != h.Children:
			t.Errorf("table %s holds %d rows, revision %s has %d children", name, db.rows(t, name), h.Name, h.Children)
		}
	}
	if len(tables) != len(retained) || len(c.Status.Inventory.Tables) != len(retained) {
		t.Errorf("tables %v, inventory %+v, retained %d revisions", tables, c.Status.Inventory.Tables, len(retained))
	}
	active := c.PostgresTable(c.Status.ActiveRevision.Name)
	if views := db.relations(t, "v"); len(views) != 1 || views[0] != c.PostgresView() {
		t.Errorf("views %v, want only %s", views, c.PostgresView())
	}
	if v := c.Status.Inventory.View; v == nil || v.Table != active {
		t.Errorf("inventoried view %+v, want it on %s", v, active)
	}
}
