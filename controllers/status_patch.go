package controllers

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// patchStatus writes what the status of obj changed since base as a merge
// patch, and sends nothing when nothing changed: a reconcile that finds
// everything as it was costs the API server no write.
func patchStatus(ctx context.Context, c client.Client, obj, base client.Object) error {
	data, err := client.MergeFrom(base).Data(obj)
	if err != nil {
		return err
	}
	if string(data) == "{}" {
		return nil
	}
	return c.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, data))
}
