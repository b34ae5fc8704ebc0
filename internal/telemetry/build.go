package telemetry

// The spans of a build, in the order they run (docs/observability.md).
// The operator, the indexing Job and `parentrag local index` name them
// alike, so that one dashboard query finds a stage wherever it ran.
const (
	// SpanReconcile is one reconcile of a Corpus by the operator.
	SpanReconcile = "parentrag.reconcile"
	// SpanIndexJob is the indexing Job's command, `parentrag index`.
	SpanIndexJob = "parentrag.index_job"
	// SpanLocalIndex is `parentrag local index`.
	SpanLocalIndex = "parentrag.local_index"
	// SpanReadSources reads every source of a build into documents.
	SpanReadSources = "parentrag.read_sources"
	// SpanExtract reads one source (a Corpus's source, a path of the
	// command line) and extracts the text of its documents from their
	// formats (HTML, PDF, DOCX, code...).
	SpanExtract = "parentrag.extract"
	// SpanBuild builds the revision's bundle from the documents.
	SpanBuild = "parentrag.build"
	// SpanSplit splits the documents into parents and children and
	// analyses them (or takes them from the unit cache).
	SpanSplit = "parentrag.split"
	// SpanEmbed embeds the children and writes them to the child store.
	SpanEmbed = "parentrag.embed"
	// SpanIndex finishes the child index (Milvus: flush, index, load).
	SpanIndex = "parentrag.index"
	// SpanSave writes the bundle: parent store index and manifest.
	SpanSave = "parentrag.save"
	// SpanStore stores a bundle built in the operator as ConfigMaps.
	SpanStore = "parentrag.store"
	// SpanVerify opens the built revision and verifies it.
	SpanVerify = "parentrag.verify"
	// SpanGate measures the quality gate's golden queries.
	SpanGate = "parentrag.gate"
)
