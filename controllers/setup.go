package controllers

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/source/remote"
)

// NewScheme returns a scheme with the Kubernetes kinds and parentrag's.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	return s
}

// Options configure the controllers.
type Options struct {
	// Image runs query servers and indexing Jobs when a Retriever or a
	// Corpus names none: the operator's own image (required).
	Image string
	// ConcurrentBuilds bounds how many Corpora index at once.
	ConcurrentBuilds int
	// EmbeddingCacheDir holds the Corpora's embedding caches.
	EmbeddingCacheDir string
	// NoCrossNamespaceRefs refuses a Corpus's sourceRef to a Flux source
	// object in another namespace.
	NoCrossNamespaceRefs bool
	// RemoteMemory bounds, in bytes, the text of remote documents the
	// operator holds at once (default DefaultRemoteMemory).
	RemoteMemory int64
	// SecretGoneGrace is how long a deleted Corpus waits for its vector
	// store's Secret to come back (default DefaultSecretGoneGrace).
	SecretGoneGrace time.Duration
}

// DefaultRemoteMemory is how much text of remote documents the operator
// holds at once, for every Corpus together, by default.
const DefaultRemoteMemory = 256 << 20

// Setup registers the ChunkingPolicy, Corpus and Retriever controllers
// with mgr, and the series of their objects' conditions on the operator's
// /metrics.
func Setup(mgr ctrl.Manager, o Options) error {
	if o.Image == "" {
		return fmt.Errorf("no image for query pods and indexing Jobs: the operator's own image is required")
	}
	policy := &ChunkingPolicyReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("chunkingpolicy-controller")}
	if err := policy.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the ChunkingPolicy controller: %w", err)
	}
	corpus := &CorpusReconciler{Client: mgr.GetClient(), Image: o.Image, APIReader: mgr.GetAPIReader(), MetadataCache: mgr.GetCache(), Recorder: mgr.GetEventRecorder("corpus-controller"), MaxConcurrentBuilds: o.ConcurrentBuilds, EmbeddingCacheDir: o.EmbeddingCacheDir, NoCrossNamespaceRefs: o.NoCrossNamespaceRefs, SecretGoneGrace: o.SecretGoneGrace}
	if o.RemoteMemory > 0 {
		corpus.RemoteMemory = remote.NewMemory(o.RemoteMemory)
	}
	if err := corpus.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the Corpus controller: %w", err)
	}
	retriever := &RetrieverReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("retriever-controller"), DefaultImage: o.Image}
	if err := retriever.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the Retriever controller: %w", err)
	}
	if err := registerStatusMetrics(mgr); err != nil {
		return fmt.Errorf("registering the status metrics: %w", err)
	}
	return nil
}
