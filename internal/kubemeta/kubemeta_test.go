package kubemeta_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/parentrag/parentrag/internal/kubemeta"
)

// TestConfigMapKinds checks that the empty objects name the core
// ConfigMap kinds, which a metadata client and informer need to know what
// to read.
func TestConfigMapKinds(t *testing.T) {
	for _, tc := range []struct {
		got  schema.GroupVersionKind
		kind string
	}{
		{kubemeta.ConfigMap().GroupVersionKind(), "ConfigMap"},
		{kubemeta.ConfigMapList().GroupVersionKind(), "ConfigMapList"},
	} {
		if want := (schema.GroupVersionKind{Version: "v1", Kind: tc.kind}); tc.got != want {
			t.Errorf("got %v, want %v", tc.got, want)
		}
	}
}
