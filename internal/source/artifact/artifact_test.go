package artifact

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestOf(t *testing.T) {
	for name, c := range map[string]struct {
		status  map[string]any
		want    Artifact
		wantErr string
	}{
		"ready": {
			status: map[string]any{"artifact": map[string]any{"url": "http://sc/gitrepository/ns/docs/abc.tar.gz", "digest": "sha256:ab", "revision": "main@sha1:0123", "size": int64(10)}},
			want:   Artifact{URL: "http://sc/gitrepository/ns/docs/abc.tar.gz", Digest: "sha256:ab", Revision: "main@sha1:0123"},
		},
		"no status": {status: nil, wantErr: "no artifact yet"},
		"failed clone": {
			status:  map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "False", "message": "failed to checkout and determine revision: authentication required"}}},
			wantErr: "no artifact yet; Ready=False: failed to checkout and determine revision: authentication required",
		},
		"artifact without digest": {status: map[string]any{"artifact": map[string]any{"url": "http://sc/x.tar.gz"}}, wantErr: "no url or no digest"},
	} {
		t.Run(name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{}}
			if c.status != nil {
				obj.Object["status"] = c.status
			}
			got, err := Of(obj)
			if c.wantErr != "" {
				if !errors.Is(err, ErrNoArtifact) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want ErrNoArtifact saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}
