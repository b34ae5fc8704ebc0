package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/parentrag/parentrag/internal/chunking"
)

// Strategy names how documents become retrievable units. Each is declared
// in package chunking; the enum lists the declared names (a test holds
// them equal).
// +kubebuilder:validation:Enum=ParentChild;SentenceWindow
type Strategy string

const (
	// StrategyParentChild splits each document into parents and each parent
	// into children; children are searched and their parents returned.
	StrategyParentChild = Strategy(chunking.ParentChild)
	// StrategySentenceWindow indexes sentences and returns each hit sentence
	// with its neighbours.
	StrategySentenceWindow = Strategy(chunking.SentenceWindow)
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
// +kubebuilder:validation:Enum=Default;Markdown;Language
type SeparatorPreset string

const (
	// SeparatorsDefault is ["\n\n", "\n", " ", ""], LangChain's default.
	SeparatorsDefault SeparatorPreset = "Default"
	// SeparatorsMarkdown is LangChain's Language.MARKDOWN list: headings
	// first, so parents follow the document's sections.
	SeparatorsMarkdown SeparatorPreset = "Markdown"
	// SeparatorsLanguage is the list LangChain's
	// RecursiveCharacterTextSplitter.from_language uses for each
	// document's own language (go, python, markdown, rst, ...), and the
	// Default list for a document whose language is not known (or perl,
	// for which LangChain has none). Code gets it when nothing says
	// otherwise.
	SeparatorsLanguage SeparatorPreset = "Language"
)

// Separators chooses where the recursive splitter may cut.
// +kubebuilder:validation:XValidation:rule="!has(self.regex) || !self.regex || (has(self.custom) && size(self.custom) > 0)",message="separators.regex needs a custom separator list"
type Separators struct {
	// preset is the built-in separator list: Default, Markdown, or
	// Language (each document's own language's list).
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
	// the next heading) a parent under its heading path, and each
	// top-level definition of source code a parent under its name; only a
	// section longer than chunkSize is cut, code at the definitions inside
	// it, else by the recursive splitter.
	BoundariesSections ParentBoundaries = "Sections"
)

// Level names one level of the hierarchy a document is split into,
// largest first: Document, Section, Parent, Child, Sentence.
// +kubebuilder:validation:Enum=Document;Section;Parent;Child;Sentence
type Level string

const (
	// LevelDocument is the whole document, one unit.
	LevelDocument Level = "Document"
	// LevelSection is a Markdown section (from its heading to the next
	// one) or a top-level definition of source code, sized by
	// spec.section.
	LevelSection Level = "Section"
	// LevelParent is a parent, sized by spec.parent.
	LevelParent Level = "Parent"
	// LevelChild is a child, sized by spec.child.
	LevelChild Level = "Child"
	// LevelSentence is a sentence; one longer than child.chunkSize is cut
	// as a child would be.
	LevelSentence Level = "Sentence"
)

// DocumentFormat names a kind of document a formats rule applies to.
// +kubebuilder:validation:Enum=Markdown;Text;HTML;PDF;DOCX;Code
type DocumentFormat string

const (
	// FormatMarkdown is Markdown (.md, .markdown).
	FormatMarkdown DocumentFormat = "Markdown"
	// FormatText is plain text and any document of no other format
	// (.txt, reStructuredText, LaTeX, JSON Lines records).
	FormatText DocumentFormat = "Text"
	// FormatHTML is HTML and XHTML.
	FormatHTML DocumentFormat = "HTML"
	// FormatPDF is PDF.
	FormatPDF DocumentFormat = "PDF"
	// FormatDOCX is Word's Office Open XML.
	FormatDOCX DocumentFormat = "DOCX"
	// FormatCode is source code in one of the languages LangChain's
	// from_language knows (go, python, ts, java, ...).
	FormatCode DocumentFormat = "Code"
)

// Language names a language of LangChain's Language enum, spelt as its
// value, as RecursiveCharacterTextSplitter.from_language knows it.
// +kubebuilder:validation:Enum=cpp;go;java;kotlin;js;ts;php;proto;python;r;rst;ruby;rust;scala;swift;markdown;latex;html;sol;csharp;cobol;c;lua;perl;haskell;elixir;powershell;visualbasic6
type Language string

// FormatMatch selects the documents a formats rule applies to: by their
// format, or by their language.
// +kubebuilder:validation:XValidation:rule="has(self.format) != has(self.languages)",message="match takes a format or languages, not both and not neither"
type FormatMatch struct {
	// format selects documents of one format: Markdown, Text, HTML, PDF,
	// DOCX or Code.
	// +optional
	Format DocumentFormat `json:"format,omitempty"`

	// languages selects documents in these languages, by LangChain's names
	// (go, python, ts, js, java, rst, ...). A rule naming a document's
	// language wins over one naming its format.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=28
	// +listType=set
	// +optional
	Languages []Language `json:"languages,omitempty"`
}

// FormatRule splits the documents it matches with its own settings; a
// setting it leaves out is the policy's.
// +kubebuilder:validation:XValidation:rule="!has(self.lengthUnit) || (has(self.parent) && has(self.child))",message="a formats rule that sets lengthUnit must set parent and child too: their sizes are counted in its unit"
// +kubebuilder:validation:XValidation:rule="!has(self.child) || (!has(self.child.boundaries) && !has(self.child.minChunkSize))",message="boundaries and minChunkSize apply to parents only: set them under parent, not child"
type FormatRule struct {
	// match selects the documents the rule applies to.
	// +required
	Match FormatMatch `json:"match"`

	// lengthUnit is the unit of the rule's sizes, Characters or Tokens;
	// the policy's when left out. A rule that sets it sets parent and
	// child too.
	// +optional
	LengthUnit LengthUnit `json:"lengthUnit,omitempty"`

	// tokenizer counts tokens when the rule's lengthUnit is Tokens; the
	// policy's when left out.
	// +optional
	Tokenizer Tokenizer `json:"tokenizer,omitempty"`

	// separators chooses where these documents may be cut. Left out, code
	// gets its language's separators (preset Language) and every other
	// format the policy's separators.
	// +optional
	Separators *Separators `json:"separators,omitempty"`

	// parent sizes these documents' parents; the policy's when left out.
	// +optional
	Parent *ChunkSize `json:"parent,omitempty"`

	// child sizes these documents' children; the policy's when left out.
	// +optional
	Child *ChunkSize `json:"child,omitempty"`
}

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
// +kubebuilder:validation:XValidation:rule="!has(self.formats) || self.formats.all(r, (has(r.child) ? r.child.chunkSize : (has(self.child) ? self.child.chunkSize : 300)) < (has(r.parent) ? r.parent.chunkSize : (has(self.parent) ? self.parent.chunkSize : 1500)))",message="formats: in every rule child.chunkSize must be smaller than parent.chunkSize (a rule that leaves parent or child out takes the policy's, by default 1500 and 300)"
// +kubebuilder:validation:XValidation:rule="!has(self.formats) || !has(self.strategy) || self.strategy != 'SentenceWindow' || self.formats.all(r, !has(r.parent) || !has(r.parent.boundaries) || r.parent.boundaries != 'Sections')",message="formats: parent.boundaries Sections needs strategy ParentChild: sentence windows are not cut at sections"
// +kubebuilder:validation:XValidation:rule="!has(self.formats) || self.formats.all(r, !has(r.match.format) || self.formats.filter(o, has(o.match.format) && o.match.format == r.match.format).size() == 1)",message="formats: two rules match the same format; merge them into one"
// +kubebuilder:validation:XValidation:rule="!has(self.formats) || self.formats.all(r, !has(r.match.languages) || r.match.languages.all(l, self.formats.filter(o, has(o.match.languages) && l in o.match.languages).size() == 1))",message="formats: two rules name the same language; a language may appear in one rule only"
// +kubebuilder:validation:XValidation:rule="!has(self.levels) || !has(self.strategy) || self.strategy != 'SentenceWindow'",message="levels need strategy ParentChild: sentence windows have one level of sentences"
// +kubebuilder:validation:XValidation:rule="!has(self.section) || (has(self.levels) && 'Section' in self.levels)",message="section sizes the Section level: add Section to levels, or remove section"
// +kubebuilder:validation:XValidation:rule="!has(self.section) || (!has(self.section.boundaries) && !has(self.section.chunkOverlap))",message="sections are cut at headings and never overlap: remove section.boundaries and section.chunkOverlap"
// +kubebuilder:validation:XValidation:rule="!has(self.levels) || !('Section' in self.levels) || !has(self.parent) || !has(self.parent.boundaries) || self.parent.boundaries != 'Sections'",message="the Section level already cuts documents at their headings: leave parent.boundaries Recursive"
// +kubebuilder:validation:XValidation:rule="!has(self.section) || !has(self.levels) || !('Parent' in self.levels) || self.section.chunkSize > (has(self.parent) ? self.parent.chunkSize : 1500)",messageExpression="'section.chunkSize %d must be larger than parent.chunkSize %d'.format([self.section.chunkSize, has(self.parent) ? self.parent.chunkSize : 1500])"
// +kubebuilder:validation:XValidation:rule="!has(self.levels) || !('Section' in self.levels) || !has(self.formats) || self.formats.all(r, !has(r.parent) || !has(r.parent.boundaries) || r.parent.boundaries != 'Sections')",message="formats: the Section level already cuts documents at their headings: leave parent.boundaries Recursive in every rule"
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

	// levels are the levels each document is split into, largest first,
	// from Document, Section, Parent, Child and Sentence: two to five of
	// them, each at most once. The smallest is embedded and searched; the
	// others are kept in the parent store, each unit knowing the one that
	// holds it, so a query may return the level that holds its evidence.
	// Defaults to [Parent, Child], the two levels of parent-child
	// retrieval.
	// +kubebuilder:validation:MinItems=2
	// +kubebuilder:validation:MaxItems=5
	// +listType=set
	// +kubebuilder:validation:XValidation:rule="self.map(l, {'Document': 0, 'Section': 1, 'Parent': 2, 'Child': 3, 'Sentence': 4}[l]).isSorted()",message="levels are listed largest first, in the order Document, Section, Parent, Child, Sentence"
	// +optional
	Levels []Level `json:"levels,omitempty"`

	// section sizes the units of the Section level: chunkSize is the
	// longest section kept whole (longer ones are cut at the headings or
	// definitions inside them, then by the recursive splitter), by default
	// four times parent.chunkSize; minChunkSize is the shortest section
	// that stands alone, by default a tenth of chunkSize. Only with
	// Section in levels.
	// +optional
	Section *ChunkSize `json:"section,omitempty"`

	// window sizes the sentence window of the SentenceWindow strategy.
	// +optional
	Window *Window `json:"window,omitempty"`

	// formats gives some formats or languages their own separators, unit
	// and sizes (code in tokens, say, while prose stays in characters).
	// The rule naming a document's language applies, else the one naming
	// its format, else the policy's own settings. Without a rule, code is
	// split with its language's separators and, with parent.boundaries
	// Sections, at its top-level definitions; other formats use the
	// policy's settings.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Formats []FormatRule `json:"formats,omitempty"`
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
