package policy

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/retrieval/build"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

// Compiled is a validated policy turned into the core's splitters.
type Compiled struct {
	// Spec is the normalised spec: every default explicit.
	Spec v1alpha1.ChunkingPolicySpec
	// Revision is the spec's revision; it enters every parent and child id.
	Revision string
	// Builder splits documents into parents and children.
	Builder *hierarchy.Builder
	// Length measures texts in the policy's length unit.
	Length split.LengthFunc
}

// Compile validates spec and builds its splitters. The parent and child
// splitters are LangChain RecursiveCharacterTextSplitters with
// keep_separator=start, strip_whitespace and start indexes, as
// ParentDocumentRetriever uses them.
func Compile(spec *v1alpha1.ChunkingPolicySpec) (*Compiled, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	norm := spec.Normalized()
	length, err := LengthFunc(string(norm.LengthUnit), string(norm.Tokenizer))
	if err != nil {
		return nil, err
	}
	own, err := newLevels(norm, documentKind{})
	if err != nil {
		return nil, err
	}
	formats, err := newRouter(spec)
	if err != nil {
		return nil, err
	}
	rev := spec.Revision()
	b := &hierarchy.Builder{
		Strategy: chunking.Strategy(norm.Strategy),
		Revision: rev,
		Parent:   own.Parent,
		Child:    own.Child,
		Window:   norm.GetWindowSentences(),
		Router:   formats,
		Section:  own.Section,
		Shape:    shapeOf(norm),
	}
	return &Compiled{Spec: norm, Revision: rev, Builder: b, Length: length}, nil
}

// newLevels builds the parent and child splitters of normalised settings
// for documents of kind k (the zero kind for the policy's own settings).
func newLevels(norm v1alpha1.ChunkingPolicySpec, k documentKind) (hierarchy.Levels, error) {
	length, err := LengthFunc(string(norm.LengthUnit), string(norm.Tokenizer))
	if err != nil {
		return hierarchy.Levels{}, err
	}
	seps, regex, err := separators(*norm.Separators, k.language)
	if err != nil {
		return hierarchy.Levels{}, err
	}
	parent, err := newParentSplitter(norm, seps, regex, length, k)
	if err != nil {
		return hierarchy.Levels{}, fmt.Errorf("parent splitter: %w", err)
	}
	child, err := newSplitter(*norm.Child, seps, regex, length)
	if err != nil {
		return hierarchy.Levels{}, fmt.Errorf("child splitter: %w", err)
	}
	section, err := newSectionSplitter(norm, seps, regex, length, k)
	if err != nil {
		return hierarchy.Levels{}, fmt.Errorf("section splitter: %w", err)
	}
	return hierarchy.Levels{Parent: parent, Child: child, Section: section}, nil
}

// shapeOf returns the levels of a normalised spec as the builder names
// them; nil for the default two.
func shapeOf(norm v1alpha1.ChunkingPolicySpec) []hierarchy.Level {
	if len(norm.Levels) == 0 {
		return nil
	}
	out := make([]hierarchy.Level, len(norm.Levels))
	for i, l := range norm.Levels {
		out[i] = hierarchy.Level(strings.ToLower(string(l)))
	}
	return out
}

// newSectionSplitter builds the splitter of the Section level, nil without
// one: code of kind k cut at its definitions, other text at its Markdown
// headings, sections longer than section.chunkSize cut further by the
// recursive splitter, and pieces under section.minChunkSize merged into a
// neighbour.
func newSectionSplitter(norm v1alpha1.ChunkingPolicySpec, seps []string, regex bool, length split.LengthFunc, k documentKind) (hierarchy.Splitter, error) {
	if !norm.HasLevel(v1alpha1.LevelSection) {
		return nil, nil
	}
	size := norm.GetSection()
	within, err := newSplitter(v1alpha1.ChunkSize{ChunkSize: size.ChunkSize}, seps, regex, length)
	if err != nil {
		return nil, err
	}
	if k.format == v1alpha1.FormatCode {
		return split.NewCodeSectioner(split.CodeOptions{
			Language: split.Language(k.language), Within: within,
			ChunkSize: size.ChunkSize, MinChunkSize: size.MinChunkSize, Length: length,
		})
	}
	return split.NewSectioner(split.SectionOptions{
		Headers: split.NewMarkdownHeaderSplitter(split.MarkdownHeaderOptions{Headers: split.MarkdownHeadings()}),
		Within:  within, ChunkSize: size.ChunkSize, MinChunkSize: size.MinChunkSize, Length: length,
	}), nil
}

// LengthFunc returns the measure of a length unit: code points for
// Characters (or an empty unit), tokens of the named tokenizer for Tokens.
func LengthFunc(unit, tokenizer string) (split.LengthFunc, error) {
	switch v1alpha1.LengthUnit(unit) {
	case "", v1alpha1.LengthCharacters:
		return split.CodePoints, nil
	case v1alpha1.LengthTokens:
		if tokenizer == "" {
			tokenizer = string(v1alpha1.TokenizerCL100K)
		}
		return split.TokenLength(tokenizer)
	default:
		return nil, fmt.Errorf("unknown length unit %q", unit)
	}
}

// separators resolves the separator list and whether it holds regular
// expressions: custom entries when given, else the preset; the Language
// preset is the list of the document's language, the Default list when it
// has none (no language known, or perl).
func separators(s v1alpha1.Separators, language v1alpha1.Language) ([]string, bool, error) {
	if len(s.Custom) > 0 {
		return append([]string(nil), s.Custom...), s.Regex, nil
	}
	if s.Preset == v1alpha1.SeparatorsLanguage {
		if seps, err := split.LanguageSeparators(split.Language(language)); err == nil {
			return seps, true, nil
		}
		return split.DefaultSeparators(), false, nil
	}
	return split.Separators(strings.ToLower(string(s.Preset)))
}

// newParentSplitter builds the parent splitter: LangChain's recursive
// splitter alone for Recursive boundaries without a minChunkSize;
// otherwise, with Sections, a CodeSectioner that cuts code of kind k at its
// definitions, or a Sectioner that cuts other text at every Markdown
// heading; these split longer sections with the recursive splitter and
// merge pieces under minChunkSize into a neighbour.
func newParentSplitter(norm v1alpha1.ChunkingPolicySpec, seps []string, regex bool, length split.LengthFunc, k documentKind) (hierarchy.Splitter, error) {
	recursive, err := newSplitter(*norm.Parent, seps, regex, length)
	if err != nil {
		return nil, err
	}
	sections := norm.GetParentBoundaries() == v1alpha1.BoundariesSections
	if sections && k.format == v1alpha1.FormatCode {
		return split.NewCodeSectioner(split.CodeOptions{
			Language:     split.Language(k.language),
			Within:       recursive,
			ChunkSize:    norm.Parent.ChunkSize,
			MinChunkSize: norm.Parent.MinChunkSize,
			Length:       length,
		})
	}
	if !sections && norm.Parent.MinChunkSize == 0 {
		return recursive, nil
	}
	o := split.SectionOptions{
		Within:       recursive,
		ChunkSize:    norm.Parent.ChunkSize,
		MinChunkSize: norm.Parent.MinChunkSize,
		Length:       length,
	}
	if sections {
		o.Headers = split.NewMarkdownHeaderSplitter(split.MarkdownHeaderOptions{Headers: split.MarkdownHeadings()})
	}
	return split.NewSectioner(o), nil
}

// newSplitter builds one recursive splitter: LangChain's defaults
// (split.DefaultOptions) with the policy's sizes, separators and length.
func newSplitter(c v1alpha1.ChunkSize, seps []string, regex bool, length split.LengthFunc) (*split.Recursive, error) {
	o := split.DefaultOptions(c.ChunkSize, c.ChunkOverlap)
	o.Separators, o.IsSeparatorRegex, o.Length = seps, regex, length
	return split.NewRecursive(o)
}

// Manifested is the policy as a build records it in a revision's manifest.
func (c *Compiled) Manifested() build.Policy {
	spec, _ := json.Marshal(c.Spec)
	return build.Policy{Splitter: c.Builder, Revision: c.Revision, Spec: spec, LengthUnit: string(c.Spec.LengthUnit), Tokenizer: string(c.Spec.Tokenizer)}
}
