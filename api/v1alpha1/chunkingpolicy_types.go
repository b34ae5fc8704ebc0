package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Strategy names how documents become retrievable units.
// +kubebuilder:validation:Enum=ParentChild;SentenceWindow
type Strategy string

const (
	// StrategyParentChild splits each document into parents and each parent
	// into children; children are searched and their parents returned.
	StrategyParentChild Strategy = "ParentChild"
	// StrategySentenceWindow indexes sentences and returns each hit sentence
	// with its neighbours.
	StrategySentenceWindow Strategy = "SentenceWindow"
)

// LengthUnit names the unit chunk sizes and budgets are counted in.
// +kubebuilder:validation:Enum=Characters;Tokens
type LengthUnit string

const (
	// LengthCharacters counts Unicode code points, as Python's len() does.
	LengthCharacters LengthUnit = "Characters"
	// LengthTokens counts tokens of the policy's tokenizer.
	LengthTokens LengthUnit = "Tokens"
)

// Tokenizer names a byte-pair encoding used when lengthUnit is Tokens.
// +kubebuilder:validation:Enum=cl100k_base;o200k_base
type Tokenizer string

const (
	// TokenizerCL100K is the encoding of GPT-4 and text-embedding-3 models.
	TokenizerCL100K Tokenizer = "cl100k_base"
	// TokenizerO200K is the encoding of GPT-4o models.
	TokenizerO200K Tokenizer = "o200k_base"
)

// SeparatorPreset names a built-in separator list.
// +kubebuilder:validation:Enum=Default;Markdown
type SeparatorPreset string

const (
	// SeparatorsDefault is ["\n\n", "\n", " ", ""], LangChain's default.
	SeparatorsDefault SeparatorPreset = "Default"
	// SeparatorsMarkdown is LangChain's Language.MARKDOWN list: headings
	// first, so parents follow the document's sections.
	SeparatorsMarkdown SeparatorPreset = "Markdown"
)

// Separators chooses where the recursive splitter may cut.
// +kubebuilder:validation:XValidation:rule="!has(self.regex) || !self.regex || (has(self.custom) && size(self.custom) > 0)",message="separators.regex needs a custom separator list"
type Separators struct {
	// preset is the built-in separator list: Default or Markdown.
	// +kubebuilder:default=Default
	// +optional
	Preset SeparatorPreset `json:"preset,omitempty"`

	// custom replaces the preset with these separators, tried in order.
	// An empty string splits between characters.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=256
	// +optional
	Custom []string `json:"custom,omitempty"`

	// regex makes each custom entry a regular expression (RE2 syntax).
	// +optional
	Regex bool `json:"regex,omitempty"`
}

// ParentBoundaries names where parents start.
// +kubebuilder:validation:Enum=Recursive;Sections
type ParentBoundaries string

const (
	// BoundariesRecursive cuts parents with the recursive splitter over the
	// whole document, as LangChain's ParentDocumentRetriever does.
	BoundariesRecursive ParentBoundaries = "Recursive"
	// BoundariesSections makes each Markdown section (from its heading to
	// the next heading) a parent under its heading path; only a section
	// longer than chunkSize is cut by the recursive splitter.
	BoundariesSections ParentBoundaries = "Sections"
)

// ChunkSize bounds one level of chunks.
// +kubebuilder:validation:XValidation:rule="!has(self.chunkOverlap) || self.chunkOverlap < self.chunkSize",message="chunkOverlap must be smaller than chunkSize"
// +kubebuilder:validation:XValidation:rule="!has(self.minChunkSize) || self.minChunkSize < self.chunkSize",messageExpression="'minChunkSize %d must be smaller than chunkSize %d'.format([self.minChunkSize, self.chunkSize])"
type ChunkSize struct {
	// chunkSize is the largest chunk, in the policy's lengthUnit.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	// +required
	ChunkSize int `json:"chunkSize"`

	// chunkOverlap is how much of the end of one chunk the next one repeats,
	// in the policy's lengthUnit. It must be smaller than chunkSize.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ChunkOverlap int `json:"chunkOverlap,omitempty"`

	// boundaries, for parents only, is where parents start: Recursive (the
	// default) cuts the whole document with the recursive splitter, exactly
	// as LangChain does; Sections makes each Markdown section a parent
	// under its heading path and cuts only sections longer than chunkSize.
	// +optional
	Boundaries ParentBoundaries `json:"boundaries,omitempty"`

	// minChunkSize, for parents only, is the shortest parent that stands
	// alone, in the policy's lengthUnit: a shorter piece (a heading with no
	// text of its own, a closing code fence) merges into its neighbour. It
	// must be smaller than chunkSize. Defaults to 0 (nothing merges) with
	// Recursive boundaries and to a tenth of chunkSize with Sections.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinChunkSize int `json:"minChunkSize,omitempty"`
}

// Window sizes the sentence window.
type Window struct {
	// sentences is how many sentences each side of the hit are returned.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	// +kubebuilder:default=2
	// +optional
	Sentences int `json:"sentences"`
}

// ChunkingPolicySpec declares how documents are split into parents and
// children.
// +kubebuilder:validation:XValidation:rule="!has(self.child) || !has(self.parent) || self.child.chunkSize < self.parent.chunkSize",messageExpression="'child.chunkSize %d must be smaller than parent.chunkSize %d'.format([self.child.chunkSize, self.parent.chunkSize])"
// +kubebuilder:validation:XValidation:rule="!has(self.parent) || has(self.child) || 300 < self.parent.chunkSize",messageExpression="'child.chunkSize 300 (the default) must be smaller than parent.chunkSize %d: set child.chunkSize'.format([self.parent.chunkSize])"
// +kubebuilder:validation:XValidation:rule="!has(self.child) || has(self.parent) || self.child.chunkSize < 1500",messageExpression="'child.chunkSize %d must be smaller than parent.chunkSize 1500 (the default): set parent.chunkSize'.format([self.child.chunkSize])"
// +kubebuilder:validation:XValidation:rule="!has(self.child) || (!has(self.child.boundaries) && !has(self.child.minChunkSize))",message="boundaries and minChunkSize apply to parents only: set them under parent, not child"
// +kubebuilder:validation:XValidation:rule="!has(self.strategy) || self.strategy != 'SentenceWindow' || !has(self.parent) || !has(self.parent.boundaries) || self.parent.boundaries != 'Sections'",message="parent.boundaries Sections needs strategy ParentChild: sentence windows are not cut at sections"
type ChunkingPolicySpec struct {
	// strategy is ParentChild (children searched, parents returned) or
	// SentenceWindow (sentences searched, neighbouring sentences returned).
	// +kubebuilder:default=ParentChild
	// +optional
	Strategy Strategy `json:"strategy,omitempty"`

	// lengthUnit is the unit of every size: Characters (Unicode code points)
	// or Tokens (of tokenizer).
	// +kubebuilder:default=Characters
	// +optional
	LengthUnit LengthUnit `json:"lengthUnit,omitempty"`

	// tokenizer is the encoding that counts tokens when lengthUnit is Tokens.
	// +kubebuilder:default=cl100k_base
	// +optional
	Tokenizer Tokenizer `json:"tokenizer,omitempty"`

	// separators chooses where the splitter may cut.
	// +optional
	Separators *Separators `json:"separators,omitempty"`

	// parent sizes the parents, the units returned to the LLM.
	// Defaults to chunkSize 1500, chunkOverlap 0.
	// +optional
	Parent *ChunkSize `json:"parent,omitempty"`

	// child sizes the children, the units embedded and searched.
	// Defaults to chunkSize 300, chunkOverlap 30.
	// +optional
	Child *ChunkSize `json:"child,omitempty"`

	// window sizes the sentence window of the SentenceWindow strategy.
	// +optional
	Window *Window `json:"window,omitempty"`
}

// ChunkingPolicyStatus is the observed state of a ChunkingPolicy.
type ChunkingPolicyStatus struct {
	// conditions hold the latest observations of the policy.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// revision is the hash of the normalised spec; it names index revisions.
	// +optional
	Revision string `json:"revision,omitempty"`

	// corpora is how many Corpora refer to this policy.
	// +optional
	Corpora int `json:"corpora"`

	// parentChunkSize is the parents' chunkSize in effect, the default when
	// spec.parent leaves it out.
	// +optional
	ParentChunkSize int `json:"parentChunkSize,omitempty"`

	// childChunkSize is the children's chunkSize in effect, the default
	// when spec.child leaves it out.
	// +optional
	ChildChunkSize int `json:"childChunkSize,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=cp,categories=parentrag
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Strategy",type=string,JSONPath=`.spec.strategy`
// +kubebuilder:printcolumn:name="Parent",type=integer,JSONPath=`.status.parentChunkSize`
// +kubebuilder:printcolumn:name="Child",type=integer,JSONPath=`.status.childChunkSize`
// +kubebuilder:printcolumn:name="Unit",type=string,JSONPath=`.spec.lengthUnit`
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.revision`
// +kubebuilder:printcolumn:name="Corpora",type=integer,JSONPath=`.status.corpora`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ChunkingPolicy declares how a Corpus's documents are split into parents
// and children. It is cluster-scoped, so one policy serves every namespace.
type ChunkingPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec declares the splitting.
	// +required
	Spec ChunkingPolicySpec `json:"spec"`

	// status is the observed state.
	// +optional
	Status ChunkingPolicyStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ChunkingPolicyList is a list of ChunkingPolicies.
type ChunkingPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ChunkingPolicy `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ChunkingPolicy{}, &ChunkingPolicyList{})
}
