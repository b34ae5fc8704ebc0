package v1alpha1

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/parentrag/parentrag/internal/index/postgres/pgname"
)

// Defaults of a Corpus.
const (
	DefaultRetainRevisions = 2
	DefaultK1              = 0.9
	DefaultB               = 0.4
	DefaultContextWeight   = 0.8
	// DefaultStartDeadlineSeconds bounds how long an indexing Job's pod
	// may take to start.
	DefaultStartDeadlineSeconds = 600
)

// GetRetainRevisions returns how many revisions to keep, 2 when unset.
func (c *Corpus) GetRetainRevisions() int {
	if c.Spec.RetainRevisions <= 0 {
		return DefaultRetainRevisions
	}
	return c.Spec.RetainRevisions
}

// BuiltinParams returns the builtin embedder's k1, b and context weight
// with defaults applied. It fails on values the schema lets through but
// that are out of range.
func (e *Embedding) BuiltinParams() (k1, b, contextWeight float64, err error) {
	var in BuiltinEmbedding
	if e != nil && e.Builtin != nil {
		in = *e.Builtin
	}
	if k1, err = parseDecimal("k1", in.K1, DefaultK1); err != nil {
		return
	}
	if b, err = parseDecimal("b", in.B, DefaultB); err != nil {
		return
	}
	if b > 1 {
		return 0, 0, 0, fmt.Errorf("embedding.builtin.b %q must be between 0 and 1", in.B)
	}
	contextWeight, err = parseDecimal("contextWeight", in.ContextWeight, DefaultContextWeight)
	return
}

// IsOpenAI reports whether children are embedded through an OpenAI-
// compatible endpoint.
func (e *Embedding) IsOpenAI() bool { return e != nil && e.OpenAI != nil }

// parseDecimal parses a non-negative decimal field, def when empty.
func parseDecimal(field, s string, def float64) (float64, error) {
	if s == "" {
		return def, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("embedding.builtin.%s %q is not a non-negative decimal", field, s)
	}
	return v, nil
}

// ShortRevision is the 8-character prefix of a revision used in names.
func ShortRevision(revision string) string {
	if len(revision) > 8 {
		return revision[:8]
	}
	return revision
}

// RevisionObjectName is the name of the objects that hold a revision of
// the Corpus: "<corpus>-<rev8>".
func (c *Corpus) RevisionObjectName(revision string) string {
	return c.Name + "-" + ShortRevision(revision)
}

// SharedShardPrefix begins the name of every ConfigMap shard the Corpus's
// revisions share (the shards of a segment, named by their content):
// "<corpus>-shard", which no revision's objects, named by hex digits, can
// take.
func (c *Corpus) SharedShardPrefix() string {
	return c.Name + "-shard"
}

// milvusName turns Kubernetes names into a Milvus identifier: letters,
// digits and underscores, starting with a letter or an underscore.
func milvusName(parts ...string) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('_')
		}
		for _, r := range p {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
				b.WriteRune(r)
			default:
				b.WriteByte('_')
			}
		}
	}
	name := b.String()
	if name != "" && name[0] >= '0' && name[0] <= '9' {
		name = "_" + name
	}
	return name
}

// MilvusAlias is the alias that points at the serving revision's
// collection: "<namespace>_<corpus>".
func (c *Corpus) MilvusAlias() string { return milvusName(c.Namespace, c.Name) }

// MilvusCollection is the collection of one revision:
// "<namespace>_<corpus>_<revision>".
func (c *Corpus) MilvusCollection(revision string) string {
	return milvusName(c.Namespace, c.Name, revision)
}

// UsesMilvus reports whether children are indexed in Milvus.
func (c *Corpus) UsesMilvus() bool {
	return c.Spec.VectorStore != nil && c.Spec.VectorStore.Milvus != nil
}

// PostgresView is the view that reads the serving revision's table:
// "<namespace>_<corpus>", lower case, cut with a hash past 63 bytes.
func (c *Corpus) PostgresView() string { return pgname.Identifier(c.Namespace, c.Name) }

// PostgresTable is the table of one revision:
// "<namespace>_<corpus>_<revision>", lower case, cut with a hash past 63
// bytes.
func (c *Corpus) PostgresTable(revision string) string {
	return pgname.Identifier(c.Namespace, c.Name, revision)
}

// UsesPostgres reports whether children are indexed in PostgreSQL.
func (c *Corpus) UsesPostgres() bool {
	return c.Spec.VectorStore != nil && c.Spec.VectorStore.Postgres != nil
}

// UsesExternalIndex reports whether children live in a database outside
// the revision (Milvus or PostgreSQL).
func (c *Corpus) UsesExternalIndex() bool { return c.UsesMilvus() || c.UsesPostgres() }

// UsesSegments reports whether the children are kept as segments of
// counts (vectorStore.embedded.layout Segments).
func (c *Corpus) UsesSegments() bool {
	v := c.Spec.VectorStore
	return v != nil && v.Embedded != nil && v.Embedded.Layout == LayoutSegments
}

// GetDeletionPolicy returns the deletion policy, Delete when unset.
func (c *Corpus) GetDeletionPolicy() DeletionPolicy {
	if c.Spec.DeletionPolicy == "" {
		return DeletionDelete
	}
	return c.Spec.DeletionPolicy
}

// GetPromotion returns the promotion policy, Auto when unset.
func (c *Corpus) GetPromotion() Promotion {
	if c.Spec.Rollout == nil || c.Spec.Rollout.Promotion == "" {
		return PromotionAuto
	}
	return c.Spec.Rollout.Promotion
}

// PinnedRevision returns the pinned revision: spec.rollout.pinnedRevision,
// else the pin annotation, "" when neither is set.
func (c *Corpus) PinnedRevision() string {
	if c.Spec.Rollout != nil && c.Spec.Rollout.PinnedRevision != "" {
		return c.Spec.Rollout.PinnedRevision
	}
	return c.Annotations[PinAnnotation]
}

// QualityGate returns the quality gate, nil when none is set.
func (c *Corpus) QualityGate() *QualityGate {
	if c.Spec.Rollout == nil {
		return nil
	}
	return c.Spec.Rollout.QualityGate
}

// RevisionFor returns the revision a Retriever on track serves: the active
// one, or on the Candidate track a candidate that passed verification,
// when there is one. It is nil before the first revision is active.
func (c *Corpus) RevisionFor(track Track) *RevisionStatus {
	cand := c.Status.Candidate
	if track == TrackCandidate && cand != nil && cand.Verification != nil && cand.Verification.Result == CheckPassed {
		return cand
	}
	return c.Status.ActiveRevision
}

// UsesClaims reports whether revisions are kept on PersistentVolumeClaims.
func (c *Corpus) UsesClaims() bool {
	return c.Spec.ParentStore != nil && c.Spec.ParentStore.PersistentVolumeClaim != nil
}

// GetIndexingMode returns where revisions are built: the spec's choice,
// else Job with a persistentVolumeClaim parent store and InProcess
// otherwise.
func (c *Corpus) GetIndexingMode() IndexingMode {
	if c.Spec.Indexing != nil && c.Spec.Indexing.Mode != "" {
		return c.Spec.Indexing.Mode
	}
	if c.UsesClaims() {
		return IndexingJob
	}
	return IndexingInProcess
}

// StartDeadline is how long an indexing Job's pod may take to start
// before the build fails: indexing.startDeadlineSeconds, else
// DefaultStartDeadlineSeconds.
func (c *Corpus) StartDeadline() time.Duration {
	secs := int64(DefaultStartDeadlineSeconds)
	if c.Spec.Indexing != nil && c.Spec.Indexing.StartDeadlineSeconds != nil {
		secs = *c.Spec.Indexing.StartDeadlineSeconds
	}
	return time.Duration(secs) * time.Second
}
