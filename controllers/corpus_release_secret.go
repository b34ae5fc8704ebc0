package controllers

import (
	"cmp"
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// DefaultSecretGoneGrace is how long a deleted Corpus whose vector store's
// Secret is gone waits for the Secret to come back before it lets go of
// its Milvus collections or Postgres tables, which it can no longer reach.
// Deleting a namespace deletes its Secrets beside its Corpora, and no
// Secret can be created in a namespace being deleted: without the grace
// the namespace would never go.
const DefaultSecretGoneGrace = time.Minute

// releaseExternal drops the Corpus's Milvus objects and Postgres tables as
// its deletion policy says. When the Secret that reaches them is gone, it
// waits the SecretGoneGrace from the deletion for it to return (saying so in
// the Corpus's conditions), then leaves them in place, logs their names
// and reports done, so that the Corpus and its namespace can go.
func (r *CorpusReconciler) releaseExternal(ctx context.Context, c *v1alpha1.Corpus) (ctrl.Result, error) {
	err := r.releaseIndexes(ctx, c)
	if err == nil || !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	grace := cmp.Or(r.SecretGoneGrace, DefaultSecretGoneGrace)
	if waited := time.Since(c.DeletionTimestamp.Time); waited < grace {
		return ctrl.Result{RequeueAfter: grace - waited}, r.reportSecretGone(ctx, c, grace, err)
	}
	logf.FromContext(ctx).Error(err, "leaving the Corpus's external objects in place: the Secret that reaches them is gone",
		"collections", inventoryNames(c, collectionNames), "tables", inventoryNames(c, tableNames))
	r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, "ExternalObjectsLeft", "Delete",
		"left %v and %v in place: %v", inventoryNames(c, collectionNames), inventoryNames(c, tableNames), err)
	return ctrl.Result{}, nil
}

// reportSecretGone says in the Corpus's conditions that its deletion waits
// for the vector store's Secret.
func (r *CorpusReconciler) reportSecretGone(ctx context.Context, c *v1alpha1.Corpus, grace time.Duration, err error) error {
	base := c.DeepCopy()
	msg := fmt.Sprintf("deleting: %v; restore it within %s of the deletion to have the collections and tables dropped, otherwise they are left in place",
		err, grace)
	markNotReady(&c.Status.Conditions, c.Generation, v1alpha1.ReasonSecretGone, msg)
	return client.IgnoreNotFound(patchStatus(ctx, r.Client, c, base))
}

// collectionNames lists the inventoried Milvus collections.
func collectionNames(inv *v1alpha1.Inventory) []string {
	var out []string
	for _, col := range inv.Collections {
		out = append(out, col.Address+"/"+col.Name)
	}
	return out
}

// tableNames lists the inventoried Postgres tables.
func tableNames(inv *v1alpha1.Inventory) []string {
	var out []string
	for _, t := range inv.Tables {
		out = append(out, t.Address+"/"+t.Database+"/"+t.Schema+"."+t.Name)
	}
	return out
}

// inventoryNames applies names to the Corpus's inventory, none without one.
func inventoryNames(c *v1alpha1.Corpus, names func(*v1alpha1.Inventory) []string) []string {
	if c.Status.Inventory == nil {
		return nil
	}
	return names(c.Status.Inventory)
}
