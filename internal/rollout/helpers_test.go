package rollout

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parentrag/parentrag/internal/index/vector"
	"github.com/parentrag/parentrag/internal/retrieval/bundle/bundletest"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// corpus is five documents on distinct topics; the airship document is
// long enough to make several parents that share the word "zeppelin".
func corpus() []hierarchy.Document {
	return []hierarchy.Document{
		{ID: "rollout.md", Title: "Rollout", Text: "# Rollout\n\n" +
			"A new index revision is built beside the serving one. Query pods keep reading the old revision.\n\n" +
			"Verification compares row counts with the manifest and resolves sample children to parents.\n\n" +
			"Promotion moves the alias once the rolling update of the retriever deployment is complete."},
		{ID: "garden.md", Title: "Garden", Text: "# Garden\n\n" +
			"Tomatoes need full sun, deep watering and a stake to climb. Basil grows well beside tomatoes.\n\n" +
			"Compost improves the soil; mulch keeps moisture in during the dry summer weeks."},
		{ID: "sailing.txt", Text: "Sailing upwind means tacking: the boat zigzags across the wind. " +
			"A reef in the mainsail reduces heeling in strong gusts. The harbor master assigns moorings."},
		{ID: "bread.md", Title: "Bread", Text: "# Bread\n\n" +
			"A sourdough starter is fed with rye flour and water every morning until it bubbles.\n\n" +
			"The dough proves overnight in a banneton before it is baked in a cast iron pot."},
		{ID: "airship.md", Title: "Airships", Text: "# Airships\n\n" +
			"Zeppelin hulls were rigid frames of duralumin girders covered with doped cotton fabric.\n\n" +
			"Zeppelin crews steered by elevator wheels and rudder wheels in the forward gondola.\n\n" +
			"Zeppelin gas cells held hydrogen, which made every landing in a thunderstorm a danger."},
	}
}

// without returns docs less the document with id.
func without(docs []hierarchy.Document, id string) []hierarchy.Document {
	return slices.DeleteFunc(slices.Clone(docs), func(d hierarchy.Document) bool { return d.ID == id })
}

// build indexes docs in memory, as a revision build does.
func build(t *testing.T, docs []hierarchy.Document) *indexer.Index {
	t.Helper()
	return bundletest.Build(t, docs)
}

// parentIDs lists the ids of parents.
func parentIDs(parents []hierarchy.Parent) []string {
	ids := make([]string, len(parents))
	for i, p := range parents {
		ids[i] = p.ID
	}
	return ids
}

// failingEmbedder embeds like its inner embedder, except queries that
// contain fail, which fail.
type failingEmbedder struct {
	embed.Embedder
	fail string
}

// errEmbedding is the error of failingEmbedder.
var errEmbedding = errors.New("embedding endpoint unavailable")

// EmbedQuery fails for queries containing e.fail.
func (e failingEmbedder) EmbedQuery(ctx context.Context, text string) (vector.Vector, error) {
	if strings.Contains(text, e.fail) {
		return vector.Vector{}, errEmbedding
	}
	return e.Embedder.EmbedQuery(ctx, text)
}

// recordingEmbedder logs "name: query" for every query it embeds, into a
// log shared by several recorders, so the order across them shows.
type recordingEmbedder struct {
	embed.Embedder
	name string
	log  *queryLog
}

// queryLog is a log shared by recordingEmbedders.
type queryLog struct {
	mu      sync.Mutex
	entries []string
}

// EmbedQuery records the query, then embeds it.
func (e recordingEmbedder) EmbedQuery(ctx context.Context, text string) (vector.Vector, error) {
	e.log.mu.Lock()
	e.log.entries = append(e.log.entries, e.name+": "+text)
	e.log.mu.Unlock()
	return e.Embedder.EmbedQuery(ctx, text)
}

// withEmbedder returns a copy of r embedding queries with e.
func withEmbedder(r *retrieve.Retriever, e embed.Embedder) *retrieve.Retriever {
	c := *r
	c.Embedder = e
	return &c
}
