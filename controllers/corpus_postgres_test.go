package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/glove"
	"github.com/parentrag/parentrag/internal/glove/glovetest"
	"github.com/parentrag/parentrag/internal/index/postgres/pgtest"
)

// pgDatabase is the test database, seen from the test: a schema of its
// own for one Corpus.
type pgDatabase struct {
	dsn, schema string
}

// newPGDatabase picks a schema for a test on the tests' PostgreSQL and
// drops it when the test ends.
func newPGDatabase(t *testing.T) pgDatabase {
	db := pgDatabase{dsn: pgtest.DSN(t), schema: pgtest.Schema(t)}
	t.Cleanup(func() { db.exec(t, `DROP SCHEMA IF EXISTS "`+db.schema+`" CASCADE`) })
	return db
}

// exec runs one statement.
func (db pgDatabase) exec(t *testing.T, sql string) {
	conn, err := pgx.Connect(context.Background(), db.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Logf("%s: %v", sql, err)
	}
}

// relations lists the tables (kind 'r') or views ('v') of the schema.
func (db pgDatabase) relations(t *testing.T, kind string) []string {
	conn, err := pgx.Connect(context.Background(), db.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind = $2 ORDER BY 1`, db.schema, kind)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// rows counts a relation's rows, -1 when it does not exist.
func (db pgDatabase) rows(t *testing.T, name string) int {
	conn, err := pgx.Connect(context.Background(), db.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM "`+db.schema+`"."`+name+`"`).Scan(&n); err != nil {
		return -1
	}
	return n
}

// viewReads names the table a view selects from.
func (db pgDatabase) viewReads(t *testing.T, view string) string {
	conn, err := pgx.Connect(context.Background(), db.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var def string
	if err := conn.QueryRow(context.Background(), `SELECT definition FROM pg_views WHERE schemaname = $1 AND viewname = $2`, db.schema, view).Scan(&def); err != nil {
		return ""
	}
	return def
}

// postgresCorpus is a Corpus whose children go to db, through a Secret
// holding its DSN.
func postgresCorpus(t *testing.T, ns, policy string, db pgDatabase) *v1alpha1.Corpus {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pg-app"}, StringData: map[string]string{"dsn": db.dsn}}
	if err := k8s.Create(context.Background(), secret); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	c := inlineCorpus(ns, policy, sampleDocs()...)
	c.Spec.VectorStore = &v1alpha1.VectorStore{Postgres: &v1alpha1.PostgresVectorStore{SecretRef: v1alpha1.LocalObjectReference{Name: secret.Name}, Schema: db.schema}}
	return c
}

// TestPostgresTablesFollowRevisions: each revision gets its table, the
// view follows the active one, retention drops the oldest, and deleting
// the Corpus drops the view and every table.
func TestPostgresTablesFollowRevisions(t *testing.T) {
	db := newPGDatabase(t)
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := postgresCorpus(t, ns, p.Name, db)
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 90*time.Second)
	first := c.Status.ActiveRevision
	firstTable := c.PostgresTable(first.Name)
	if n := db.rows(t, firstTable); n != first.Children {
		t.Fatalf("table %s holds %d rows, the revision has %d children", firstTable, n, first.Children)
	}
	if inv := c.Status.Inventory; inv == nil || len(inv.Tables) != 1 || inv.View == nil || inv.View.Table != firstTable || inv.Tables[0].Schema != db.schema {
		t.Fatalf("inventory %+v, want the table and the view on it", c.Status.Inventory)
	}
	if def := db.viewReads(t, c.PostgresView()); !strings.Contains(def, firstTable) {
		t.Fatalf("view %s reads %q, want %s", c.PostgresView(), def, firstTable)
	}
	var tables []string
	for _, child := range []int{120, 90} {
		prev := c.Status.ActiveRevision.Name
		get(t, p)
		p.Spec.Child = &v1alpha1.ChunkSize{ChunkSize: child}
		if err := k8s.Update(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		eventually(t, 90*time.Second, "a new revision with the view on it", func() (bool, error) {
			get(t, c)
			a := c.Status.ActiveRevision
			return a.Name != prev && strings.Contains(db.viewReads(t, c.PostgresView()), c.PostgresTable(a.Name)), nil
		})
		tables = append(tables, c.PostgresTable(c.Status.ActiveRevision.Name))
	}
	slices.Sort(tables)
	eventually(t, 30*time.Second, "the oldest table to be dropped", func() (bool, error) {
		have := db.relations(t, "r")
		return slices.Equal(have, tables), fmt.Errorf("tables %v, want %v", have, tables)
	})
	if err := k8s.Delete(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the tables and the view to go", func() (bool, error) {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(c), c)
		return apierrors.IsNotFound(err) && len(db.relations(t, "r")) == 0 && len(db.relations(t, "v")) == 0, err
	})
}

// TestPostgresWaitsForItsSecret: a Corpus whose connection Secret does not
// exist yet says so, and builds once it appears.
func TestPostgresWaitsForItsSecret(t *testing.T) {
	db := newPGDatabase(t)
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := inlineCorpus(ns, p.Name, sampleDocs()...)
	c.Spec.VectorStore = &v1alpha1.VectorStore{Postgres: &v1alpha1.PostgresVectorStore{SecretRef: v1alpha1.LocalObjectReference{Name: "pg-app"}, Schema: db.schema}}
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the Corpus to wait for its Secret", func() (bool, error) {
		get(t, c)
		ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
		return ready != nil && ready.Reason == v1alpha1.ReasonVectorStoreError && strings.Contains(ready.Message, "pg-app"), fmt.Errorf("Ready %+v", ready)
	})
	postgresCorpus(t, ns, p.Name, db) // creates the Secret
	waitCurrent(t, c, 90*time.Second)
	if n := db.rows(t, c.PostgresTable(c.Status.ActiveRevision.Name)); n != c.Status.ActiveRevision.Children {
		t.Fatalf("table holds %d rows, want %d", n, c.Status.ActiveRevision.Children)
	}
}

// TestPostgresWithGloVeHoldsBothVectors: with an embedding model (GloVe,
// served over HTTP) each child has its BM25 and its dense vector, the
// dense column has an HNSW index, and a Corpus without dimensions is
// refused.
func TestPostgresWithGloVeHoldsBothVectors(t *testing.T) {
	endpoint := glovetest.Start(t)
	db := newPGDatabase(t)
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := postgresCorpus(t, ns, p.Name, db)
	c.Spec.Embedding = &v1alpha1.Embedding{OpenAI: &v1alpha1.OpenAIEmbedding{Endpoint: endpoint, Model: glove.ModelSIF}}
	err := k8s.Create(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "embedding.openAI.dimensions is required with vectorStore.postgres") {
		t.Fatalf("a Postgres Corpus without dimensions: %v", err)
	}
	c.Spec.Embedding.OpenAI.Dimensions = 100
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 90*time.Second)
	table := c.PostgresTable(c.Status.ActiveRevision.Name)
	conn, err := pgx.Connect(context.Background(), db.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var both, hnsw int
	conn.QueryRow(context.Background(), `SELECT count(*) FROM "`+db.schema+`"."`+table+`" WHERE sparse IS NOT NULL AND dense IS NOT NULL`).Scan(&both)
	conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 AND indexdef LIKE '%hnsw%'`, db.schema, table).Scan(&hnsw)
	if both != c.Status.ActiveRevision.Children || hnsw != 1 {
		t.Fatalf("%d of %d children have both vectors, %d HNSW indexes; want all and 1", both, c.Status.ActiveRevision.Children, hnsw)
	}
}

// TestAPIServerExplainsPostgresAndSearchRules: specs that cannot work are
// refused by kubectl apply with a message that says what to change.
func TestAPIServerExplainsPostgresAndSearchRules(t *testing.T) {
	ns := newNamespace(t)
	pg := &v1alpha1.PostgresVectorStore{SecretRef: v1alpha1.LocalObjectReference{Name: "pg-app"}}
	for name, tc := range map[string]struct {
		change func(*v1alpha1.Corpus)
		want   string
	}{
		"two stores": {func(c *v1alpha1.Corpus) {
			c.Spec.VectorStore = &v1alpha1.VectorStore{Postgres: pg, Milvus: &v1alpha1.MilvusVectorStore{Address: "milvus:19530"}}
		}, "vectorStore sets at most one of embedded, milvus or postgres"},
		"too many dimensions": {func(c *v1alpha1.Corpus) {
			c.Spec.VectorStore = &v1alpha1.VectorStore{Postgres: pg}
			c.Spec.Embedding = &v1alpha1.Embedding{OpenAI: &v1alpha1.OpenAIEmbedding{Endpoint: "http://tei:8080", Model: "m", Dimensions: 3072}}
		}, "at most 2000"},
		"a CA that verifies nothing": {func(c *v1alpha1.Corpus) {
			c.Spec.VectorStore = &v1alpha1.VectorStore{Postgres: &v1alpha1.PostgresVectorStore{SecretRef: pg.SecretRef,
				TLS: &v1alpha1.PostgresTLS{Mode: "require", CASecretRef: &v1alpha1.LocalObjectReference{Name: "pg-ca"}}}}
		}, "tls.caSecretRef verifies the server: set tls.mode to verify-ca or verify-full"},
		"an upper-case schema": {func(c *v1alpha1.Corpus) {
			c.Spec.VectorStore = &v1alpha1.VectorStore{Postgres: &v1alpha1.PostgresVectorStore{SecretRef: pg.SecretRef, Schema: "Docs"}}
		}, "spec.vectorStore.postgres.schema"},
	} {
		t.Run(name, func(t *testing.T) {
			c := inlineCorpus(ns, "any", sampleDocs()...)
			tc.change(c)
			err := k8s.Create(context.Background(), c)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("create: %v, want Invalid saying %q", err, tc.want)
			}
		})
	}
	r := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "r"}, Spec: v1alpha1.RetrieverSpec{
		CorpusRef: v1alpha1.LocalObjectReference{Name: "any"},
		Search:    &v1alpha1.RetrieverSearch{Mode: v1alpha1.SearchDense, Fusion: &v1alpha1.RetrieverFusion{K: 10}},
	}}
	if err := k8s.Create(context.Background(), r); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "search.fusion tunes Hybrid search only") {
		t.Fatalf("a Dense Retriever with fusion: %v", err)
	}
}

// suiteSecretGoneGrace is how long the suite's deleted Corpora wait for a
// vector store's Secret that is gone.
const suiteSecretGoneGrace = 5 * time.Second

// TestPostgresCorpusWithoutItsSecretStillGoes: deleting a Corpus whose
// Postgres Secret is gone, as deleting its namespace does, waits the grace
// saying why, then lets the Corpus go and leaves its tables in place.
func TestPostgresCorpusWithoutItsSecretStillGoes(t *testing.T) {
	db := newPGDatabase(t)
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := postgresCorpus(t, ns, p.Name, db)
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 90*time.Second)
	table := c.PostgresTable(c.Status.ActiveRevision.Name)
	if err := k8s.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pg-app"}}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	if err := k8s.Delete(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the deletion to say it waits for the Secret", func() (bool, error) {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(c), c)
		if err != nil {
			return false, err
		}
		ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
		return ready != nil && ready.Reason == v1alpha1.ReasonSecretGone && strings.Contains(ready.Message, "pg-app"), fmt.Errorf("Ready %+v", ready)
	})
	eventually(t, 30*time.Second, "the Corpus to go", func() (bool, error) {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(c), c)
		return apierrors.IsNotFound(err), err
	})
	// The deletion timestamp has whole seconds: it may be a second early.
	if waited := time.Since(deleted); waited < suiteSecretGoneGrace-time.Second {
		t.Errorf("the Corpus went %s after its deletion, before the grace of %s", waited, suiteSecretGoneGrace)
	}
	if have := db.relations(t, "r"); !slices.Contains(have, table) {
		t.Errorf("tables %v: the table %s it could not reach should be left in place", have, table)
	}
}
