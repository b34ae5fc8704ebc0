package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Aggregation names how child scores make a parent score.
// +kubebuilder:validation:Enum=Max;Mean;Sum
type Aggregation string

// Aggregations.
const (
	AggregationMax  Aggregation = "Max"
	AggregationMean Aggregation = "Mean"
	AggregationSum  Aggregation = "Sum"
)

// RetrieverService shapes the Service in front of the query pods.
type RetrieverService struct {
	// port the Service listens on; default 8080.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=8080
	// +optional
	Port int32 `json:"port,omitempty"`

	// type of the Service: ClusterIP (default), NodePort or LoadBalancer.
	// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
	// +kubebuilder:default=ClusterIP
	// +optional
	Type corev1.ServiceType `json:"type,omitempty"`
}

// Track chooses which revision of its Corpus a Retriever serves.
// +kubebuilder:validation:Enum=Active;Candidate
type Track string

// Tracks.
const (
	// TrackActive serves the Corpus's active revision (the default).
	TrackActive Track = "Active"
	// TrackCandidate serves the candidate revision as a preview while it
	// waits for promotion, and the active revision when there is none.
	TrackCandidate Track = "Candidate"
)

// AuthMode names how the query server authenticates its callers.
// +kubebuilder:validation:Enum=None;BearerToken;Kubernetes
type AuthMode string

// Auth modes.
const (
	// AuthNone lets anyone who can reach the Service query it (the
	// default).
	AuthNone AuthMode = "None"
	// AuthBearerToken accepts the tokens held in a Secret's keys.
	AuthBearerToken AuthMode = "BearerToken"
	// AuthKubernetes accepts Kubernetes tokens (of ServiceAccounts, or any
	// the API server authenticates) whose user RBAC allows to query the
	// Retriever.
	AuthKubernetes AuthMode = "Kubernetes"
)

// RetrieverAuth says who may query a Retriever.
// +kubebuilder:validation:XValidation:rule="self.mode != 'BearerToken' || has(self.secretRef)",message="auth.secretRef is required with mode BearerToken: name the Secret whose keys hold the accepted tokens"
// +kubebuilder:validation:XValidation:rule="!has(self.secretRef) || self.mode == 'BearerToken'",message="auth.secretRef is only read with mode BearerToken: remove it, or set mode: BearerToken"
type RetrieverAuth struct {
	// mode is None (default: anyone who can reach the Service may query),
	// BearerToken (a token from secretRef's keys) or Kubernetes (a
	// Kubernetes token whose user may get retrievers/query on this
	// Retriever).
	// +kubebuilder:default=None
	// +optional
	Mode AuthMode `json:"mode,omitempty"`

	// secretRef names a Secret in the Retriever's namespace whose every
	// key holds one accepted token; required with mode BearerToken and
	// refused otherwise. It is mounted into the query pods, which pick up
	// a changed Secret without a restart.
	// +optional
	SecretRef *LocalObjectReference `json:"secretRef,omitempty"`
}

// RetrieverNetworkPolicy limits who may open connections to the query
// pods.
type RetrieverNetworkPolicy struct {
	// from lists the peers that may connect to the query port; an empty
	// list lets no pod connect (the node, and so the kubelet's probes,
	// always may).
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	From []RetrieverPeer `json:"from,omitempty"`
}

// RetrieverPeer selects pods that may query a Retriever, as a
// NetworkPolicy peer does.
// +kubebuilder:validation:XValidation:rule="has(self.namespaceSelector) || has(self.podSelector)",message="each networkPolicy.from entry needs a namespaceSelector, a podSelector or both"
type RetrieverPeer struct {
	// namespaceSelector selects namespaces whose pods may connect ({}:
	// every namespace); with podSelector, only the selected pods of them.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// podSelector selects pods that may connect, in the Retriever's
	// namespace unless namespaceSelector is set.
	// +optional
	PodSelector *metav1.LabelSelector `json:"podSelector,omitempty"`
}

// RerankConvention names a reranker's wire format.
// +kubebuilder:validation:Enum=TEI;Cohere
type RerankConvention string

// Rerank conventions.
const (
	// RerankTEI is Hugging Face Text Embeddings Inference: POST /rerank.
	RerankTEI RerankConvention = "TEI"
	// RerankCohere is Cohere's and Jina's: POST /v1/rerank.
	RerankCohere RerankConvention = "Cohere"
)

// RerankTarget names what a reranker rescores.
// +kubebuilder:validation:Enum=Parents;Children
type RerankTarget string

// Rerank targets.
const (
	// RerankParents sends each candidate parent whole.
	RerankParents RerankTarget = "Parents"
	// RerankChildren sends each candidate's matching children, and scores
	// a parent from them by the Retriever's aggregation.
	RerankChildren RerankTarget = "Children"
)

// RetrieverTracing sends a trace of each request the query pods answer to
// an OpenTelemetry Collector.
type RetrieverTracing struct {
	// otlpEndpoint is the OTLP/HTTP endpoint of an OpenTelemetry
	// Collector, such as http://otel-collector.monitoring:4318 (spans go
	// to its /v1/traces).
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && (self.startsWith('http://') || self.startsWith('https://'))",message="tracing.otlpEndpoint must be an http:// or https:// URL, such as http://otel-collector.monitoring:4318"
	// +required
	OTLPEndpoint string `json:"otlpEndpoint"`
}

// RetrieverRerank rescores the best first-stage parents of each query with
// a cross-encoder served over HTTP.
// +kubebuilder:validation:XValidation:rule="!has(self.timeout) || (duration(self.timeout) > duration('0s') && duration(self.timeout) <= duration('60s'))",message="rerank.timeout must be more than 0s and at most 60s, such as 2s or 500ms"
// +kubebuilder:validation:XValidation:rule="self.convention != 'TEI' || !has(self.model)",message="rerank.model is sent only in the Cohere convention: remove it, or set convention: Cohere"
type RetrieverRerank struct {
	// url is the reranker's base URL, such as http://reranker.models:8080
	// (the path of the convention is added).
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && (self.startsWith('http://') || self.startsWith('https://'))",message="rerank.url must be an http:// or https:// URL, such as http://reranker.models:8080"
	// +required
	URL string `json:"url"`

	// convention is the wire format: TEI (default; POST /rerank) or
	// Cohere (POST /v1/rerank, also Jina's).
	// +kubebuilder:default=TEI
	// +optional
	Convention RerankConvention `json:"convention,omitempty"`

	// model names the model sent in the Cohere convention.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Model string `json:"model,omitempty"`

	// target is what is rescored: Parents (default), each candidate whole,
	// or Children, its matching children.
	// +kubebuilder:default=Parents
	// +optional
	Target RerankTarget `json:"target,omitempty"`

	// topN is how many first-stage parents are rescored; never fewer than
	// a query's maxParents. Default 20.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=200
	// +kubebuilder:default=20
	// +optional
	TopN int `json:"topN,omitempty"`

	// timeout bounds each call to the reranker. Default 2s.
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// retries is how many times a call that failed with a network error,
	// 429 or 5xx is repeated. Default 1.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5
	// +optional
	Retries *int32 `json:"retries,omitempty"`
}

// RetrieverMode names what a query returns for the children it finds.
// +kubebuilder:validation:Enum=Parents;Adaptive
type RetrieverMode string

// Retriever modes.
const (
	// ModeParents returns the parent of each child found, as LangChain's
	// ParentDocumentRetriever does.
	ModeParents RetrieverMode = "Parents"
	// ModeAdaptive returns for each child found the unit of the level
	// that holds enough of the evidence: a section, a parent, or the
	// child in a window of its sentences.
	ModeAdaptive RetrieverMode = "Adaptive"
)

// RetrieverAdaptive tunes the Adaptive mode.
type RetrieverAdaptive struct {
	// mergePercent is the share, in percent, of a unit's children that
	// must match for the unit to be returned in their place. Default 25.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	MergePercent int32 `json:"mergePercent,omitempty"`

	// windowSentences is how many sentences each side of its own a child
	// returned in a window gets. Default 2.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	// +optional
	WindowSentences *int32 `json:"windowSentences,omitempty"`
}

// SearchMode chooses which vectors of a Corpus a Retriever's queries
// search.
// +kubebuilder:validation:Enum=Hybrid;Dense;Sparse
type SearchMode string

// Search modes.
const (
	// SearchHybrid searches BM25 and the embedding model's vectors and
	// fuses the two rankings.
	SearchHybrid SearchMode = "Hybrid"
	// SearchDense searches the embedding model's vectors alone.
	SearchDense SearchMode = "Dense"
	// SearchSparse searches the BM25 vectors alone.
	SearchSparse SearchMode = "Sparse"
)

// RetrieverFusion tunes how a Hybrid search merges its two rankings:
// weighted reciprocal rank fusion, a child scoring the sum of
// weight/(k + rank) over the rankings it is in.
type RetrieverFusion struct {
	// k dampens the lead of the first ranks (1 to 1000; default 60).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	K int `json:"k,omitempty"`

	// sparseWeight weighs the BM25 ranking, as a decimal string; default
	// "1".
	// +kubebuilder:validation:Pattern=`^[0-9]{1,3}(\.[0-9]{1,6})?$`
	// +optional
	SparseWeight string `json:"sparseWeight,omitempty"`

	// denseWeight weighs the embedding model's ranking, as a decimal
	// string; default "1".
	// +kubebuilder:validation:Pattern=`^[0-9]{1,3}(\.[0-9]{1,6})?$`
	// +optional
	DenseWeight string `json:"denseWeight,omitempty"`
}

// RetrieverSearch chooses how queries search the children.
// +kubebuilder:validation:XValidation:rule="!has(self.fusion) || !has(self.mode) || self.mode == 'Hybrid'",message="search.fusion tunes Hybrid search only: remove it, or set search.mode to Hybrid"
type RetrieverSearch struct {
	// mode is Hybrid (BM25 and the embedding model, fused), Dense (the
	// model alone) or Sparse (BM25 alone). Unset, Hybrid when the Corpus
	// embeds with a model (embedding.openAI), Sparse otherwise.
	// +optional
	Mode SearchMode `json:"mode,omitempty"`

	// fusion tunes Hybrid search.
	// +optional
	Fusion *RetrieverFusion `json:"fusion,omitempty"`
}

// RetrieverSpec declares a query service over a Corpus.
// +kubebuilder:validation:XValidation:rule="!has(self.adaptive) || (has(self.mode) && self.mode == 'Adaptive')",message="adaptive tunes mode Adaptive only: set mode: Adaptive, or remove adaptive"
type RetrieverSpec struct {
	// corpusRef names the Corpus, in the same namespace, to serve.
	// +required
	CorpusRef LocalObjectReference `json:"corpusRef"`

	// track is which revision to serve: Active (default) or Candidate, a
	// preview of a verified revision before it is promoted. Candidate
	// Retrievers do not hold back the Milvus alias.
	// +kubebuilder:default=Active
	// +optional
	Track Track `json:"track,omitempty"`

	// childTopK is how many children a query fetches first; more are
	// fetched until maxParents parents are found. Default 20.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=20
	// +optional
	ChildTopK int `json:"childTopK,omitempty"`

	// maxParents caps the parents a query returns. Default 3.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=20
	// +kubebuilder:default=3
	// +optional
	MaxParents int `json:"maxParents,omitempty"`

	// aggregation combines the scores of a parent's matching children:
	// Max (default), Mean or Sum.
	// +kubebuilder:default=Max
	// +optional
	Aggregation Aggregation `json:"aggregation,omitempty"`

	// mode is what a query returns when it does not say: Parents (the
	// default), the parent of each child found, or Adaptive, the unit of
	// the level that holds enough of the evidence (docs/retrieval.md).
	// +optional
	Mode RetrieverMode `json:"mode,omitempty"`

	// adaptive tunes mode Adaptive.
	// +optional
	Adaptive *RetrieverAdaptive `json:"adaptive,omitempty"`
	// search chooses which vectors queries search (BM25, the embedding
	// model's, or both fused); unset, both when the Corpus has both.
	// +optional
	Search *RetrieverSearch `json:"search,omitempty"`

	// replicas of the query Deployment. Default 1.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=1
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// resources of the query container; requests of 50m CPU and 64Mi
	// memory when unset.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// image runs the query server; the operator's own image when unset.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`

	// service shapes the Service in front of the query pods.
	// +optional
	Service *RetrieverService `json:"service,omitempty"`

	// auth says who may query the Retriever: mode None (default),
	// BearerToken or Kubernetes. /healthz and /readyz stay open; /metrics
	// needs the same tokens as a query (in Kubernetes mode, get on the
	// non-resource URL /metrics).
	// +optional
	Auth *RetrieverAuth `json:"auth,omitempty"`

	// networkPolicy, when set, makes a NetworkPolicy that lets only the
	// listed peers connect to the query pods; unset, no NetworkPolicy is
	// made and any pod may connect.
	// +optional
	NetworkPolicy *RetrieverNetworkPolicy `json:"networkPolicy,omitempty"`

	// rerank, when set, rescores each query's first stage with a reranker
	// served over HTTP; a reranker that fails never fails the query, which
	// keeps its first-stage order.
	// +optional
	Rerank *RetrieverRerank `json:"rerank,omitempty"`

	// tracing, when set, makes the query pods send an OpenTelemetry trace
	// of each request over OTLP/HTTP; unset, they trace nothing (unless
	// the image's environment sets the standard OTEL_* variables).
	// +optional
	Tracing *RetrieverTracing `json:"tracing,omitempty"`

	// inspector, when true, makes the query pods serve the inspector page
	// at /inspector/ (`parentrag serve --inspector`): a query's answer with
	// its matching children marked, and a preview of how policies cut a
	// document, behind the Retriever's auth. Off by default.
	// +optional
	Inspector bool `json:"inspector,omitempty"`

	// suspend stops reconciliation; the Deployment keeps running as it is.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// RetrieverStatus is the observed state of a Retriever.
type RetrieverStatus struct {
	// conditions hold the latest observations: Ready, Reconciling, Stalled.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the generation last brought to Ready or Stalled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// url is where the query API answers inside the cluster.
	// +optional
	URL string `json:"url,omitempty"`

	// servingRevision is the Corpus revision every ready pod serves.
	// +optional
	ServingRevision string `json:"servingRevision,omitempty"`

	// desiredRevision is the Corpus revision the Deployment rolls out.
	// +optional
	DesiredRevision string `json:"desiredRevision,omitempty"`

	// loadedRevisions are the Corpus revisions that the query Deployment's
	// ReplicaSets with pods still run (the old ones during a rollout, the
	// new one): a pod of any of them may restart and load its revision
	// again, so the Corpus keeps each of them, and the query pods' Role
	// allows each, until no ReplicaSet runs it.
	// +optional
	LoadedRevisions []string `json:"loadedRevisions,omitempty"`

	// replicas and readyReplicas count the query pods.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// lastHandledReconcileAt echoes the reconcile.fluxcd.io/requestedAt
	// annotation last handled.
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=rtr,categories=parentrag
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.servingRevision`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.url`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Retriever is a query service over a Corpus: children in, parents out.
type Retriever struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec declares the query service.
	// +required
	Spec RetrieverSpec `json:"spec"`

	// status is the observed state.
	// +optional
	Status RetrieverStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// RetrieverList is a list of Retrievers.
type RetrieverList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Retriever `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Retriever{}, &RetrieverList{})
}
