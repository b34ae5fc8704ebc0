package sourceset

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// Reader reads the sources of one namespace.
type Reader struct {
	// Client reads ConfigMaps.
	Client client.Reader
	// ConfigMaps, when set, keeps the ConfigMaps read, so that those
	// unchanged since are not read whole again.
	ConfigMaps *ConfigMapCache
	// Metadata reads the metadata of ConfigMaps, to compare with what
	// ConfigMaps keeps: an informer, which costs no request and whose
	// changes bring the Corpus back, or the Client when nil.
	Metadata client.Reader
	// Namespace of the Corpus.
	Namespace string
	// Fetchers read URL sources and artifacts; a fresh set (no caching)
	// when nil.
	Fetchers *Fetchers
	// NoCrossNamespaceRefs refuses a sourceRef to another namespace, as
	// Flux's --no-cross-namespace-refs does.
	NoCrossNamespaceRefs bool
}

// Read reads every source in order. A source or document that cannot be
// read is reported in the set; only an error talking to the API server is
// returned.
func (r *Reader) Read(ctx context.Context, sources []v1alpha1.Source) (*Set, error) {
	if r.ConfigMaps != nil && keepable(sources) {
		return r.readKept(ctx, sources)
	}
	set := newSet()
	for _, src := range sources {
		if err := r.readOne(ctx, src, set); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// readOne reads one source into set.
func (r *Reader) readOne(ctx context.Context, src v1alpha1.Source, set *Set) error {
	switch {
	case len(src.Inline) > 0:
		addInline(set, src)
	case src.ConfigMap != nil || src.Selector != nil:
		fetched, err := r.fetchConfigMapSource(ctx, src)
		if err != nil {
			return err
		}
		addConfigMapSource(set, src, fetched)
	case src.URL != nil:
		return r.readURL(ctx, src, set)
	case src.SourceRef != nil:
		return r.readSourceRef(ctx, src, set)
	}
	return nil
}

// addInline adds an inline source's documents to set.
func addInline(set *Set, src v1alpha1.Source) {
	for _, d := range src.Inline {
		set.add(src.Name, hierarchy.Document{ID: d.ID, Title: d.Title, Text: d.Text})
	}
}
