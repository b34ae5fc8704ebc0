package kubetest

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// Reads counts what a CountingClient was asked: Whole is the objects it
// sent whole (one a Get, every item of a List), Metadata the requests for
// metadata alone.
type Reads struct{ Whole, Metadata int }

// CountingClient returns a fake client holding objs that counts its reads
// into reads, to check how much a reader asks of the API server.
func CountingClient(scheme *runtime.Scheme, reads *Reads, objs ...client.Object) client.WithWatch {
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithInterceptorFuncs(interceptor.Funcs{
			Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if _, metadata := obj.(*metav1.PartialObjectMetadata); metadata {
					reads.Metadata++
				} else {
					reads.Whole++
				}
				return cl.Get(ctx, key, obj, opts...)
			},
			List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				err := cl.List(ctx, list, opts...)
				if _, metadata := list.(*metav1.PartialObjectMetadataList); metadata {
					reads.Metadata++
				} else {
					reads.Whole += meta.LenList(list)
				}
				return err
			},
		}).Build()
}
