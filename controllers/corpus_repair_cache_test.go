package controllers

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/cmbundle"
)

// TestMissingConfigMapsAsksTheAPIServerOnlyAboutWhatTheInformerLacks
// checks the repair's check against an informer that lags: what the
// informer lists costs no request, a shard it lacks but the API server
// holds is not missing, and only what neither lists is.
func TestMissingConfigMapsAsksTheAPIServerOnlyAboutWhatTheInformerLacks(t *testing.T) {
	c := &v1alpha1.Corpus{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "docs"}}
	manifest := storedConfigMap("docs-rev", cmbundle.RoleManifest)
	manifest.Data = map[string]string{cmbundle.FilesKey: `{"shards":["docs-shard-a","docs-shard-b","docs-shard-c"],"files":[]}`}
	shardA, shardB := storedConfigMap("docs-shard-a", cmbundle.RoleShard), storedConfigMap("docs-shard-b", cmbundle.RoleShard)
	for _, tc := range []struct {
		name             string
		informer, server []client.Object
		wantMissing      []string
		wantServerLists  int
	}{
		{"the informer lists every one", []client.Object{manifest, shardA, shardB, storedConfigMap("docs-shard-c", cmbundle.RoleShard)}, nil, nil, 0},
		{"a shard the informer has not seen yet", []client.Object{manifest, shardA}, []client.Object{manifest, shardA, shardB}, []string{"docs-shard-c"}, 1},
		{"nothing is missing once the server is asked", []client.Object{manifest}, []client.Object{manifest, shardA, shardB, storedConfigMap("docs-shard-c", cmbundle.RoleShard)}, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			serverLists := 0
			server := fake.NewClientBuilder().WithScheme(NewScheme()).WithObjects(tc.server...).
				WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
					serverLists++
					return cl.List(ctx, list, opts...)
				}}).Build()
			r := &CorpusReconciler{APIReader: server, MetadataCache: fake.NewClientBuilder().WithScheme(NewScheme()).WithObjects(tc.informer...).Build()}
			names, err := cmbundle.Names(manifest)
			if err != nil {
				t.Fatal(err)
			}
			missing, err := r.missingConfigMaps(context.Background(), c, names)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(missing, tc.wantMissing) || serverLists != tc.wantServerLists {
				t.Fatalf("missing %q after %d lists from the API server, want %q after %d", missing, serverLists, tc.wantMissing, tc.wantServerLists)
			}
		})
	}
}

// storedConfigMap is a ConfigMap of the Corpus docs in namespace ns, with
// the labels its revisions' ConfigMaps carry.
func storedConfigMap(name, role string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
		Labels: map[string]string{LabelManagedBy: ManagedByValue, cmbundle.LabelCorpus: "docs", cmbundle.LabelRole: role}}}
}
