package sourceset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/source/artifact"
	"github.com/parentrag/parentrag/internal/source/remote"
)

// ArtifactRead is the Flux artifact one sourceRef source read.
type ArtifactRead struct {
	// Source is the Corpus's source name.
	Source string
	// Object is "<Kind> <namespace>/<name>".
	Object string
	// Revision is the artifact's revision, such as "main@sha1:<commit>".
	Revision string
	// Digest is the artifact's digest, which the download matched.
	Digest string
}

// Blocked says why a sourceRef source keeps the Corpus from building: a
// reason of v1alpha1's, a message naming the object, and whether only a
// person can unblock it (Stalled) or it is waited for.
type Blocked struct {
	Source, Reason, Message string
	Stalled                 bool
}

// block records the first source that blocks the Corpus.
func (s *Set) block(b Blocked) {
	if s.Blocked == nil {
		s.Blocked = &b
	}
}

// SourceRevision names the revisions of the artifacts read: the one
// revision when one sourceRef source was read, else "<source>: <revision>"
// for each, comma-separated; "" without any.
func (s *Set) SourceRevision() string {
	if len(s.Artifacts) == 1 {
		return s.Artifacts[0].Revision
	}
	parts := make([]string, len(s.Artifacts))
	for i, a := range s.Artifacts {
		parts[i] = a.Source + ": " + a.Revision
	}
	return strings.Join(parts, ", ")
}

// readSourceRef reads a sourceRef source: the source object's artifact,
// downloaded and checked against its digest, and the files under path
// that include selects. A missing object or artifact blocks the Corpus
// (it waits); a cross-namespace reference the Reader refuses stalls it; a
// failed download is a source error, as for a url source. The documents
// count in the revision by their content, not by the artifact's digest,
// so a commit that changes only files the source does not read builds
// nothing new.
func (r *Reader) readSourceRef(ctx context.Context, src v1alpha1.Source, set *Set) error {
	ref := src.SourceRef
	key := client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}
	if key.Namespace == "" {
		key.Namespace = r.Namespace
	}
	object := fmt.Sprintf("%s %s", ref.Kind, key)
	if key.Namespace != r.Namespace && r.NoCrossNamespaceRefs {
		set.block(Blocked{Source: src.Name, Reason: v1alpha1.ReasonCrossNamespaceRefDenied, Stalled: true,
			Message: fmt.Sprintf("source %s: %s is in another namespace, and the operator refuses cross-namespace references (--no-cross-namespace-refs): use a source object in namespace %s", src.Name, object, r.Namespace)})
		return nil
	}
	a, blocked, err := r.artifactOf(ctx, ref.Kind, key)
	if err != nil {
		return fmt.Errorf("reading %s: %w", object, err)
	}
	if blocked != nil {
		blocked.Source, blocked.Message = src.Name, fmt.Sprintf("source %s: %s %s", src.Name, object, blocked.Message)
		set.block(*blocked)
		return nil
	}
	res, err := r.fetchers().readArtifact(ctx, r.Namespace+"/"+src.Name+"/"+object, src.Name, sourceRefSpec(ref, a))
	if errors.Is(err, remote.ErrMemoryBusy) {
		return fmt.Errorf("source %s: %w", src.Name, err)
	}
	if err != nil {
		set.fail(src.Name, "", err.Error())
		return nil
	}
	set.held = append(set.held, res)
	for _, e := range res.Errors {
		set.fail(src.Name, e.Document, e.Message)
	}
	for _, d := range res.Documents {
		set.add(src.Name, d)
	}
	set.Artifacts = append(set.Artifacts, ArtifactRead{Source: src.Name, Object: object, Revision: a.Revision, Digest: a.Digest})
	return nil
}

// artifactOf reads the artifact of a source object. A kind that is not
// installed, an object that does not exist and one without an artifact
// give a Blocked (with the reason and the end of a message); only other
// errors from the API server are returned.
func (r *Reader) artifactOf(ctx context.Context, kind v1alpha1.SourceRefKind, key client.ObjectKey) (artifact.Artifact, *Blocked, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(artifact.GroupVersion.WithKind(string(kind)))
	err := r.Client.Get(ctx, key, obj)
	switch {
	case meta.IsNoMatchError(err):
		return artifact.Artifact{}, &Blocked{Reason: v1alpha1.ReasonSourceNotFound,
			Message: fmt.Sprintf("cannot be read: the kind %s of %s is not installed in the cluster (install Flux's source-controller)", kind, artifact.GroupVersion)}, nil
	case apierrors.IsNotFound(err):
		return artifact.Artifact{}, &Blocked{Reason: v1alpha1.ReasonSourceNotFound, Message: "not found"}, nil
	case err != nil:
		return artifact.Artifact{}, nil, err
	}
	a, err := artifact.Of(obj)
	if errors.Is(err, artifact.ErrNoArtifact) {
		return artifact.Artifact{}, &Blocked{Reason: v1alpha1.ReasonSourceNotReady, Message: "is not ready: " + err.Error()}, nil
	}
	return a, nil, err
}

// sourceRefSpec is the download of an artifact: its url, its digest as the
// checksum, the limits of the source, and include and exclude moved under
// path.
func sourceRefSpec(ref *v1alpha1.SourceReference, a artifact.Artifact) remote.Spec {
	include := ref.Include
	if len(include) == 0 {
		include = remote.DefaultInclude()
	}
	spec := remote.Spec{URL: a.URL, Checksum: a.Digest, Include: under(ref.Path, include), Exclude: under(ref.Path, ref.Exclude), MaxFiles: ref.MaxFiles}
	if ref.MaxFileSize != nil {
		spec.MaxFileBytes = ref.MaxFileSize.Value()
	}
	if ref.MaxTotalSize != nil {
		spec.MaxTotalBytes = ref.MaxTotalSize.Value()
	}
	return spec
}

// under prefixes each glob with dir ("./docs/" and "docs" alike); the
// globs are unchanged when dir is the artifact's root.
func under(dir string, patterns []string) []string {
	dir = strings.Trim(path.Clean("/"+dir), "/")
	if dir == "" || len(patterns) == 0 {
		return patterns
	}
	out := make([]string, len(patterns))
	for i, p := range patterns {
		out[i] = dir + "/" + strings.TrimPrefix(strings.TrimPrefix(p, "./"), "/")
	}
	return out
}

// fetchers returns the Reader's Fetchers, or a fresh set.
func (r *Reader) fetchers() *Fetchers {
	if r.Fetchers == nil {
		return &Fetchers{}
	}
	return r.Fetchers
}

// artifactCache keeps the last read of each sourceRef source by a key
// that names the source, with the spec it was read with. An artifact is
// content-addressed by its digest (the spec's checksum), so an unchanged
// one costs no request at all; a new one replaces the old entry.
type artifactCache struct {
	mu      sync.Mutex
	entries map[string]artifactEntry
}

// artifactEntry is one stored read.
type artifactEntry struct {
	spec   string
	result remote.Result
}

// readArtifact returns the documents of the artifact spec names, from the
// cache when the same source last read the same digest with the same
// spec, else downloaded (and then stored in place of the last read).
func (f *Fetchers) readArtifact(ctx context.Context, key, name string, spec remote.Spec) (remote.Result, error) {
	specKey := artifactSpecKey(spec)
	if res, ok := f.artifacts.get(key, specKey); ok {
		return res, nil
	}
	timeout, err := f.timeout()
	if err != nil {
		return remote.Result{}, err
	}
	spec.Timeout, spec.Memory = timeout, f.Memory
	res, err := remote.Fetch(ctx, f.Client, name, spec)
	if err != nil {
		return remote.Result{}, err
	}
	f.artifacts.put(key, specKey, res)
	return res, nil
}

// ForgetSourceRefs drops the stored reads of a Corpus's sourceRef sources,
// for a Corpus that is gone.
func (f *Fetchers) ForgetSourceRefs(namespace string, sources []v1alpha1.Source) {
	f.artifacts.mu.Lock()
	var forgotten []remote.Result
	for k, e := range f.artifacts.entries {
		for _, src := range sources {
			if src.SourceRef != nil && strings.HasPrefix(k, namespace+"/"+src.Name+"/") {
				forgotten = append(forgotten, e.result)
				delete(f.artifacts.entries, k)
			}
		}
	}
	f.artifacts.mu.Unlock()
	for _, res := range forgotten {
		res.Unkeep()
	}
}

// get returns a copy of the stored read when its spec is specKey, for one
// more use (to be released), unless a Memory made the cache drop it.
func (c *artifactCache) get(key, specKey string) (remote.Result, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || e.spec != specKey {
		return remote.Result{}, false
	}
	return e.result.Reuse()
}

// put stores a read, replacing the source's previous one; a Memory that
// needs the room may make it drop the read.
func (c *artifactCache) put(key, specKey string, res remote.Result) {
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]artifactEntry{}
	}
	old, had := c.entries[key]
	c.entries[key] = artifactEntry{spec: specKey, result: res}
	c.mu.Unlock()
	if had {
		old.result.Unkeep()
	}
	res.KeepIn(func() { c.drop(key, res) })
}

// drop forgets the read of key if it still is res.
func (c *artifactCache) drop(key string, res remote.Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok && e.result.SameRead(res) {
		delete(c.entries, key)
	}
}

// artifactSpecKey identifies a download: every spec field that decides
// its documents (the url and the digest among them).
func artifactSpecKey(spec remote.Spec) string {
	spec.Header, spec.Timeout, spec.TempDir = nil, 0, ""
	b, _ := json.Marshal(spec)
	return string(b)
}
