package controllers

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/index/postgres"
	"github.com/parentrag/parentrag/internal/retrieval/build"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
)

// postgresCAKey is the key of the CA Secret that holds the certificates.
const postgresCAKey = "ca.crt"

// postgresIndexes are a Corpus's PostgreSQL tables, one a revision, and
// the view of the active one.
var postgresIndexes = indexKind{
	store: "Postgres", index: "table", pointer: "view", reads: "reads", released: "Postgres tables",
	moved: "ViewMoved", dropped: "TableDropped", dropFailed: "TableDropFailed",
	uses: (*v1alpha1.Corpus).UsesPostgres, indexName: (*v1alpha1.Corpus).PostgresTable, pointerName: (*v1alpha1.Corpus).PostgresView,
	inventory: postgresInventory, setInventory: setPostgresInventory,
	locate: locateTables, configure: configureTable,
	client: func(r *CorpusReconciler) externalIndex { return postgresIndex{r} },
}

// postgresInventory reads the tables and the view of an inventory.
func postgresInventory(inv *v1alpha1.Inventory) ([]childIndex, *stableName) {
	var tables []childIndex
	for _, t := range inv.Tables {
		tables = append(tables, childIndex{name: t.Name, revision: t.Revision, address: t.Address, database: t.Database, schema: t.Schema})
	}
	if inv.View == nil {
		return tables, nil
	}
	return tables, &stableName{name: inv.View.Name, index: inv.View.Table}
}

// setPostgresInventory writes the tables and the view of an inventory.
func setPostgresInventory(inv *v1alpha1.Inventory, tables []childIndex, view *stableName) {
	inv.Tables, inv.View = nil, nil
	for _, t := range tables {
		inv.Tables = append(inv.Tables, v1alpha1.InventoryTable{Name: t.name, Revision: t.revision, Address: t.address, Database: t.database, Schema: t.schema})
	}
	if view != nil {
		inv.View = &v1alpha1.InventoryView{Name: view.name, Table: view.index}
	}
}

// pgConnection is where the Corpus's connection Secret leads: the
// connection string with the spec's TLS settings, and the server's
// address and database (no credential).
type pgConnection struct {
	dsn               string
	rootCAs           []byte
	address, database string
}

// postgresConnection reads the connection Secret (and the CA Secret) of
// the Corpus's spec.
func (r *CorpusReconciler) postgresConnection(ctx context.Context, c *v1alpha1.Corpus) (pgConnection, error) {
	spec := c.Spec.VectorStore.Postgres
	var secret corev1.Secret
	if err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: spec.SecretRef.Name}, &secret); err != nil {
		return pgConnection{}, fmt.Errorf("reading Postgres Secret %s: %w", spec.SecretRef.Name, err)
	}
	dsn, err := postgres.SecretDSN(secret.Data)
	if err != nil {
		return pgConnection{}, fmt.Errorf("Postgres Secret %s: %w", spec.SecretRef.Name, err)
	}
	conn := pgConnection{dsn: dsn}
	if t := spec.TLS; t != nil {
		conn.dsn = postgres.WithSSLMode(dsn, t.Mode)
		if t.CASecretRef != nil {
			var ca corev1.Secret
			if err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: t.CASecretRef.Name}, &ca); err != nil {
				return pgConnection{}, fmt.Errorf("reading Postgres CA Secret %s: %w", t.CASecretRef.Name, err)
			}
			conn.rootCAs = ca.Data[postgresCAKey]
		}
	}
	if conn.address, conn.database, err = postgres.Location(conn.dsn); err != nil {
		return pgConnection{}, fmt.Errorf("Postgres Secret %s: %w", spec.SecretRef.Name, err)
	}
	return conn, nil
}

// postgresRef locates the table of a revision on the server conn leads
// to; it carries no credentials.
func postgresRef(c *v1alpha1.Corpus, conn pgConnection, revision string, dense int) bundle.VectorStoreRef {
	p := c.Spec.VectorStore.Postgres
	ref := bundle.VectorStoreRef{
		Kind: bundle.VectorStorePostgres, Address: conn.address, Database: conn.database,
		Schema: postgresSchema(c), Dense: dense, Metric: p.Metric, MaxConns: p.MaxConnections,
	}
	if revision != "" {
		ref.Table = c.PostgresTable(revision)
	}
	if p.TLS != nil {
		ref.SSLMode = p.TLS.Mode
	}
	if idx := p.Index; idx != nil {
		ref.HNSWM, ref.HNSWEfConstruction, ref.HNSWEf = idx.M, idx.EfConstruction, idx.Ef
	}
	return ref
}

// locateTables reads the connection Secret, whose server and database
// are part of the revision: a revision's table is there.
func locateTables(ctx context.Context, r *CorpusReconciler, c *v1alpha1.Corpus, dense int) (func(string) bundle.VectorStoreRef, error) {
	conn, err := r.postgresConnection(ctx, c)
	if err != nil {
		return nil, err
	}
	return func(revision string) bundle.VectorStoreRef { return postgresRef(c, conn, revision, dense) }, nil
}

// postgresSchema is the schema of the Corpus's tables.
func postgresSchema(c *v1alpha1.Corpus) string {
	if s := c.Spec.VectorStore.Postgres.Schema; s != "" {
		return s
	}
	return postgres.DefaultSchema
}

// postgresConfig is the store configuration of a table of ref on conn.
func postgresConfig(conn pgConnection, ref bundle.VectorStoreRef) postgres.Config {
	return postgres.Config{
		DSN: conn.dsn, RootCAs: conn.rootCAs, Schema: ref.Schema, Table: ref.Table, Dense: ref.Dense, Metric: ref.Metric,
		HNSWM: ref.HNSWM, HNSWEfConstruction: ref.HNSWEfConstruction, HNSWEf: ref.HNSWEf, MaxConns: ref.MaxConns,
	}
}

// configureTable has the build create and fill the revision's table,
// with the connection of the Corpus's Secret.
func configureTable(ctx context.Context, r *CorpusReconciler, c *v1alpha1.Corpus, ref bundle.VectorStoreRef, req *build.Request) error {
	conn, err := r.postgresConnection(ctx, c)
	if err != nil {
		return err
	}
	cfg := postgresConfig(conn, ref)
	req.Postgres = &cfg
	return nil
}

// postgresIndex reaches a Corpus's tables with the connection of its
// Secret.
type postgresIndex struct{ r *CorpusReconciler }

// point has the view read the table.
func (p postgresIndex) point(ctx context.Context, c *v1alpha1.Corpus, view string, t childIndex) error {
	return p.on(ctx, c, t, func(s *postgres.Store) error { return s.SetView(ctx, view) })
}

// unpoint drops the view.
func (p postgresIndex) unpoint(ctx context.Context, c *v1alpha1.Corpus, view string, t childIndex) error {
	return p.on(ctx, c, t, func(s *postgres.Store) error { return s.DropView(ctx, view) })
}

// drop drops the table.
func (p postgresIndex) drop(ctx context.Context, c *v1alpha1.Corpus, t childIndex) error {
	return p.on(ctx, c, t, func(s *postgres.Store) error {
		if err := s.Drop(ctx); err != nil {
			return fmt.Errorf("dropping table %s: %w", t.name, err)
		}
		return nil
	})
}

// on opens the table, runs op on it and closes it.
func (p postgresIndex) on(ctx context.Context, c *v1alpha1.Corpus, t childIndex, op func(*postgres.Store) error) error {
	store, err := p.r.connectTable(ctx, c, t)
	if err != nil {
		return err
	}
	defer store.Close()
	return op(store)
}

// errElsewhere marks an inventoried table on another server than the one
// the Corpus's Secret leads to now.
var errElsewhere = errors.New("the table is on another server than the Secret leads to")

// connectTable opens an inventoried table with the credentials of the
// Corpus's Secret, which must still lead to the server and database the
// table was created on: otherwise nothing could tell a dropped table from
// one out of reach, and the table is kept in the inventory.
func (r *CorpusReconciler) connectTable(ctx context.Context, c *v1alpha1.Corpus, t childIndex) (*postgres.Store, error) {
	if !c.UsesPostgres() {
		return nil, fmt.Errorf("table %s: the Corpus no longer names its Postgres Secret, so it cannot reach %s/%s: %w", t.name, t.address, t.database, errElsewhere)
	}
	conn, err := r.postgresConnection(ctx, c)
	if err != nil {
		return nil, err
	}
	if conn.address != t.address || conn.database != t.database {
		return nil, fmt.Errorf("table %s lives on %s/%s, the Secret now leads to %s/%s: %w", t.name, t.address, t.database, conn.address, conn.database, errElsewhere)
	}
	store, err := postgres.Open(ctx, postgresConfig(conn, bundle.VectorStoreRef{Schema: t.schema, Table: t.name, MaxConns: 1}))
	if err != nil {
		return nil, fmt.Errorf("postgres at %s: %w", t.address, err)
	}
	return store, nil
}
