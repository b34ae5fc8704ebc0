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

// RetrieverSpec declares a query service over a Corpus.
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
