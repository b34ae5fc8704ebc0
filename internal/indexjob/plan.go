// Package indexjob is the contract between the operator and an indexing
// Job: the plan the operator writes (what to build), and the progress,
// result or failure the Job writes back (what happened). The Job's side,
// Run, builds the revision bundle into a directory on the revision's
// volume, verifies it and, when asked, measures the quality gate.
package indexjob

import (
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
)

// Keys of the plan and status ConfigMaps.
const (
	PlanKey     = "plan.json"
	ProgressKey = "progress.json"
	ResultKey   = "result.json"
	FailureKey  = "failure.json"
)

// Plan is what an indexing Job builds: one revision of one Corpus, from
// exactly the sources the operator read (selectors expanded to the
// ConfigMaps and keys they matched).
type Plan struct {
	Namespace      string                      `json:"namespace"`
	Corpus         string                      `json:"corpus"`
	Revision       string                      `json:"revision"`
	Policy         v1alpha1.ChunkingPolicySpec `json:"policy"`
	PolicyRevision string                      `json:"policyRevision"`
	Sources        []v1alpha1.Source           `json:"sources"`
	SourceDigest   string                      `json:"sourceDigest"`
	Embedder       bundle.Embedder             `json:"embedder"`
	VectorStore    bundle.VectorStoreRef       `json:"vectorStore"`
	// MilvusShards of a new collection, with a Milvus vector store.
	MilvusShards int `json:"milvusShards,omitempty"`
	// StatusConfigMap is where the Job reports.
	StatusConfigMap string `json:"statusConfigMap"`
	// Gate, when set, is measured against the active revision's bundle.
	Gate *GatePlan `json:"gate,omitempty"`
}

// GatePlan is a quality gate for the Job to measure.
type GatePlan struct {
	// Golden holds the golden queries, as the ConfigMap key does.
	Golden     string  `json:"golden"`
	MinHitRate float64 `json:"minHitRate"`
	// MaxDrop < 0 means no limit.
	MaxDrop    float64 `json:"maxDrop"`
	MinQueries int     `json:"minQueries"`
	MaxParents int     `json:"maxParents"`
	// ActiveRevision is the revision compared against, "" for none.
	ActiveRevision string `json:"activeRevision,omitempty"`
	// Digest identifies the gate settings, queries and active revision.
	Digest string `json:"digest"`
}

// Progress is a build in flight.
type Progress struct {
	Stage     string    `json:"stage"`
	Done      int       `json:"done"`
	Total     int       `json:"total"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Result is a build that succeeded: the bundle's manifest, what could not
// be read, and the checks it passed or failed.
type Result struct {
	Manifest         bundle.Manifest                `json:"manifest"`
	SourceErrors     []v1alpha1.SourceError         `json:"sourceErrors,omitempty"`
	SourceErrorCount int                            `json:"sourceErrorCount,omitempty"`
	Verification     *v1alpha1.VerificationStatus   `json:"verification"`
	QualityGate      *v1alpha1.QualityGateStatus    `json:"qualityGate,omitempty"`
	EmbeddingCache   *v1alpha1.EmbeddingCacheStatus `json:"embeddingCache,omitempty"`
	UnitCache        *v1alpha1.UnitCacheStatus      `json:"unitCache,omitempty"`
}

// Failure is a build that failed, with the document at fault when one was.
type Failure struct {
	Message  string `json:"message"`
	Document string `json:"document,omitempty"`
}

// ReadPlan decodes the plan from its ConfigMap.
func ReadPlan(cm *corev1.ConfigMap) (*Plan, error) {
	var p Plan
	if err := decode(cm, PlanKey, &p); err != nil {
		return nil, err
	}
	if p.Revision == "" || p.StatusConfigMap == "" {
		return nil, fmt.Errorf("ConfigMap %s holds an incomplete plan: no revision or status ConfigMap", cm.Name)
	}
	return &p, nil
}

// ReadStatus decodes what a Job reported; each part is nil when absent.
func ReadStatus(cm *corev1.ConfigMap) (*Progress, *Result, *Failure, error) {
	pr, err := DecodeOptional[Progress](cm, ProgressKey)
	if err != nil {
		return nil, nil, nil, err
	}
	res, err := DecodeOptional[Result](cm, ResultKey)
	if err != nil {
		return nil, nil, nil, err
	}
	f, err := DecodeOptional[Failure](cm, FailureKey)
	return pr, res, f, err
}

// DecodeOptional decodes a JSON key of a ConfigMap, nil when it is absent.
func DecodeOptional[T any](cm *corev1.ConfigMap, key string) (*T, error) {
	if cm.Data[key] == "" {
		return nil, nil
	}
	var v T
	if err := decode(cm, key, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// decode unmarshals one key of a ConfigMap.
func decode(cm *corev1.ConfigMap, key string, v any) error {
	if err := json.Unmarshal([]byte(cm.Data[key]), v); err != nil {
		return fmt.Errorf("ConfigMap %s key %s: %w", cm.Name, key, err)
	}
	return nil
}

// Encode marshals v for a ConfigMap key.
func Encode(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
