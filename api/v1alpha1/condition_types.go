package v1alpha1

// Condition types. Ready summarises; Reconciling is present only while work
// is in flight; Stalled means nothing moves until the spec (or something it
// refers to) changes. These follow kstatus, so kubectl wait, Flux and Argo CD
// understand them.
const (
	// ConditionReady is True when the object does what its spec asks.
	ConditionReady = "Ready"
	// ConditionReconciling is True while the controller works towards the
	// spec, for example while a revision is being indexed.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when the controller cannot make progress
	// until a person acts.
	ConditionStalled = "Stalled"
	// ConditionSourcesReady is False when a source could not be read in
	// full; the documents that were read are still indexed.
	ConditionSourcesReady = "SourcesReady"
	// ConditionInUse is True on a ChunkingPolicy that Corpora refer to.
	ConditionInUse = "InUse"
)

// Condition reasons. Each explains the status of the condition it is set on.
const (
	// ReasonSucceeded: the object is ready.
	ReasonSucceeded = "Succeeded"
	// ReasonProgressing: work towards the spec is under way.
	ReasonProgressing = "Progressing"
	// ReasonIndexing: a new revision is being built.
	ReasonIndexing = "Indexing"
	// ReasonPolicyNotFound: the referenced ChunkingPolicy does not exist.
	ReasonPolicyNotFound = "PolicyNotFound"
	// ReasonPolicyInvalid: the referenced ChunkingPolicy cannot be compiled.
	ReasonPolicyInvalid = "PolicyInvalid"
	// ReasonSourceError: a source could not be read.
	ReasonSourceError = "SourceError"
	// ReasonSourceNotFound: a sourceRef names a Flux source object that
	// does not exist, or a kind that is not installed; the Corpus waits.
	ReasonSourceNotFound = "SourceNotFound"
	// ReasonSourceNotReady: a sourceRef's object has no artifact yet, or
	// is not Ready; the Corpus waits.
	ReasonSourceNotReady = "SourceNotReady"
	// ReasonCrossNamespaceRefDenied: a sourceRef names another namespace
	// and the operator runs with --no-cross-namespace-refs.
	ReasonCrossNamespaceRefDenied = "CrossNamespaceRefDenied"
	// ReasonNoDocuments: the sources hold no document to index.
	ReasonNoDocuments = "NoDocuments"
	// ReasonEmbeddingError: the embedder could not be set up or failed.
	ReasonEmbeddingError = "EmbeddingError"
	// ReasonVectorStoreError: the vector store's connection Secret does
	// not exist yet, or cannot be used.
	ReasonVectorStoreError = "VectorStoreError"
	// ReasonPodNotRunning: a pod the operator created cannot run (it cannot
	// be scheduled, its image cannot be pulled, its container crash-loops);
	// the message gives the pod and Kubernetes' reason and message.
	ReasonPodNotRunning = "PodNotRunning"
	// ReasonIndexFailed: building the revision failed; the active revision
	// keeps serving.
	ReasonIndexFailed = "IndexFailed"
	// ReasonSuspended: reconciliation is suspended by spec.suspend; Ready
	// keeps its status (the active revision still serves) and says which
	// generation was last applied.
	ReasonSuspended = "Suspended"
	// ReasonCorpusNotFound: the referenced Corpus does not exist.
	ReasonCorpusNotFound = "CorpusNotFound"
	// ReasonCorpusDeleted: the referenced Corpus is being deleted; the query
	// Deployment is scaled to zero so that no pod loads a revision that is
	// going away, and the Corpus's revisions are deleted once no query pod
	// runs.
	ReasonCorpusDeleted = "CorpusDeleted"
	// ReasonRetrieversRunning: the Corpus is being deleted and waits for the
	// query pods of its Retrievers to stop before deleting its revisions.
	ReasonRetrieversRunning = "RetrieversRunning"
	// ReasonSecretGone: the Corpus is being deleted and the Secret that
	// reaches its Milvus collections or Postgres tables is gone; it waits a
	// minute for the Secret, then leaves them in place.
	ReasonSecretGone = "SecretGone"
	// ReasonCorpusNotReady: the referenced Corpus has no active revision yet.
	ReasonCorpusNotReady = "CorpusNotReady"
	// ReasonRevisionNotStored: the manifest ConfigMap of the revision the
	// Retriever serves is gone (deleted by hand); the Corpus stores it
	// again, and the query pods keep serving what they loaded meanwhile.
	ReasonRevisionNotStored = "RevisionNotStored"
	// ReasonRollingOut: the query Deployment is rolling out a revision.
	ReasonRollingOut = "RollingOut"
	// ReasonInUse: Corpora refer to the ChunkingPolicy.
	ReasonInUse = "InUse"
	// ReasonDeletionBlocked: the ChunkingPolicy is being deleted but Corpora
	// still refer to it; it stays until they no longer do.
	ReasonDeletionBlocked = "DeletionBlocked"
	// ReasonUnused: no Corpus refers to the ChunkingPolicy.
	ReasonUnused = "Unused"
	// ReasonAwaitingPromotion: a built revision waits for the promote
	// annotation (Manual promotion).
	ReasonAwaitingPromotion = "AwaitingPromotion"
	// ReasonPinned: a pinned revision is active instead of the latest.
	ReasonPinned = "Pinned"
	// ReasonPinnedRevisionMissing: the pinned revision is not retained.
	ReasonPinnedRevisionMissing = "PinnedRevisionMissing"
	// ReasonVerificationFailed: a built revision failed its checks (store
	// counts, parents of sample children, sample queries); it is not
	// promoted.
	ReasonVerificationFailed = "VerificationFailed"
	// ReasonQualityGateFailed: the candidate missed the quality gate's
	// thresholds; it is not promoted.
	ReasonQualityGateFailed = "QualityGateFailed"
	// ReasonQualityGateInconclusive: the quality gate could not decide; the
	// rollout pauses until the candidate is promoted by annotation.
	ReasonQualityGateInconclusive = "QualityGateInconclusive"
	// ReasonGoldenQueriesNotFound: the quality gate's ConfigMap or key does
	// not exist.
	ReasonGoldenQueriesNotFound = "GoldenQueriesNotFound"
	// ReasonGoldenQueriesInvalid: the golden queries cannot be parsed.
	ReasonGoldenQueriesInvalid = "GoldenQueriesInvalid"
	// ReasonBuildSuperseded: a change during a build called for another
	// revision; the stale build was stopped and removed.
	ReasonBuildSuperseded = "BuildSuperseded"
	// ReasonClaimAccessMode: more Retriever replicas than the Corpus's
	// claims can be mounted by.
	ReasonClaimAccessMode = "ClaimAccessMode"
	// ReasonSearchMode: the Retriever's search mode needs vectors its
	// Corpus does not hold (Dense or Hybrid without an embedding model).
	ReasonSearchMode = "SearchMode"
	// ReasonAuthSecretNotReady: the Secret of a BearerToken Retriever's
	// auth.secretRef does not exist or holds no key, so its pods could
	// not start.
	ReasonAuthSecretNotReady = "AuthSecretNotReady"
)
