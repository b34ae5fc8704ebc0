package parentstore

import (
	"context"
	"fmt"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// Memory is a Reader over parents held in memory, for evaluation and tests.
type Memory struct {
	byID map[string]hierarchy.Parent
}

// NewMemory indexes parents by id; a later parent replaces an earlier one
// with the same id.
func NewMemory(parents []hierarchy.Parent) *Memory {
	m := &Memory{byID: make(map[string]hierarchy.Parent, len(parents))}
	for _, p := range parents {
		m.byID[p.ID] = p
	}
	return m
}

// Get implements Reader.
func (m *Memory) Get(_ context.Context, ids []string) ([]hierarchy.Parent, error) {
	out := make([]hierarchy.Parent, len(ids))
	for i, id := range ids {
		p, ok := m.byID[id]
		if !ok {
			return nil, fmt.Errorf("parent %s: %w", id, ErrNotFound)
		}
		out[i] = p
	}
	return out, nil
}
