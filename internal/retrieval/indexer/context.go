package indexer

import (
	"context"
	"fmt"
	"strings"

	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/vector"
)

// contexts adds weighted context vectors (document title, the opening
// section of a document split into sections, heading path and parent
// text) to child vectors. Each parent's context is embedded once; children
// arrive in document order, so only the parents of the current batch are
// cached.
type contexts struct {
	weight  float32
	embed   embed.Embedder
	parents map[string]*hierarchy.Parent
	leads   map[string]lead // document id -> its opening section
	cache   map[string]vector.Vector
}

// newContexts returns nil, which adds nothing, when weight is not positive.
func newContexts(docs []hierarchy.Document, parents []hierarchy.Parent, e embed.Embedder, weight float32) *contexts {
	if weight <= 0 {
		return nil
	}
	c := &contexts{weight: weight, embed: e, parents: make(map[string]*hierarchy.Parent, len(parents)),
		leads: leadsOf(docs, parents), cache: map[string]vector.Vector{}}
	for i := range parents {
		c.parents[parents[i].ID] = &parents[i]
	}
	return c
}

// contextText is what a child's context says: its document's title, the
// document's opening section unless the parent starts inside it, its
// parent's heading path, then its parent's text.
func contextText(p *hierarchy.Parent, l lead) string {
	var parts []string
	if p.Title != "" {
		parts = append(parts, p.Title)
	}
	if l.text != "" && p.Start >= l.end {
		parts = append(parts, l.text)
	}
	if len(p.HeadingPath) > 0 {
		parts = append(parts, strings.Join(p.HeadingPath, HeadingSeparator))
	}
	return strings.Join(append(parts, p.Text), "\n\n")
}

// HeadingSeparator joins the headings of a heading path in text.
const HeadingSeparator = " > "

// add replaces vecs[i] with vecs[i] + weight·context(children[i]).
func (c *contexts) add(ctx context.Context, children []hierarchy.Child, vecs []vector.Vector) error {
	if c == nil {
		return nil
	}
	if err := c.embedMissing(ctx, children); err != nil {
		return err
	}
	for i, ch := range children {
		vecs[i] = vecs[i].AddScaled(c.cache[ch.ParentID], c.weight)
	}
	return nil
}

// embedMissing embeds, in one call, the contexts of the batch's parents
// that are not cached, after dropping the cache of earlier batches.
func (c *contexts) embedMissing(ctx context.Context, children []hierarchy.Child) error {
	var ids, texts []string
	seen := map[string]bool{}
	for _, ch := range children {
		if _, ok := c.cache[ch.ParentID]; ok || seen[ch.ParentID] {
			continue
		}
		p, ok := c.parents[ch.ParentID]
		if !ok {
			return fmt.Errorf("child %s points to missing parent %s", ch.ID, ch.ParentID)
		}
		seen[ch.ParentID] = true
		ids, texts = append(ids, p.ID), append(texts, contextText(p, c.leads[p.DocID]))
	}
	if len(ids) == 0 {
		return nil
	}
	vecs, err := c.embed.EmbedDocuments(ctx, texts)
	if err != nil {
		return fmt.Errorf("embedding child contexts: %w", err)
	}
	kept := map[string]vector.Vector{}
	for _, ch := range children {
		if v, ok := c.cache[ch.ParentID]; ok {
			kept[ch.ParentID] = v
		}
	}
	for i, id := range ids {
		kept[id] = vecs[i]
	}
	c.cache = kept
	return nil
}
