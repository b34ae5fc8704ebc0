package server

import (
	"encoding/json"
	"fmt"
	"strings"
)

// FileIDKey is the filter key that compares a result's file_id, its
// document id; every other key compares a document metadata value.
const FileIDKey = "file_id"

// openAIFilter is an OpenAI comparison filter (type eq, ne, gt, gte, lt,
// lte, in or nin, with key and value) or compound filter (type and or or,
// with filters).
type openAIFilter struct {
	Type    string            `json:"type"`
	Key     string            `json:"key,omitempty"`
	Value   json.RawMessage   `json:"value,omitempty"`
	Filters []json.RawMessage `json:"filters,omitempty"`
}

// openAIFilterShape is a filter object of either kind, spelt exactly.
var openAIFilterShape = &shape{
	names:  []string{"type", "key", "value", "filters"},
	fields: map[string]*shape{"type": nil, "key": nil, "value": nil, "filters": nil},
}

// mapOpenAIFilter adds the OpenAI filter in raw, found at path in the
// request, to f. parentrag's filter keeps parents matching every
// condition by equality, so it maps eq comparisons and and of them; any
// other comparison, or, and two values for one key are refused with a 400
// that says so.
func mapOpenAIFilter(raw json.RawMessage, path string, f *Filter) error {
	var of openAIFilter
	if err := decodeStrictJSON(raw, path+".", openAIFilterShape, &of); err != nil {
		return err
	}
	switch of.Type {
	case "eq":
		return mapEquality(&of, path, f)
	case "and":
		if len(of.Filters) == 0 {
			return badRequest("%s: an and filter needs filters", path)
		}
		for i, sub := range of.Filters {
			if err := mapOpenAIFilter(sub, fmt.Sprintf("%s.filters[%d]", path, i), f); err != nil {
				return err
			}
		}
		return nil
	case "ne", "gt", "gte", "lt", "lte", "in", "nin", "or":
		return badRequest("%s: filter type %q cannot be mapped onto this vector store's filter, which keeps results equal on every key given: use eq, or and of eq", path, of.Type)
	}
	return badRequest("%s.type %q: want eq or and (ne, gt, gte, lt, lte, in, nin and or are not supported)", path, of.Type)
}

// mapEquality adds an eq comparison to f: on file_id it keeps one
// document, on any other key a metadata value, which is a string.
func mapEquality(of *openAIFilter, path string, f *Filter) error {
	if of.Key == "" {
		return badRequest("%s.key is required", path)
	}
	var value string
	if err := json.Unmarshal(of.Value, &value); err != nil {
		return badRequest("%s.value: want a string (attributes of this vector store are strings), got %s", path, strings.TrimSpace(string(of.Value)))
	}
	if of.Key == FileIDKey {
		if f.DocID != "" && f.DocID != value {
			return badRequest("%s: %s is already %q: a result has one file id", path, FileIDKey, f.DocID)
		}
		f.DocID = value
		return nil
	}
	if f.Metadata == nil {
		f.Metadata = map[string]string{}
	}
	if old, ok := f.Metadata[of.Key]; ok && old != value {
		return badRequest("%s: key %q is already compared to %q: a result has one value per key", path, of.Key, old)
	}
	f.Metadata[of.Key] = value
	return nil
}
