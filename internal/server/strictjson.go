package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// shape is what checkFields knows of an object: its fields, each with the
// shape of its value when that is an object to check too; nil fields means
// any key (metadata), still checked for duplicates.
type shape struct {
	names  []string
	fields map[string]*shape
	// want says what an empty body should hold, for the top-level shape.
	want string
}

// requestShape is the request body: the top-level fields, spelt exactly,
// filter's fields, and filter.metadata's keys.
var requestShape = &shape{
	want:  "a JSON object with a query",
	names: []string{"query", "maxParents", "childTopK", "aggregation", "budget", "filter", "mode"},
	fields: map[string]*shape{
		"query": nil, "maxParents": nil, "childTopK": nil, "aggregation": nil, "budget": nil, "mode": nil,
		"filter": {
			names:  []string{"docId", "docIdPrefix", "metadata"},
			fields: map[string]*shape{"docId": nil, "docIdPrefix": nil, "metadata": {}},
		},
	},
}

// decodeStrictJSON decodes the one JSON object in data into v, checking
// its fields against sh (see checkFields); prefix names where data is in
// the request, for messages.
func decodeStrictJSON(data []byte, prefix string, sh *shape, v any) error {
	if err := checkFields(data, prefix, sh); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.Decode(&struct{}{}) != io.EOF {
		err = errors.New("trailing data after the JSON object")
	}
	switch {
	case errors.Is(err, io.EOF) && prefix == "":
		return badRequest("empty request body: want %s", sh.want)
	case err != nil && prefix != "":
		return badRequest("invalid %s: %v", strings.TrimSuffix(prefix, "."), err)
	case err != nil:
		return badRequest("invalid request body: %v", err)
	}
	return nil
}

// checkFields walks the JSON object in data and refuses, naming the field,
// a key that is not one of sh's fields spelt exactly (encoding/json
// matches names case-insensitively) and a key given twice (encoding/json
// keeps the last), at the top level and in the objects sh describes.
// What is not well-formed JSON is left for the decoder to report.
func checkFields(data []byte, prefix string, sh *shape) error {
	return walkObject(json.NewDecoder(bytes.NewReader(data)), prefix, sh)
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
