//go:build cluster

package cluster_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/devcluster"
	"github.com/parentrag/parentrag/internal/index/postgres/pgtest"
)

// TestPostgresChildrenRollOutThroughTheService serves PostgreSQL with
// pgvector (PGlite) from this machine where the node's pods reach it, and
// applies the docs sample with its children in Postgres as
// config/samples/postgres says: a Secret with the DSN, then the samples
// and the overlay. The indexing writes a table, the Service answers from
// it, and a policy change under load rolls out with no failed query and
// no parent of another revision; once the old revision leaves the
// history its table is dropped from the database, and the view reads the
// new one.
func TestPostgresChildrenRollOutThroughTheService(t *testing.T) {
	ctx := context.Background()
	db, err := pgtest.StartPGlite(ctx, envOr("PARENTRAG_HOST_ADDR", "10.244.0.1"), "")
	if err != nil {
		t.Fatalf("serving PGlite where pods can reach this machine: %v (make postgres-engine; set PARENTRAG_HOST_ADDR)", err)
	}
	t.Cleanup(db.Stop)
	ns := newNamespace(t, "postgres")
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pg-app"}, StringData: map[string]string{"dsn": db.DSN}}
	if err := k8s.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	applySamplesWithPostgres(t, ns)
	c, r := waitSamplesReady(t, ns)
	t.Cleanup(func() { resetPolicy(t) })
	patchCorpus(t, c, func(c *v1alpha1.Corpus) { c.Spec.RetainRevisions = 1 })
	first := c.Status.ActiveRevision.Name
	firstTable := tableOf(t, c, first)
	t.Logf("revision %s: %d children in table %s", first[:8], c.Status.ActiveRevision.Children, firstTable)
	if got := countRows(t, db.DSN, firstTable); got != int(c.Status.ActiveRevision.Children) {
		t.Errorf("table %s holds %d rows, the revision %d children", firstTable, got, c.Status.ActiveRevision.Children)
	}

	e := endpointOf(t, ns, r.Name)
	e.waitAnswering(t)
	l := startLoad(ctx, e, devcluster.NewRevisionParents(k8s, c, t.TempDir()), 4)
	defer l.stop()
	eventually(t, time.Minute, "the first revision to answer", func() (bool, error) { return l.answeredBy(first) >= 10, nil })
	setChild(t, 200, 20)
	final := waitServedAfter(t, c, r, first)
	eventually(t, time.Minute, "the new revision to answer", func() (bool, error) { return l.answeredBy(final) >= 20, nil })
	l.stop()
	t.Logf("%s", l.summary())
	l.check(t)

	finalTable := tableOf(t, c, final)
	eventually(t, 2*time.Minute, "the first revision's table to be dropped", func() (bool, error) {
		get(t, c)
		inventory := c.Status.Inventory
		listed := inventory != nil && slices.ContainsFunc(inventory.Tables, func(tb v1alpha1.InventoryTable) bool { return tb.Name == firstTable })
		return !listed && !tableExists(t, db.DSN, firstTable), nil
	})
	if v := c.Status.Inventory.View; v == nil || !strings.HasSuffix(finalTable, "."+v.Table) {
		t.Errorf("view %+v, want it on %s", v, finalTable)
	}
	t.Logf("revision %s served from table %s; %s dropped", final[:8], finalTable, firstTable)
	checkNoLeaks(t, c)

	// Deleted before its namespace, as docs/spec/corpus.md says, the
	// Corpus drops its table and view (deletionPolicy Delete).
	schema, _, _ := strings.Cut(finalTable, ".") // the sample's tables are in a schema
	view := schema + "." + c.Status.Inventory.View.Name
	deleteCorpus(t, c)
	for _, name := range []string{finalTable, view} {
		if tableExists(t, db.DSN, name) {
			t.Errorf("%s is still in the database after the Corpus was deleted", name)
		}
	}
}

// deleteCorpus deletes c and waits until its finalizer lets it go.
func deleteCorpus(t *testing.T, c *v1alpha1.Corpus) {
	t.Helper()
	ctx := context.Background()
	if err := k8s.Delete(ctx, c); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the Corpus to be released", func() (bool, error) {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(c), &v1alpha1.Corpus{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// applySamplesWithPostgres applies config/samples without its Corpus and
// then config/samples/postgres, the Corpus that indexes into Postgres, so
// that no revision is ever built into ConfigMaps first.
func applySamplesWithPostgres(t *testing.T, ns string) {
	t.Helper()
	objs, err := devcluster.RenderKustomization(filepath.Join(root, "config/samples"))
	if err != nil {
		t.Fatal(err)
	}
	objs = slices.DeleteFunc(objs, func(o *unstructured.Unstructured) bool { return o.GetKind() == "Corpus" })
	for _, o := range objs {
		if namespaced, err := k8s.IsObjectNamespaced(o); err != nil {
			t.Fatal(err)
		} else if namespaced {
			o.SetNamespace(ns)
		}
	}
	if err := applyAll(context.Background(), objs); err != nil {
		t.Fatal(err)
	}
	applyKustomization(t, "config/samples/postgres", ns)
}

// tableOf returns the name of the table the Corpus's inventory lists for
// revision.
func tableOf(t *testing.T, c *v1alpha1.Corpus, revision string) string {
	t.Helper()
	var name string
	eventually(t, time.Minute, "the inventory to list revision "+revision[:8]+"'s table", func() (bool, error) {
		get(t, c)
		if c.Status.Inventory == nil {
			return false, nil
		}
		for _, tb := range c.Status.Inventory.Tables {
			if tb.Revision == revision {
				name = tb.Schema + "." + tb.Name
				return true, nil
			}
		}
		return false, nil
	})
	return strings.TrimPrefix(name, ".")
}

// countRows counts the rows of a table, as a user's psql would.
func countRows(t *testing.T, dsn, table string) int {
	t.Helper()
	var n int
	query(t, dsn, func(conn *pgx.Conn) error {
		return conn.QueryRow(context.Background(), `SELECT count(*) FROM `+pgx.Identifier(strings.Split(table, ".")).Sanitize()).Scan(&n)
	})
	return n
}

// tableExists says whether schema.name is a table of the database.
func tableExists(t *testing.T, dsn, table string) bool {
	t.Helper()
	schema, name, _ := strings.Cut(table, ".")
	var exists bool
	query(t, dsn, func(conn *pgx.Conn) error {
		return conn.QueryRow(context.Background(),
			`SELECT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2)`, schema, name).Scan(&exists)
	})
	return exists
}

// query runs f on a connection of its own to dsn.
func query(t *testing.T, dsn string, f func(*pgx.Conn) error) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := f(conn); err != nil {
		t.Fatal(err)
	}
}
