package controllers

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/index/postgres"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
)

// postgresCAKey is the key of the CA Secret that holds the certificates.
const postgresCAKey = "ca.crt"

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

// tableConfig records the revision's table in the inventory (and
// publishes it, so a crash cannot leak it), then returns the configuration
// the build creates it with.
func (r *CorpusReconciler) tableConfig(ctx context.Context, s *corpusState, ref bundle.VectorStoreRef) (postgres.Config, error) {
	conn, err := r.postgresConnection(ctx, s.corpus)
	if err != nil {
		return postgres.Config{}, err
	}
	if err := r.recordTable(s, ref); err != nil {
		return postgres.Config{}, err
	}
	return postgresConfig(conn, ref), nil
}

// recordTable adds the revision's table to the inventory and publishes
// the status at once, before the table can exist.
func (r *CorpusReconciler) recordTable(s *corpusState, ref bundle.VectorStoreRef) error {
	inv := inventoryOf(s.corpus)
	if tableEntry(inv, ref.Table) != nil {
		return nil
	}
	inv.Tables = append(inv.Tables, v1alpha1.InventoryTable{Name: ref.Table, Revision: s.revision, Address: ref.Address, Database: ref.Database, Schema: ref.Schema})
	return s.progress.flush()
}

// tableEntry returns the inventory entry of a table, nil when it is not
// listed.
func tableEntry(inv *v1alpha1.Inventory, name string) *v1alpha1.InventoryTable {
	for i := range inv.Tables {
		if inv.Tables[i].Name == name {
			return &inv.Tables[i]
		}
	}
	return nil
}

// moveView points the Corpus's view at the active revision's table once
// every Retriever of the Corpus serves that revision, so readers outside
// parentrag switch together with the query pods.
func (r *CorpusReconciler) moveView(ctx context.Context, s *corpusState) (ctrl.Result, error) {
	c := s.corpus
	if !c.UsesPostgres() || c.Status.ActiveRevision == nil {
		return ctrl.Result{}, nil
	}
	active := c.PostgresTable(c.Status.ActiveRevision.Name)
	inv := inventoryOf(c)
	entry := tableEntry(inv, active)
	if entry == nil || (inv.View != nil && inv.View.Table == active) {
		return ctrl.Result{}, nil
	}
	serving, err := r.retrieversServe(ctx, c, c.Status.ActiveRevision.Name)
	if err != nil || !serving {
		return ctrl.Result{}, err
	}
	store, err := r.connectTable(ctx, c, *entry)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer store.Close()
	if err := store.SetView(ctx, c.PostgresView()); err != nil {
		return ctrl.Result{}, err
	}
	inv.View = &v1alpha1.InventoryView{Name: c.PostgresView(), Table: active}
	r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "ViewMoved", "Promote", "view %s.%s now reads %s", entry.Schema, c.PostgresView(), active)
	return ctrl.Result{}, nil
}

// errElsewhere marks an inventoried table on another server than the one
// the Corpus's Secret leads to now.
var errElsewhere = errors.New("the table is on another server than the Secret leads to")

// connectTable opens an inventoried table with the credentials of the
// Corpus's Secret, which must still lead to the server and database the
// table was created on: otherwise nothing could tell a dropped table from
// one out of reach, and the table is kept in the inventory.
func (r *CorpusReconciler) connectTable(ctx context.Context, c *v1alpha1.Corpus, t v1alpha1.InventoryTable) (*postgres.Store, error) {
	if !c.UsesPostgres() {
		return nil, fmt.Errorf("table %s: the Corpus no longer names its Postgres Secret, so it cannot reach %s/%s: %w", t.Name, t.Address, t.Database, errElsewhere)
	}
	conn, err := r.postgresConnection(ctx, c)
	if err != nil {
		return nil, err
	}
	if conn.address != t.Address || conn.database != t.Database {
		return nil, fmt.Errorf("table %s lives on %s/%s, the Secret now leads to %s/%s: %w", t.Name, t.Address, t.Database, conn.address, conn.database, errElsewhere)
	}
	store, err := postgres.Open(ctx, postgresConfig(conn, bundle.VectorStoreRef{Schema: t.Schema, Table: t.Name, MaxConns: 1}))
	if err != nil {
		return nil, fmt.Errorf("postgres at %s: %w", t.Address, err)
	}
	return store, nil
}

// dropTables drops the inventoried tables keep does not accept, skipping
// the one the view reads, and removes each dropped (or already missing)
// one from the inventory. A failed drop stays in the inventory and is
// retried.
func (r *CorpusReconciler) dropTables(ctx context.Context, c *v1alpha1.Corpus, keep func(v1alpha1.InventoryTable) bool) error {
	inv := inventoryOf(c)
	var kept []v1alpha1.InventoryTable
	var errs []error
	for _, t := range inv.Tables {
		if keep(t) || (inv.View != nil && inv.View.Table == t.Name) {
			kept = append(kept, t)
			continue
		}
		if err := r.dropTable(ctx, c, t); err != nil {
			kept = append(kept, t)
			errs = append(errs, err)
			continue
		}
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "TableDropped", "GarbageCollect", "dropped Postgres table %s.%s", t.Schema, t.Name)
	}
	inv.Tables = kept
	return errors.Join(errs...)
}

// dropTable drops one table; a missing one counts as dropped.
func (r *CorpusReconciler) dropTable(ctx context.Context, c *v1alpha1.Corpus, t v1alpha1.InventoryTable) error {
	store, err := r.connectTable(ctx, c, t)
	if err != nil {
		return err
	}
	defer store.Close()
	if err := store.Drop(ctx); err != nil {
		return fmt.Errorf("dropping table %s: %w", t.Name, err)
	}
	return nil
}

// releasePostgres applies the deletion policy to a deleted Corpus's
// tables: Delete drops the view and every table, Retain leaves them.
func (r *CorpusReconciler) releasePostgres(ctx context.Context, c *v1alpha1.Corpus) error {
	inv := c.Status.Inventory
	if inv == nil || c.GetDeletionPolicy() == v1alpha1.DeletionRetain {
		return nil
	}
	return r.dropAllTables(ctx, c)
}

// dropAllTables drops the view and every inventoried table.
func (r *CorpusReconciler) dropAllTables(ctx context.Context, c *v1alpha1.Corpus) error {
	inv := inventoryOf(c)
	if v := inv.View; v != nil {
		if t := tableEntry(inv, v.Table); t != nil {
			store, err := r.connectTable(ctx, c, *t)
			if err != nil {
				return err
			}
			err = store.DropView(ctx, v.Name)
			store.Close()
			if err != nil {
				return err
			}
		}
		inv.View = nil
	}
	return r.dropTables(ctx, c, func(v1alpha1.InventoryTable) bool { return false })
}

// collectTables drops the tables of revisions no longer kept. After the
// Corpus left Postgres its tables serve nobody; the spec no longer names
// the Secret that reaches them, so a failure is reported and retried on
// later reconciles without holding the Corpus back.
func (r *CorpusReconciler) collectTables(ctx context.Context, c *v1alpha1.Corpus, keep map[string]bool) error {
	inv := c.Status.Inventory
	if inv == nil || (len(inv.Tables) == 0 && inv.View == nil) {
		return nil
	}
	if !c.UsesPostgres() {
		if err := r.dropAllTables(ctx, c); err != nil {
			r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, "TableDropFailed", "GarbageCollect",
				"the Corpus no longer uses Postgres, but its tables could not be dropped: %v", err)
		}
		return nil
	}
	return r.dropTables(ctx, c, func(t v1alpha1.InventoryTable) bool { return keep[t.Revision] })
}
