// Package artifact reads what a Flux source object (GitRepository,
// OCIRepository, Bucket, ExternalArtifact of source.toolkit.fluxcd.io/v1)
// says about its artifact, from the object as unstructured data, so that
// parentrag depends on no Flux module and runs without Flux installed.
package artifact

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API of Flux's source objects.
var GroupVersion = schema.GroupVersion{Group: "source.toolkit.fluxcd.io", Version: "v1"}

// Artifact is a source object's status.artifact: where the tarball is
// served, the digest it must have and the revision it was made from.
type Artifact struct {
	// URL is the HTTP address of the tarball.
	URL string
	// Digest is "<algorithm>:<hex>" of the tarball, such as "sha256:...".
	Digest string
	// Revision names what the artifact was made from, such as
	// "main@sha1:<commit>" for a GitRepository.
	Revision string
}

// ErrNoArtifact is returned for a source object that has no artifact yet.
var ErrNoArtifact = errors.New("no artifact yet")

// Of reads the artifact of a source object. An object without one gives
// ErrNoArtifact, wrapped with what its Ready condition says (such as a
// failed clone), so a person sees why; an artifact without a url or a
// digest is an error too.
func Of(obj *unstructured.Unstructured) (Artifact, error) {
	a, found, err := unstructured.NestedMap(obj.Object, "status", "artifact")
	if err != nil {
		return Artifact{}, fmt.Errorf("status.artifact: %w", err)
	}
	if !found {
		return Artifact{}, fmt.Errorf("%w%s", ErrNoArtifact, readyNote(obj))
	}
	field := func(name string) string { s, _ := a[name].(string); return s }
	out := Artifact{URL: field("url"), Digest: field("digest"), Revision: field("revision")}
	if out.URL == "" || out.Digest == "" {
		return Artifact{}, fmt.Errorf("%w: status.artifact has no url or no digest", ErrNoArtifact)
	}
	return out, nil
}

// readyNote is "; Ready=False: <message>" from the object's Ready
// condition, or "" when it has none.
func readyNote(obj *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] != "Ready" {
			continue
		}
		status, _ := m["status"].(string)
		msg, _ := m["message"].(string)
		return "; Ready=" + status + ": " + strings.TrimSpace(msg)
	}
	return ""
}
