package sourceset

import (
	"cmp"
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/document"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/telemetry"
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
// returned. With a ConfigMapCache and only keepable sources, the set read
// before from the same spec and ConfigMap versions is returned as it is
// (shared: it must not be changed), and a set read anew is kept. While
// tracing is on, the read is a span of the read_sources stage, and each
// source read anew one of the extract stage below it.
func (r *Reader) Read(ctx context.Context, sources []v1alpha1.Source) (*Set, error) {
	ctx, span := telemetry.Start(ctx, telemetry.SpanReadSources)
	set, err := r.read(ctx, sources, span)
	endRead(span, len(sources), set, err)
	return set, err
}

// read is Read in span, which it tells when the set was kept from before.
func (r *Reader) read(ctx context.Context, sources []v1alpha1.Source, span trace.Span) (*Set, error) {
	fetched, err := r.fetchConfigMaps(ctx, sources)
	if err != nil {
		return nil, err
	}
	keep := r.ConfigMaps != nil && keepable(sources)
	var key setKey
	if keep {
		if key, err = keyOf(r.Namespace, sources, fetched); err != nil {
			return nil, err
		}
		if set, ok := r.ConfigMaps.keptSet(key); ok {
			if span.IsRecording() {
				span.SetAttributes(attribute.Bool("parentrag.kept", true))
			}
			return set, nil
		}
	}
	set := newSet()
	for i, src := range sources {
		if err := r.extract(ctx, src, fetched[i], set); err != nil {
			return nil, err
		}
	}
	if keep {
		set.Digest() // computed before the set is shared
		r.ConfigMaps.keepSet(key, set)
	}
	return set, nil
}

// readsConfigMaps reports whether src is read from ConfigMaps: a
// ConfigMap or selector source without inline documents.
func readsConfigMaps(src v1alpha1.Source) bool {
	return len(src.Inline) == 0 && (src.ConfigMap != nil || src.Selector != nil)
}

// readsRemote reports whether addOne reads src by its URL or its
// artifact: it is neither inline nor read from ConfigMaps.
func readsRemote(src v1alpha1.Source) bool {
	return len(src.Inline) == 0 && !readsConfigMaps(src) && (src.URL != nil || src.SourceRef != nil)
}

// fetchConfigMaps fetches the ConfigMaps of every source readsConfigMaps
// takes, by the source's index.
func (r *Reader) fetchConfigMaps(ctx context.Context, sources []v1alpha1.Source) ([]fetchedSource, error) {
	fetched := make([]fetchedSource, len(sources))
	for i, src := range sources {
		if !readsConfigMaps(src) {
			continue
		}
		f, err := r.fetchConfigMapSource(ctx, src)
		if err != nil {
			return nil, err
		}
		fetched[i] = f
	}
	return fetched, nil
}

// addOne adds one source's documents to set, from what fetchConfigMaps
// fetched for it or by reading its URL or artifact.
func (r *Reader) addOne(ctx context.Context, src v1alpha1.Source, fetched fetchedSource, set *Set) error {
	switch {
	case len(src.Inline) > 0:
		addInline(set, src)
	case readsConfigMaps(src):
		addConfigMapSource(set, src, fetched)
	case src.URL != nil:
		return r.readURL(ctx, src, set)
	case src.SourceRef != nil:
		return r.readSourceRef(ctx, src, set)
	}
	return nil
}

// addInline adds an inline source's documents to set. A document whose id
// ends in .html (or .htm, .xhtml) or whose text starts as an HTML page
// does is converted from HTML (its title, when it gives none, is the
// page's); any other text is kept as it is.
func addInline(set *Set, src v1alpha1.Source) {
	for _, d := range src.Inline {
		doc := hierarchy.Document{ID: d.ID, Title: d.Title, Text: d.Text}
		if document.Detect(d.ID, []byte(d.Text)) == document.HTML {
			converted, err := document.Read(document.HTML, d.ID, d.ID, []byte(d.Text))
			if err != nil {
				set.fail(src.Name, d.ID, document.Reason(err))
				continue
			}
			doc.Text, doc.Metadata = converted[0].Text, converted[0].Metadata
			doc.Title = cmp.Or(d.Title, converted[0].Title)
		}
		set.add(src.Name, doc)
	}
}
