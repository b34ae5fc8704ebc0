package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// shape is what checkFields knows of an object: its fields, each with the
// shape of its value when that is an object to check too; nil fields means
// any key (metadata), still checked for duplicates.
type shape struct {
	names  []string
	fields map[string]*shape
}

// requestShape is the request body: the top-level fields, spelt exactly,
// filter's fields, and filter.metadata's keys.
var requestShape = &shape{
	names: []string{"query", "maxParents", "childTopK", "aggregation", "budget", "filter"},
	fields: map[string]*shape{
		"query": nil, "maxParents": nil, "childTopK": nil, "aggregation": nil, "budget": nil,
		"filter": {
			names:  []string{"docId", "docIdPrefix", "metadata"},
			fields: map[string]*shape{"docId": nil, "docIdPrefix": nil, "metadata": {}},
		},
	},
}

// checkFields walks the JSON object in data and refuses, naming the field,
// a key that is not one of the request's fields spelt exactly (encoding/json
// matches names case-insensitively) and a key given twice (encoding/json
// keeps the last), at the top level, in filter and in filter.metadata.
// What is not well-formed JSON is left for the decoder to report.
func checkFields(data []byte) error {
	return walkObject(json.NewDecoder(bytes.NewReader(data)), "", requestShape)
}

// walkObject checks the keys of the object dec is at against sh.
func walkObject(dec *json.Decoder, prefix string, sh *shape) error {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil // not an object: the decoder says so
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		key, _ := tok.(string)
		if seen[key] {
			return badRequest("duplicate field %q in the request body: give each field once", prefix+key)
		}
		seen[key] = true
		var sub *shape
		if sh.names != nil {
			var known bool
			if sub, known = sh.fields[key]; !known {
				return unknownField(prefix, key, sh.names)
			}
		}
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			return nil
		}
		if sub == nil {
			continue
		}
		if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
			continue
		}
		if err := walkObject(json.NewDecoder(bytes.NewReader(raw)), prefix+key+".", sub); err != nil {
			return err
		}
	}
	return nil
}

// unknownField is the 400 for a key that is not among names.
func unknownField(prefix, key string, names []string) error {
	for _, f := range names {
		if strings.EqualFold(f, key) {
			return badRequest("unknown field %q: field names are case-sensitive, did you mean %q?", prefix+key, prefix+f)
		}
	}
	return badRequest("unknown field %q: want one of %s", prefix+key, strings.Join(names, ", "))
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
