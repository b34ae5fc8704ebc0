package controllers

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// addFinalizer adds finalizer to obj on the API server when it is missing,
// with a patch of metadata.finalizers alone (guarded by the resourceVersion
// read). An Update would send the typed object back and drop every zero a
// user applied (chunkOverlap: 0 under omitempty), so the next apply of the
// same manifest would change the object again and move its generation.
func addFinalizer(ctx context.Context, c client.Client, obj client.Object, finalizer string) error {
	before := obj.DeepCopyObject().(client.Object)
	if !controllerutil.AddFinalizer(obj, finalizer) {
		return nil
	}
	return c.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// removeFinalizer removes finalizer from obj on the API server when it is
// there, patching metadata.finalizers alone, as addFinalizer does.
func removeFinalizer(ctx context.Context, c client.Client, obj client.Object, finalizer string) error {
	before := obj.DeepCopyObject().(client.Object)
	if !controllerutil.RemoveFinalizer(obj, finalizer) {
		return nil
	}
	return c.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}
