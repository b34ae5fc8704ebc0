package split

// Document, CreateDocuments and SplitDocuments are LangChain's, for the
// conformance cases of create_documents and split_documents.

// Document is LangChain's Document: a text and its metadata.
type Document struct {
	Text     string
	Metadata map[string]any
}

// StartIndexKey is the metadata key CreateDocuments sets when asked to add
// start indexes.
const StartIndexKey = "start_index"

// CreateDocuments is LangChain's create_documents: one Document per chunk
// of each text, with a deep copy of that text's metadata (none when
// metadatas is shorter), plus StartIndexKey (an int, see Split) when
// addStartIndex is set, overwriting any value there.
func CreateDocuments(s TextSplitter, texts []string, metadatas []map[string]any, addStartIndex bool) []Document {
	var docs []Document
	for i, text := range texts {
		var meta map[string]any
		if i < len(metadatas) {
			meta = metadatas[i]
		}
		if addStartIndex {
			for _, c := range s.Split(text) {
				m := copyMetadata(meta)
				m[StartIndexKey] = c.Start
				docs = append(docs, Document{Text: c.Text, Metadata: m})
			}
			continue
		}
		for _, c := range s.SplitText(text) {
			docs = append(docs, Document{Text: c, Metadata: copyMetadata(meta)})
		}
	}
	return docs
}

// SplitDocuments is LangChain's split_documents: CreateDocuments over the
// documents' texts and metadata.
func SplitDocuments(s TextSplitter, docs []Document, addStartIndex bool) []Document {
	texts := make([]string, len(docs))
	metas := make([]map[string]any, len(docs))
	for i, d := range docs {
		texts[i], metas[i] = d.Text, d.Metadata
	}
	return CreateDocuments(s, texts, metas, addStartIndex)
}

// copyMetadata deep-copies m's maps and slices (of the kinds JSON decodes
// to, and map[string]string and []string); other values are shared.
func copyMetadata(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = copyValue(v)
	}
	return out
}

func copyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return copyMetadata(t)
	case []any:
		c := make([]any, len(t))
		for i, e := range t {
			c[i] = copyValue(e)
		}
		return c
	case map[string]string:
		c := make(map[string]string, len(t))
		for k, e := range t {
			c[k] = e
		}
		return c
	case []string:
		return append([]string(nil), t...)
	}
	return v
}
