package indexer

import (
	"context"
	"fmt"

	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/segment"
)

// writeSegments is the second pass of a build into a segment (see
// Options.OnSegment): each unit, in document order, joins the segment,
// its parents with their contexts' analyses and each parent's children
// after it, and the segment goes to OnSegment at the end. names names the
// ids the first pass counted the units' analyses by, which the spill
// gives back as they are (every context term kept, so that a segment
// depends on its documents alone). It checks ctx before each unit.
func (ix *Index) writeSegments(ctx context.Context, source *unitSource, units []*Unit, names []string, opts Options) error {
	contexts := opts.ContextWeight > 0
	if source.spill != nil {
		source.spill.counted = true // names names the counted ids
	}
	w := segment.NewWriter(contexts).NamingIDs(names)
	var scratch embed.AnalysisScratch
	for ui := range source.docs {
		if err := ctx.Err(); err != nil {
			return err
		}
		u, err := source.take(ui, units, &scratch)
		if err != nil {
			return err
		}
		if err := handParents(u, opts.OnParent); err != nil {
			return err
		}
		if err := addUnit(w, u, contexts); err != nil {
			return fmt.Errorf("document %s: %w", source.docs[ui].ID, err)
		}
		u.ChildTerms, u.ContextTerms = nil, nil
	}
	if err := finishSegment(w, opts.OnSegment); err != nil {
		return err
	}
	opts.OnProgress(Progress{Stage: StageEmbed, Done: ix.ChildCount, Total: ix.ChildCount})
	return nil
}

// finishSegment hands w's bytes to onSegment.
func finishSegment(w *segment.Writer, onSegment func([]byte) error) error {
	data, err := w.Bytes()
	if err != nil {
		return err
	}
	if err := onSegment(data); err != nil {
		return fmt.Errorf("writing segment: %w", err)
	}
	return nil
}

// addUnit adds u's parents to w, in order, each with its context's
// analysis (when contexts) and then its children, in order.
func addUnit(w *segment.Writer, u *Unit, contexts bool) error {
	byParent := make([][]int, len(u.Parents))
	parents := u.parentIndex()
	for i, c := range u.Children {
		p, ok := parents[c.ParentID]
		if !ok {
			return fmt.Errorf("child %s points to missing parent %s", c.ID, c.ParentID)
		}
		byParent[p] = append(byParent[p], i)
	}
	for p := range u.Parents {
		var context embed.Analysis
		if contexts {
			context = u.ContextTerms[p]
		}
		if err := w.AddParent(u.Parents[p].ID, u.Parents[p].DocID, context); err != nil {
			return err
		}
		for _, i := range byParent[p] {
			if err := w.AddChild(u.Children[i].ID, u.Children[i].Ordinal, u.ChildTerms[i]); err != nil {
				return err
			}
		}
	}
	return nil
}
