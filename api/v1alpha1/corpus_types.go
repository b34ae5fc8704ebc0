package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LocalObjectReference names an object in the same namespace.
type LocalObjectReference struct {
	// name of the referent.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// PolicyReference names a cluster-scoped ChunkingPolicy.
type PolicyReference struct {
	// name of the ChunkingPolicy.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// InlineDocument is a document written in the Corpus itself.
type InlineDocument struct {
	// id identifies the document within the Corpus.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	ID string `json:"id"`

	// title is shown with results and embedded as context.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Title string `json:"title,omitempty"`

	// text is the document's content, at most 1 MiB; larger documents
	// belong in a ConfigMap or behind a url source. HTML (an id ending
	// in .html, or text that starts as an HTML page does) is converted
	// to Markdown of its main content.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1048576
	// +required
	Text string `json:"text"`
}

// ConfigMapSource reads documents from one ConfigMap: each key is a
// document whose id is "<configmap>/<key>".
type ConfigMapSource struct {
	// name of the ConfigMap, in the Corpus's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// keys limits the documents to these keys; all keys when empty.
	// +kubebuilder:validation:MaxItems=1000
	// +optional
	Keys []string `json:"keys,omitempty"`
}

// URLSource reads documents from an HTTP(S) file or a .tar.gz, .tgz,
// .tar or .zip archive, such as a Flux source artifact.
type URLSource struct {
	// url of the file or archive.
	// +kubebuilder:validation:Pattern=`^https?://`
	// +kubebuilder:validation:MaxLength=2048
	// +required
	URL string `json:"url"`

	// include selects archive paths by glob (** crosses directories);
	// every format parentrag reads when empty: Markdown, text,
	// reStructuredText, JSON Lines, HTML, PDF and DOCX files.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Include []string `json:"include,omitempty"`

	// exclude drops archive paths by glob.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Exclude []string `json:"exclude,omitempty"`

	// checksum the download must have: "sha256:<hex>", the form of a Flux
	// artifact's digest.
	// +kubebuilder:validation:Pattern=`^(sha256:)?[0-9a-f]{64}$`
	// +optional
	Checksum string `json:"checksum,omitempty"`

	// maxFileSize rejects larger files, each reported (default 10Mi, at
	// most 64Mi).
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self)) && quantity(string(self)).compareTo(quantity('64Mi')) <= 0",message="maxFileSize must be a quantity of at most 64Mi, such as 10Mi"
	// +optional
	MaxFileSize *resource.Quantity `json:"maxFileSize,omitempty"`

	// maxTotalSize fails the source when the download or what it expands
	// to is larger (default 1Gi, at most 4Gi). Indexed in the operator,
	// its documents also count against the operator's --remote-memory.
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self)) && quantity(string(self)).compareTo(quantity('4Gi')) <= 0",message="maxTotalSize must be a quantity of at most 4Gi, such as 512Mi"
	// +optional
	MaxTotalSize *resource.Quantity `json:"maxTotalSize,omitempty"`

	// maxFiles fails the source when more files match include (default
	// 100000).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000
	// +optional
	MaxFiles int `json:"maxFiles,omitempty"`

	// secretRef names a Secret with "bearerToken", or "username" and
	// "password", sent with every request.
	// +optional
	SecretRef *LocalObjectReference `json:"secretRef,omitempty"`

	// interval between checks for a new version of the content (default
	// 10m); a reconcile request checks at once.
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`
}

// SourceRefKind is a kind of Flux source object whose artifact a Corpus
// reads.
// +kubebuilder:validation:Enum=GitRepository;OCIRepository;Bucket;ExternalArtifact
type SourceRefKind string

// Flux source kinds, all of source.toolkit.fluxcd.io/v1.
const (
	SourceRefGitRepository    SourceRefKind = "GitRepository"
	SourceRefOCIRepository    SourceRefKind = "OCIRepository"
	SourceRefBucket           SourceRefKind = "Bucket"
	SourceRefExternalArtifact SourceRefKind = "ExternalArtifact"
)

// SourceReference reads the documents of a Flux source object's artifact
// (status.artifact), as kustomize-controller and helm-controller take
// theirs: the operator downloads the tarball, checks its digest and reads
// the files under path that include selects.
// +kubebuilder:validation:XValidation:rule="!has(self.path) || (!self.path.startsWith('/') && !self.path.split('/').exists(s, s == '..'))",message="path is a folder inside the artifact: relative, without '..'"
type SourceReference struct {
	// kind of the source object: GitRepository, OCIRepository, Bucket or
	// ExternalArtifact (source.toolkit.fluxcd.io/v1).
	// +required
	Kind SourceRefKind `json:"kind"`

	// name of the source object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// namespace of the source object; the Corpus's when empty. Another
	// namespace is refused when the operator runs with
	// --no-cross-namespace-refs.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// path is the folder of the artifact whose files are read, such as
	// "./docs"; the whole artifact when empty. include and exclude match
	// paths inside it.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Path string `json:"path,omitempty"`

	// include selects files under path by glob (** crosses directories);
	// every format parentrag reads when empty: Markdown, text,
	// reStructuredText, JSON Lines, HTML, PDF and DOCX files.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Include []string `json:"include,omitempty"`

	// exclude drops files under path by glob.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Exclude []string `json:"exclude,omitempty"`

	// maxFileSize rejects larger files, each reported (default 10Mi, at
	// most 64Mi).
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self)) && quantity(string(self)).compareTo(quantity('64Mi')) <= 0",message="maxFileSize must be a quantity of at most 64Mi, such as 10Mi"
	// +optional
	MaxFileSize *resource.Quantity `json:"maxFileSize,omitempty"`

	// maxTotalSize fails the source when the artifact or what it expands
	// to is larger (default 1Gi, at most 4Gi). Its documents also count
	// against the operator's --remote-memory.
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self)) && quantity(string(self)).compareTo(quantity('4Gi')) <= 0",message="maxTotalSize must be a quantity of at most 4Gi, such as 512Mi"
	// +optional
	MaxTotalSize *resource.Quantity `json:"maxTotalSize,omitempty"`

	// maxFiles fails the source when more files match include (default
	// 100000).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000
	// +optional
	MaxFiles int `json:"maxFiles,omitempty"`
}

// FailurePolicy says what a document that cannot be read does to a
// revision.
// +kubebuilder:validation:Enum=Ignore;Fail
type FailurePolicy string

// Failure policies.
const (
	// FailureIgnore reports the document in status and indexes the rest.
	FailureIgnore FailurePolicy = "Ignore"
	// FailureFail builds no revision while a document cannot be read.
	FailureFail FailurePolicy = "Fail"
)

// Source is one place documents come from. Exactly one field is set.
// +kubebuilder:validation:XValidation:rule="[has(self.inline), has(self.configMap), has(self.selector), has(self.url), has(self.sourceRef)].filter(x, x).size() == 1",message="a source sets exactly one of inline, configMap, selector, url or sourceRef"
type Source struct {
	// name identifies the source in status and events.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Name string `json:"name"`

	// inline documents written in the Corpus.
	// +kubebuilder:validation:MaxItems=500
	// +kubebuilder:validation:XValidation:rule="self.map(d, size(d.text)).sum() <= 1048576",message="the inline documents of one source hold more than 1048576 characters (1 MiB) of text, and a Corpus is stored whole in etcd: put the documents in a ConfigMap or behind a url source"
	// +optional
	Inline []InlineDocument `json:"inline,omitempty"`

	// configMap reads each key of one ConfigMap as a document, in the
	// format its content and name tell (a PDF or DOCX in binaryData, HTML),
	// else as Markdown.
	// +optional
	ConfigMap *ConfigMapSource `json:"configMap,omitempty"`

	// selector reads every key of every ConfigMap in the namespace whose
	// labels match.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// url reads a file or an archive over HTTP(S).
	// +optional
	URL *URLSource `json:"url,omitempty"`

	// sourceRef reads the artifact of a Flux GitRepository, OCIRepository,
	// Bucket or ExternalArtifact, and re-indexes when it changes.
	// +optional
	SourceRef *SourceReference `json:"sourceRef,omitempty"`

	// failurePolicy is Ignore (default: a document that cannot be read is
	// reported in status and the rest is indexed) or Fail (no revision is
	// built while one cannot be read).
	// +kubebuilder:default=Ignore
	// +optional
	FailurePolicy FailurePolicy `json:"failurePolicy,omitempty"`
}

// SecretKeyReference names one key of a Secret in the same namespace.
type SecretKeyReference struct {
	// name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// key in the Secret; defaults to "apiKey".
	// +kubebuilder:default=apiKey
	// +optional
	Key string `json:"key,omitempty"`
}

// BuiltinEmbedding is the offline lexical embedder: BM25 as sparse vectors.
type BuiltinEmbedding struct {
	// k1 saturates term frequency, as a decimal string; default "0.9".
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	// +optional
	K1 string `json:"k1,omitempty"`

	// b scales length normalisation, between 0 and 1; default "0.4".
	// +kubebuilder:validation:Pattern=`^(0(\.[0-9]+)?|1(\.0+)?)$`
	// +optional
	B string `json:"b,omitempty"`

	// contextWeight weighs each child's context (document title and parent
	// text) in its vector; "0" embeds children alone. Default "0.8".
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	// +optional
	ContextWeight string `json:"contextWeight,omitempty"`
}

// OpenAIEmbedding embeds through an OpenAI-compatible /v1/embeddings API.
type OpenAIEmbedding struct {
	// endpoint is the API's base URL, such as https://api.openai.com/v1 or
	// http://ollama:11434/v1.
	// +kubebuilder:validation:Pattern=`^https?://`
	// +kubebuilder:validation:MaxLength=2048
	// +required
	Endpoint string `json:"endpoint"`

	// model is the embedding model's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +required
	Model string `json:"model"`

	// dimensions asks the model for vectors of this length; the model's own
	// when unset.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65536
	// +optional
	Dimensions int `json:"dimensions,omitempty"`

	// secretRef holds the API key; no key is sent when unset.
	// +optional
	SecretRef *SecretKeyReference `json:"secretRef,omitempty"`
}

// Embedding chooses how children and queries become vectors.
// +kubebuilder:validation:XValidation:rule="!(has(self.builtin) && has(self.openAI))",message="embedding sets at most one of builtin or openAI"
type Embedding struct {
	// builtin is the offline lexical embedder (the default).
	// +optional
	Builtin *BuiltinEmbedding `json:"builtin,omitempty"`

	// openAI embeds through an OpenAI-compatible endpoint.
	// +optional
	OpenAI *OpenAIEmbedding `json:"openAI,omitempty"`
}

// EmbeddedVectorStore keeps the child index inside the revision's bundle.
type EmbeddedVectorStore struct {
	// layout of the child index: Weights (each child's BM25 vector, the
	// default) or Segments (each run of about 4096 documents' term counts,
	// weighed at query time with the same scores; a revision after an
	// edit rebuilds only the runs of the documents it touched, and links
	// the others from the unit cache). Segments needs the builtin
	// embedding.
	// +kubebuilder:validation:Enum=Weights;Segments
	// +optional
	Layout string `json:"layout,omitempty"`
}

// Layouts of an embedded child index.
const (
	LayoutWeights  = "Weights"
	LayoutSegments = "Segments"
)

// MilvusIndex chooses the index of the dense vector field.
// +kubebuilder:validation:XValidation:rule="self.type == 'HNSW' || (!has(self.m) && !has(self.efConstruction) && !has(self.ef))",message="m, efConstruction and ef apply to the HNSW index only"
type MilvusIndex struct {
	// type is HNSW or AUTOINDEX (the default).
	// +kubebuilder:validation:Enum=HNSW;AUTOINDEX
	// +kubebuilder:default=AUTOINDEX
	// +optional
	Type string `json:"type,omitempty"`

	// m is the HNSW graph degree (4 to 64; default 16).
	// +kubebuilder:validation:Minimum=4
	// +kubebuilder:validation:Maximum=64
	// +optional
	M int `json:"m,omitempty"`

	// efConstruction is the HNSW build breadth (8 to 512; default 200).
	// +kubebuilder:validation:Minimum=8
	// +kubebuilder:validation:Maximum=512
	// +optional
	EfConstruction int `json:"efConstruction,omitempty"`

	// ef is the HNSW search breadth (1 to 32768; default 64).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=32768
	// +optional
	Ef int `json:"ef,omitempty"`
}

// MilvusVectorStore indexes children in Milvus: one collection per
// revision, "<namespace>_<corpus>_<revision>", and the alias
// "<namespace>_<corpus>" on the serving one for readers outside parentrag.
type MilvusVectorStore struct {
	// address of the Milvus proxy, host:port.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9.\-\[\]:]+:[0-9]{1,5}$`
	// +required
	Address string `json:"address"`

	// database holds the collections; "default" when unset.
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`
	// +optional
	Database string `json:"database,omitempty"`

	// secretRef names a Secret with either "token", or "username" and
	// "password".
	// +optional
	SecretRef *LocalObjectReference `json:"secretRef,omitempty"`

	// tls connects with TLS.
	// +optional
	TLS bool `json:"tls,omitempty"`

	// index of the dense vector field, when an embedding model is set.
	// +optional
	Index *MilvusIndex `json:"index,omitempty"`

	// metric of the dense vector field: COSINE (default), IP or L2. The
	// sparse BM25 field always uses IP.
	// +kubebuilder:validation:Enum=COSINE;IP;L2
	// +kubebuilder:default=COSINE
	// +optional
	Metric string `json:"metric,omitempty"`

	// shards of each collection (1 to 16; default 1).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16
	// +optional
	Shards int `json:"shards,omitempty"`

	// consistency of searches: Strong, Bounded (default), Session or
	// Eventually.
	// +kubebuilder:validation:Enum=Strong;Bounded;Session;Eventually
	// +kubebuilder:default=Bounded
	// +optional
	Consistency string `json:"consistency,omitempty"`
}

// PostgresIndex tunes the HNSW index of the dense vector column.
type PostgresIndex struct {
	// m is the HNSW graph degree (2 to 100; default 16).
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=100
	// +optional
	M int `json:"m,omitempty"`

	// efConstruction is the HNSW build breadth (4 to 1000; default 64).
	// +kubebuilder:validation:Minimum=4
	// +kubebuilder:validation:Maximum=1000
	// +optional
	EfConstruction int `json:"efConstruction,omitempty"`

	// ef is the HNSW search breadth, hnsw.ef_search (1 to 1000; default
	// 40), raised to the number of children a query asks for.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Ef int `json:"ef,omitempty"`
}

// PostgresTLS secures the connections to PostgreSQL.
type PostgresTLS struct {
	// mode is libpq's sslmode: disable, require, verify-ca or verify-full.
	// Unset, the connection string's own, else libpq's default (prefer).
	// +kubebuilder:validation:Enum=disable;require;verify-ca;verify-full
	// +optional
	Mode string `json:"mode,omitempty"`

	// caSecretRef names a Secret in the Corpus's namespace whose "ca.crt"
	// key holds the CA certificates (PEM) that verify the server, such as
	// CloudNativePG's "<cluster>-ca" Secret.
	// +optional
	CASecretRef *LocalObjectReference `json:"caSecretRef,omitempty"`
}

// PostgresVectorStore indexes children in PostgreSQL with pgvector: one
// table per revision, "<namespace>_<corpus>_<revision>", in schema, and
// the view "<namespace>_<corpus>" on the serving one for readers outside
// parentrag.
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || !has(self.tls.caSecretRef) || !has(self.tls.mode) || self.tls.mode == 'verify-ca' || self.tls.mode == 'verify-full'",message="tls.caSecretRef verifies the server: set tls.mode to verify-ca or verify-full, or remove it"
type PostgresVectorStore struct {
	// secretRef names a Secret in the Corpus's namespace with the
	// connection: a "dsn" or "uri" key (a libpq connection string or
	// URL), or "host", "port", "dbname", "user" and "password" keys, the
	// shape of CloudNativePG's "<cluster>-app" Secret.
	// +required
	SecretRef LocalObjectReference `json:"secretRef"`

	// schema holds the tables and the view; "parentrag" when unset. It is
	// created if it does not exist.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z_][a-z0-9_]*$`
	// +optional
	Schema string `json:"schema,omitempty"`

	// tls secures the connections.
	// +optional
	TLS *PostgresTLS `json:"tls,omitempty"`

	// index tunes the HNSW index of the dense column, when an embedding
	// model is set.
	// +optional
	Index *PostgresIndex `json:"index,omitempty"`

	// metric of the dense column: COSINE (default), IP or L2. BM25 is
	// always scored by inner product.
	// +kubebuilder:validation:Enum=COSINE;IP;L2
	// +kubebuilder:default=COSINE
	// +optional
	Metric string `json:"metric,omitempty"`

	// maxConnections bounds the connections of each query pod, and of the
	// build (1 to 64; default 4).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +optional
	MaxConnections int `json:"maxConnections,omitempty"`
}

// VectorStore chooses where children are indexed.
// +kubebuilder:validation:XValidation:rule="[has(self.embedded), has(self.milvus), has(self.postgres)].filter(x, x).size() <= 1",message="vectorStore sets at most one of embedded, milvus or postgres"
type VectorStore struct {
	// embedded keeps an exact in-process index in the revision's parent
	// store (the default).
	// +optional
	Embedded *EmbeddedVectorStore `json:"embedded,omitempty"`

	// milvus indexes children in Milvus collections.
	// +optional
	Milvus *MilvusVectorStore `json:"milvus,omitempty"`

	// postgres indexes children in PostgreSQL tables with pgvector.
	// +optional
	Postgres *PostgresVectorStore `json:"postgres,omitempty"`
}

// Promotion says when a built revision becomes active.
// +kubebuilder:validation:Enum=Auto;Manual
type Promotion string

// Promotions.
const (
	// PromotionAuto makes each built revision active at once.
	PromotionAuto Promotion = "Auto"
	// PromotionManual keeps a built revision as the candidate until the
	// annotation parentrag.io/promote names it.
	PromotionManual Promotion = "Manual"
)

// PromoteAnnotation, set to a built revision's name, promotes it under
// Manual promotion.
const PromoteAnnotation = "parentrag.io/promote"

// Rollout says how revisions take over.
type Rollout struct {
	// promotion is Auto (default: each built revision becomes active) or
	// Manual (a built revision waits as the candidate until the annotation
	// parentrag.io/promote names it).
	// +kubebuilder:default=Auto
	// +optional
	Promotion Promotion `json:"promotion,omitempty"`

	// pinnedRevision makes this retained revision the active one, whatever
	// the spec builds: a rollback without re-indexing. Remove it to return
	// to the latest revision.
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{16}$`
	// +optional
	PinnedRevision string `json:"pinnedRevision,omitempty"`

	// qualityGate measures golden queries on the candidate and the active
	// revision before promotion: a failure aborts the rollout, an
	// inconclusive result pauses it.
	// +optional
	QualityGate *QualityGate `json:"qualityGate,omitempty"`
}

// QualityGate compares a candidate revision with the active one on golden
// queries before it is promoted.
type QualityGate struct {
	// goldenQueries names a ConfigMap key holding golden queries as JSON
	// Lines: {"query": "...", "docIds": ["..."], "answers": ["..."]}. A
	// query is a hit when a returned parent comes from one of docIds or
	// contains one of answers.
	// +required
	GoldenQueries ConfigMapKeyReference `json:"goldenQueries"`

	// minHitRate is the least share of golden queries the candidate must
	// hit, a decimal between 0 and 1; default "0".
	// +kubebuilder:validation:Pattern=`^(0(\.[0-9]+)?|1(\.0+)?)$`
	// +optional
	MinHitRate string `json:"minHitRate,omitempty"`

	// maxDrop is how much lower the candidate's hit rate may be than the
	// active revision's, a decimal between 0 and 1; unset, the drop is not
	// limited.
	// +kubebuilder:validation:Pattern=`^(0(\.[0-9]+)?|1(\.0+)?)$`
	// +optional
	MaxDrop string `json:"maxDrop,omitempty"`

	// minQueries is the least number of golden queries that must be
	// measured on both revisions; with fewer the result is inconclusive
	// and the rollout pauses. Default 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	// +optional
	MinQueries int `json:"minQueries,omitempty"`

	// maxParents is how many parents each golden query returns; default 3.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=20
	// +optional
	MaxParents int `json:"maxParents,omitempty"`
}

// ConfigMapKeyReference names one key of a ConfigMap in the same
// namespace.
type ConfigMapKeyReference struct {
	// name of the ConfigMap.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// key in the ConfigMap; defaults to "queries.jsonl".
	// +kubebuilder:default=queries.jsonl
	// +optional
	Key string `json:"key,omitempty"`
}

// PinAnnotation, set to a retained revision's name, pins it like
// spec.rollout.pinnedRevision; the spec field wins when both are set.
const PinAnnotation = "parentrag.io/pin"

// DeletionPolicy says what happens to what a Corpus owns outside
// Kubernetes (Milvus collections) when the Corpus is deleted.
// +kubebuilder:validation:Enum=Delete;Retain
type DeletionPolicy string

// Deletion policies.
const (
	// DeletionDelete drops the collections and the alias.
	DeletionDelete DeletionPolicy = "Delete"
	// DeletionRetain leaves them for someone else to manage.
	DeletionRetain DeletionPolicy = "Retain"
)

// ConfigMapParentStore keeps a revision in immutable ConfigMaps.
type ConfigMapParentStore struct{}

// PersistentVolumeClaimParentStore keeps each revision's bundle on a
// PersistentVolumeClaim of its own, "<corpus>-<revision[:8]>", written once
// by the revision's indexing Job and mounted read-only by its query pods.
type PersistentVolumeClaimParentStore struct {
	// storageClassName of each claim; the cluster's default when unset.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// size requested for each claim, such as 10Gi. A revision's bundle is
	// 5 to 7 times its text with the builtin embedder.
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self))",message="size must be a quantity such as 10Gi or 500Mi"
	// +required
	Size resource.Quantity `json:"size"`

	// accessModes of each claim; default [ReadWriteOnce]. A Retriever with
	// more than one replica needs ReadOnlyMany or ReadWriteMany.
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:Enum=ReadWriteOnce;ReadOnlyMany;ReadWriteMany;ReadWriteOncePod
	// +optional
	AccessModes []corev1.PersistentVolumeAccessMode `json:"accessModes,omitempty"`
}

// ParentStore chooses where parents are kept.
// +kubebuilder:validation:XValidation:rule="!(has(self.configMap) && has(self.persistentVolumeClaim))",message="parentStore sets at most one of configMap or persistentVolumeClaim"
type ParentStore struct {
	// configMap keeps each revision in immutable ConfigMaps named after it,
	// sharded under the 1 MiB object limit (the default).
	// +optional
	ConfigMap *ConfigMapParentStore `json:"configMap,omitempty"`

	// persistentVolumeClaim keeps each revision on its own claim, for
	// corpora too big for ConfigMaps; revisions are built by Jobs.
	// +optional
	PersistentVolumeClaim *PersistentVolumeClaimParentStore `json:"persistentVolumeClaim,omitempty"`
}

// IndexingMode says where a revision is built.
// +kubebuilder:validation:Enum=InProcess;Job
type IndexingMode string

// Indexing modes.
const (
	// IndexingInProcess builds revisions inside the operator.
	IndexingInProcess IndexingMode = "InProcess"
	// IndexingJob builds each revision in a batch/v1 Job.
	IndexingJob IndexingMode = "Job"
)

// Indexing says where and with what a revision is built.
type Indexing struct {
	// mode is InProcess (the default with a configMap parent store) or Job
	// (the default, and the only choice, with a persistentVolumeClaim one).
	// +optional
	Mode IndexingMode `json:"mode,omitempty"`

	// resources of the indexing Job's container; requests of 500m CPU and
	// 512Mi memory when unset.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// backoffLimit is how many times a failed indexing pod is retried
	// (default 2).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`

	// activeDeadlineSeconds bounds an indexing Job's run (default 3600).
	// +kubebuilder:validation:Minimum=60
	// +kubebuilder:validation:Maximum=604800
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// startDeadlineSeconds is how long an indexing Job's pod may take to
	// start (be scheduled, have its claims bound, pull its image) before
	// the build fails and the active revision keeps serving (default 600).
	// While it waits, the Corpus's conditions say why, in Kubernetes' words
	// (Unschedulable, ImagePullBackOff, ...).
	// +kubebuilder:validation:Minimum=30
	// +kubebuilder:validation:Maximum=86400
	// +optional
	StartDeadlineSeconds *int64 `json:"startDeadlineSeconds,omitempty"`

	// image runs `parentrag index`; the operator's own image when unset.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`
}

// CorpusSpec declares documents, how they are split and where they are
// indexed.
// +kubebuilder:validation:XValidation:rule="self.sources.map(s, has(s.inline) ? s.inline.map(d, size(d.text)).sum() : 0).sum() <= 1048576",message="the inline documents of all sources hold more than 1048576 characters (1 MiB) of text, and a Corpus is stored whole in etcd: put the documents in a ConfigMap or behind a url source"
// +kubebuilder:validation:XValidation:rule="!has(self.vectorStore) || !has(self.vectorStore.milvus) || !has(self.embedding) || !has(self.embedding.openAI) || has(self.embedding.openAI.dimensions)",message="embedding.openAI.dimensions is required with vectorStore.milvus: it sizes the collection's dense vector field"
// +kubebuilder:validation:XValidation:rule="!has(self.vectorStore) || !has(self.vectorStore.postgres) || !has(self.embedding) || !has(self.embedding.openAI) || (has(self.embedding.openAI.dimensions) && self.embedding.openAI.dimensions <= 2000)",message="embedding.openAI.dimensions is required with vectorStore.postgres, at most 2000: it sizes the table's vector column, and pgvector's HNSW index takes at most 2000 dimensions"
// +kubebuilder:validation:XValidation:rule="!has(self.parentStore) || !has(self.parentStore.persistentVolumeClaim) || !has(self.indexing) || !has(self.indexing.mode) || self.indexing.mode == 'Job'",message="a persistentVolumeClaim parent store is written by an indexing Job: indexing.mode must be Job"
// +kubebuilder:validation:XValidation:rule="!has(self.indexing) || !has(self.indexing.mode) || self.indexing.mode != 'Job' || (has(self.parentStore) && has(self.parentStore.persistentVolumeClaim))",message="indexing.mode Job writes revisions to a persistentVolumeClaim parent store: set parentStore.persistentVolumeClaim"
// +kubebuilder:validation:XValidation:rule="!has(self.indexing) || !has(self.indexing.mode) || self.indexing.mode != 'Job' || !self.sources.exists(s, has(s.sourceRef))",message="a sourceRef source is read by the operator and indexing.mode Job does not take one yet: index in the operator (indexing.mode InProcess), or give the artifact as a url source"
// +kubebuilder:validation:XValidation:rule="!has(self.vectorStore) || !has(self.vectorStore.embedded) || !has(self.vectorStore.embedded.layout) || self.vectorStore.embedded.layout != 'Segments' || !has(self.embedding) || !has(self.embedding.openAI)",message="vectorStore.embedded.layout Segments keeps the builtin embedder's term counts; it cannot hold the vectors of embedding.openAI"
type CorpusSpec struct {
	// chunkingPolicyRef names the ChunkingPolicy that splits the documents.
	// +required
	ChunkingPolicyRef PolicyReference `json:"chunkingPolicyRef"`

	// sources are where documents come from.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=name
	// +required
	Sources []Source `json:"sources"`

	// embedding chooses the embedder; the builtin lexical one when unset.
	// +optional
	Embedding *Embedding `json:"embedding,omitempty"`

	// vectorStore chooses where children are indexed; embedded when unset.
	// +optional
	VectorStore *VectorStore `json:"vectorStore,omitempty"`

	// parentStore chooses where parents are kept; configMap when unset.
	// +optional
	ParentStore *ParentStore `json:"parentStore,omitempty"`

	// indexing says where revisions are built: in the operator, or in
	// Jobs.
	// +optional
	Indexing *Indexing `json:"indexing,omitempty"`

	// retainRevisions is how many revisions are kept, the active one
	// included, for rollback.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +kubebuilder:default=2
	// +optional
	RetainRevisions int `json:"retainRevisions,omitempty"`

	// rollout says how a new revision takes over from the active one.
	// +optional
	Rollout *Rollout `json:"rollout,omitempty"`

	// deletionPolicy says what deleting the Corpus does to its Milvus
	// collections and Postgres tables: Delete (default) or Retain.
	// +kubebuilder:default=Delete
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// suspend stops reconciliation; the active revision keeps serving.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// RevisionStatus describes one built revision.
type RevisionStatus struct {
	// name of the revision; its ConfigMaps are named "<corpus>-<name[:8]>".
	Name string `json:"name"`
	// policyRevision is the ChunkingPolicy's revision it was split with.
	PolicyRevision string `json:"policyRevision"`
	// sourceDigest is the hash of every document indexed.
	SourceDigest string `json:"sourceDigest"`
	// documents, parents and children count what the revision holds.
	Documents int `json:"documents"`
	Parents   int `json:"parents"`
	Children  int `json:"children"`
	// bytes is the size of the revision's bundle.
	Bytes int64 `json:"bytes"`
	// configMaps is how many ConfigMaps hold the revision.
	ConfigMaps int `json:"configMaps"`
	// claim is the PersistentVolumeClaim holding the revision, with a
	// persistentVolumeClaim parent store.
	// +optional
	Claim string `json:"claim,omitempty"`
	// builtAt is when the revision was built.
	BuiltAt metav1.Time `json:"builtAt"`
	// promotedAt is when the revision last became active.
	// +optional
	PromotedAt *metav1.Time `json:"promotedAt,omitempty"`
	// supersededAt is when another revision took over from it.
	// +optional
	SupersededAt *metav1.Time `json:"supersededAt,omitempty"`
	// outcome is where the revision stands: Active or Superseded in the
	// history; AwaitingPromotion, Paused, Failed or Held as the candidate.
	// +optional
	Outcome RevisionOutcome `json:"outcome,omitempty"`
	// verification is what was checked before promotion.
	// +optional
	Verification *VerificationStatus `json:"verification,omitempty"`
	// qualityGate is the golden-query comparison before promotion.
	// +optional
	QualityGate *QualityGateStatus `json:"qualityGate,omitempty"`
}

// RevisionOutcome says where a revision stands.
// +kubebuilder:validation:Enum=Active;Superseded;AwaitingPromotion;Paused;Failed;Held
type RevisionOutcome string

// Revision outcomes.
const (
	// OutcomeActive: the revision is served.
	OutcomeActive RevisionOutcome = "Active"
	// OutcomeSuperseded: the revision was served and is retained for
	// rollback.
	OutcomeSuperseded RevisionOutcome = "Superseded"
	// OutcomeAwaitingPromotion: the candidate waits for the promote
	// annotation.
	OutcomeAwaitingPromotion RevisionOutcome = "AwaitingPromotion"
	// OutcomePaused: the quality gate was inconclusive; the candidate waits
	// for the promote annotation.
	OutcomePaused RevisionOutcome = "Paused"
	// OutcomeFailed: verification or the quality gate failed; the candidate
	// is not promoted.
	OutcomeFailed RevisionOutcome = "Failed"
	// OutcomeHeld: a pinned revision is active instead.
	OutcomeHeld RevisionOutcome = "Held"
)

// CheckResult is the result of a check before promotion.
// +kubebuilder:validation:Enum=Passed;Failed;Inconclusive
type CheckResult string

// Check results.
const (
	CheckPassed       CheckResult = "Passed"
	CheckFailed       CheckResult = "Failed"
	CheckInconclusive CheckResult = "Inconclusive"
)

// VerificationStatus reports the checks of a built revision: the counts of
// its stores against its manifest, sample children resolving to parents of
// the same revision, sample queries answering.
type VerificationStatus struct {
	// result is Passed or Failed.
	Result CheckResult `json:"result"`
	// children and parents counted in the stores.
	Children int `json:"children"`
	Parents  int `json:"parents"`
	// sampledQueries run against the revision.
	SampledQueries int `json:"sampledQueries"`
	// resolvedChildren is how many hit children resolved to a parent of
	// the same revision.
	ResolvedChildren int `json:"resolvedChildren"`
	// message says what failed, or what passed.
	Message string `json:"message"`
	// checkedAt is when the checks ran.
	CheckedAt metav1.Time `json:"checkedAt"`
}

// QualityGateStatus reports a golden-query comparison.
type QualityGateStatus struct {
	// result is Passed, Failed or Inconclusive.
	Result CheckResult `json:"result"`
	// queries measured on both revisions.
	Queries int `json:"queries"`
	// candidateHitRate and activeHitRate, as decimals.
	CandidateHitRate string `json:"candidateHitRate"`
	// +optional
	ActiveHitRate string `json:"activeHitRate,omitempty"`
	// activeRevision is the revision compared against.
	// +optional
	ActiveRevision string `json:"activeRevision,omitempty"`
	// errors counts queries that failed on either revision.
	// +optional
	Errors int `json:"errors,omitempty"`
	// misses lists golden queries the candidate missed (at most 5).
	// +kubebuilder:validation:MaxItems=5
	// +optional
	Misses []string `json:"misses,omitempty"`
	// message explains the result.
	Message string `json:"message"`
	// digest identifies the gate settings and golden queries measured; a
	// change of either measures again.
	Digest string `json:"digest"`
	// evaluatedAt is when the gate ran.
	EvaluatedAt metav1.Time `json:"evaluatedAt"`
}

// SourceError reports a source that could not be read in full.
type SourceError struct {
	// source is the name of the source.
	Source string `json:"source"`
	// document names the document, when the problem is with one.
	// +optional
	Document string `json:"document,omitempty"`
	// message says what went wrong.
	Message string `json:"message"`
}

// IndexProgress reports a build in flight.
type IndexProgress struct {
	// revision being built.
	Revision string `json:"revision"`
	// stage is split, fit, embed or store.
	Stage string `json:"stage"`
	// done and total count the stage's units (documents or children).
	Done  int `json:"done"`
	Total int `json:"total"`
}

// BuildStatus reports one build of a revision.
type BuildStatus struct {
	// revision built.
	Revision string `json:"revision"`
	// mode it was built in: InProcess or Job.
	Mode IndexingMode `json:"mode"`
	// job is the indexing Job, in Job mode.
	// +optional
	Job string `json:"job,omitempty"`
	// logs says where the build's logs are.
	// +optional
	Logs string `json:"logs,omitempty"`
	// result is Succeeded or Failed.
	Result string `json:"result"`
	// message says what failed, and in which document when one did.
	// +optional
	Message string `json:"message,omitempty"`
	// startedAt and finishedAt bound the build.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// embeddingCache counts children whose vectors came from the cache
	// (hits) and from the embedding API (misses), with an embedding model.
	// +optional
	EmbeddingCache *EmbeddingCacheStatus `json:"embeddingCache,omitempty"`
	// unitCache counts the documents a successful build took whole from
	// the unit cache (their split, analyses and contexts, because their
	// content and the policy were unchanged) and those it split again.
	// +optional
	UnitCache *UnitCacheStatus `json:"unitCache,omitempty"`
	// configMaps counts, for a revision stored in ConfigMaps by the
	// operator, those the build created and those it found already
	// stored: with the Segments layout, the shards of every segment an
	// earlier revision holds too, shared rather than written again.
	// +optional
	ConfigMaps *ConfigMapsStatus `json:"configMaps,omitempty"`
}

// ConfigMapsStatus counts the ConfigMaps a build stored its revision in.
type ConfigMapsStatus struct {
	// created ConfigMaps were written by this build.
	Created int `json:"created"`
	// reused ConfigMaps were already stored, with the same content: shards
	// shared with an earlier revision, or written by an interrupted try.
	Reused int `json:"reused"`
}

// UnitCacheStatus reports how much of a build the unit cache saved.
type UnitCacheStatus struct {
	// reused documents were unchanged since a build that kept their units.
	Reused int `json:"reused"`
	// split documents were new or changed: split and analysed again.
	Split int `json:"split"`
	// segments counts, for a child index of segments, the runs of
	// documents whose segment and parent pack were taken whole from the
	// cache and those built again (any run holding a changed, added or
	// deleted document).
	// +optional
	Segments *SegmentRunsStatus `json:"segments,omitempty"`
}

// SegmentRunsStatus counts the runs of documents of a build into
// segments.
type SegmentRunsStatus struct {
	// reused runs were linked from the segment cache, neither split nor read.
	Reused int `json:"reused"`
	// built runs were split, analysed and written.
	Built int `json:"built"`
}

// EmbeddingCacheStatus reports how much of a build the embedding cache
// saved.
type EmbeddingCacheStatus struct {
	Hits   int64 `json:"hits"`
	Misses int64 `json:"misses"`
	// hitRate is hits over hits and misses, as a decimal.
	HitRate string `json:"hitRate"`
}

// CorpusStatus is the observed state of a Corpus.
type CorpusStatus struct {
	// conditions hold the latest observations: Ready, Reconciling, Stalled
	// and SourcesReady.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the generation last brought to Ready or Stalled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// activeRevision is the revision Retrievers serve.
	// +optional
	ActiveRevision *RevisionStatus `json:"activeRevision,omitempty"`

	// lastAttemptedRevision is the revision last built or being built.
	// +optional
	LastAttemptedRevision string `json:"lastAttemptedRevision,omitempty"`

	// lastAppliedRevision is the revision the spec calls for once it is
	// active; it differs from the active revision while a candidate waits
	// for promotion or a revision is pinned.
	// +optional
	LastAppliedRevision string `json:"lastAppliedRevision,omitempty"`

	// sourceRevision is the revision of the Flux artifacts the active
	// revision serves, as the source objects name it ("main@sha1:..."),
	// prefixed by the source's name when the Corpus has several sourceRef
	// sources. A commit that changes no file the Corpus reads moves it
	// without a new revision.
	// +optional
	SourceRevision string `json:"sourceRevision,omitempty"`

	// candidate is a built revision that is not active: waiting for manual
	// promotion, or held back by a pinned revision.
	// +optional
	Candidate *RevisionStatus `json:"candidate,omitempty"`

	// history lists the retained revisions, newest first.
	// +kubebuilder:validation:MaxItems=10
	// +optional
	History []RevisionStatus `json:"history,omitempty"`

	// progress reports the build in flight.
	// +optional
	Progress *IndexProgress `json:"progress,omitempty"`

	// lastBuild reports the last build that ran to its end.
	// +optional
	LastBuild *BuildStatus `json:"lastBuild,omitempty"`

	// sourceErrors lists sources or documents that could not be read.
	// +kubebuilder:validation:MaxItems=50
	// +optional
	SourceErrors []SourceError `json:"sourceErrors,omitempty"`

	// inventory lists what the Corpus owns outside Kubernetes, so nothing
	// leaks: Milvus collections and the alias, Postgres tables and the
	// view.
	// +optional
	Inventory *Inventory `json:"inventory,omitempty"`

	// lastHandledReconcileAt echoes the reconcile.fluxcd.io/requestedAt
	// annotation last handled.
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`
}

// Inventory lists external objects a Corpus owns.
type Inventory struct {
	// collections are the Milvus collections of the Corpus's revisions.
	// +optional
	Collections []InventoryCollection `json:"collections,omitempty"`

	// alias is the Milvus alias and the collection it points at.
	// +optional
	Alias *InventoryAlias `json:"alias,omitempty"`

	// tables are the Postgres tables of the Corpus's revisions.
	// +optional
	Tables []InventoryTable `json:"tables,omitempty"`

	// view is the Postgres view and the table it reads.
	// +optional
	View *InventoryView `json:"view,omitempty"`
}

// InventoryTable is one Postgres table.
type InventoryTable struct {
	// name of the table.
	Name string `json:"name"`
	// revision it holds.
	Revision string `json:"revision"`
	// address (host:port), database and schema of the Postgres that holds
	// it.
	Address  string `json:"address"`
	Database string `json:"database,omitempty"`
	Schema   string `json:"schema"`
}

// InventoryView is the Postgres view of the serving revision.
type InventoryView struct {
	// name of the view, in the table's schema.
	Name string `json:"name"`
	// table it reads.
	Table string `json:"table"`
}

// InventoryCollection is one Milvus collection.
type InventoryCollection struct {
	// name of the collection.
	Name string `json:"name"`
	// revision it holds.
	Revision string `json:"revision"`
	// address and database of the Milvus that holds it.
	Address  string `json:"address"`
	Database string `json:"database,omitempty"`
}

// InventoryAlias is the Milvus alias of the serving revision.
type InventoryAlias struct {
	// name of the alias.
	Name string `json:"name"`
	// collection it points at.
	Collection string `json:"collection"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=corp,categories=parentrag
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.activeRevision.name`
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=`.status.sourceRevision`,priority=1
// +kubebuilder:printcolumn:name="Docs",type=integer,JSONPath=`.status.activeRevision.documents`
// +kubebuilder:printcolumn:name="Parents",type=integer,JSONPath=`.status.activeRevision.parents`
// +kubebuilder:printcolumn:name="Children",type=integer,JSONPath=`.status.activeRevision.children`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Corpus is a set of documents indexed for parent-child retrieval.
type Corpus struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec declares the documents and how they are indexed.
	// +required
	Spec CorpusSpec `json:"spec"`

	// status is the observed state.
	// +optional
	Status CorpusStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// CorpusList is a list of Corpora.
type CorpusList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Corpus `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Corpus{}, &CorpusList{})
}
