package controllers

import (
	"context"
	"fmt"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// memoryIndexes is a database of child indexes and stable names held in
// memory behind the externalIndex seam, answering as Milvus and PostgreSQL
// do: pointing at a missing index fails, dropping an index a stable name
// reads fails, and removing what is missing succeeds. failing makes every
// operation on an index fail with its error, as a database out of reach
// does.
type memoryIndexes struct {
	indexes map[string]bool
	names   map[string]string
	failing map[string]error
	// calls lists the operations asked, in order: "point NAME INDEX",
	// "unpoint NAME", "drop INDEX".
	calls []string
}

// newMemoryIndexes returns an empty database.
func newMemoryIndexes() *memoryIndexes {
	return &memoryIndexes{indexes: map[string]bool{}, names: map[string]string{}, failing: map[string]error{}}
}

// point makes the stable name read the index.
func (m *memoryIndexes) point(_ context.Context, _ *v1alpha1.Corpus, name string, index childIndex) error {
	m.calls = append(m.calls, "point "+name+" "+index.name)
	if err := m.failing[index.name]; err != nil {
		return err
	}
	if !m.indexes[index.name] {
		return fmt.Errorf("index %s does not exist", index.name)
	}
	m.names[name] = index.name
	return nil
}

// unpoint removes the stable name.
func (m *memoryIndexes) unpoint(_ context.Context, _ *v1alpha1.Corpus, name string, index childIndex) error {
	m.calls = append(m.calls, "unpoint "+name)
	if err := m.failing[index.name]; err != nil {
		return err
	}
	delete(m.names, name)
	return nil
}

// drop drops the index, which no stable name may read.
func (m *memoryIndexes) drop(_ context.Context, _ *v1alpha1.Corpus, index childIndex) error {
	m.calls = append(m.calls, "drop "+index.name)
	if err := m.failing[index.name]; err != nil {
		return err
	}
	for name, read := range m.names {
		if read == index.name {
			return fmt.Errorf("index %s: %s reads it", index.name, name)
		}
	}
	delete(m.indexes, index.name)
	return nil
}
