package glove

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strings"
)

// Model names the server answers to: the pooling is chosen by the model a
// request names.
const (
	ModelSIF  = "glove-sif"
	ModelMean = "glove-mean"
)

// Limits of one request, as OpenAI's: at most MaxInputs texts and
// MaxRequestBytes of JSON.
const (
	MaxInputs       = 2048
	MaxRequestBytes = 16 << 20
)

// Server answers POST /v1/embeddings with GloVe sentence vectors, in the
// OpenAI shape (float or base64 encoding), and GET /v1/models.
type Server struct {
	encoders map[string]*Encoder
}

// NewServer serves m under ModelSIF and ModelMean.
func NewServer(m *Model) (*Server, error) {
	s := &Server{encoders: map[string]*Encoder{}}
	for name, p := range map[string]Pooling{ModelSIF: SIF, ModelMean: Mean} {
		e, err := NewEncoder(m, p)
		if err != nil {
			return nil, err
		}
		s.encoders[name] = e
	}
	return s, nil
}

// embeddingsRequest is OpenAI's request; Input is a string or a list of
// strings (token arrays are refused).
type embeddingsRequest struct {
	Input          json.RawMessage `json:"input"`
	Model          string          `json:"model"`
	Dimensions     *int            `json:"dimensions"`
	EncodingFormat string          `json:"encoding_format"`
	User           string          `json:"user"`
}

// embedding is one item of the answer; Embedding is []float32 or a
// base64 string.
type embedding struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

// ServeHTTP routes the two endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/v1/models" && r.Method == http.MethodGet:
		s.models(w)
	case r.URL.Path == "/v1/embeddings" && r.Method == http.MethodPost:
		s.embeddings(w, r)
	case r.URL.Path == "/v1/embeddings" || r.URL.Path == "/v1/models":
		writeError(w, http.StatusMethodNotAllowed, "", fmt.Sprintf("method %s is not allowed on %s", r.Method, r.URL.Path))
	default:
		writeError(w, http.StatusNotFound, "", fmt.Sprintf("no endpoint %s: this server has POST /v1/embeddings and GET /v1/models", r.URL.Path))
	}
}

// models lists the served models.
func (s *Server) models(w http.ResponseWriter) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		OwnedBy string `json:"owned_by"`
	}
	out := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list"}
	for name := range s.encoders {
		out.Data = append(out.Data, model{ID: name, Object: "model", OwnedBy: "parentrag"})
	}
	sort.Slice(out.Data, func(i, j int) bool { return out.Data[i].ID < out.Data[j].ID })
	writeJSON(w, http.StatusOK, out)
}

// embeddings answers one request: each input's vector, in order.
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	var req embeddingsRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	if err := dec.Decode(&req); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "", fmt.Sprintf("the request is over %d bytes", MaxRequestBytes))
			return
		}
		writeError(w, http.StatusBadRequest, "", "the body is not a JSON object: "+err.Error())
		return
	}
	inputs, enc, param, err := s.check(&req)
	if err != nil {
		writeError(w, http.StatusBadRequest, param, err.Error())
		return
	}
	data := make([]embedding, len(inputs))
	tokens := 0
	for i, text := range inputs {
		vec, _ := enc.Encode(text)
		tokens += len(Words(text))
		data[i] = embedding{Object: "embedding", Index: i, Embedding: encodeVector(vec, req.EncodingFormat)}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list", "data": data, "model": req.Model,
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens},
	})
}

// check validates a request and returns its inputs and encoder, or the
// parameter at fault and why.
func (s *Server) check(req *embeddingsRequest) ([]string, *Encoder, string, error) {
	enc, ok := s.encoders[req.Model]
	if !ok {
		return nil, nil, "model", fmt.Errorf("unknown model %q: this server has %s (SIF pooling) and %s (plain mean)", req.Model, ModelSIF, ModelMean)
	}
	if req.Dimensions != nil && *req.Dimensions != enc.Dimensions() {
		return nil, nil, "dimensions", fmt.Errorf("dimensions %d: %s has %d and cannot shorten them", *req.Dimensions, req.Model, enc.Dimensions())
	}
	if f := req.EncodingFormat; f != "" && f != "float" && f != "base64" {
		return nil, nil, "encoding_format", fmt.Errorf("encoding_format %q: want float or base64", f)
	}
	inputs, err := parseInput(req.Input)
	if err != nil {
		return nil, nil, "input", err
	}
	return inputs, enc, "", nil
}

// parseInput reads input as one string or a list of 1 to MaxInputs
// non-empty strings.
func parseInput(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	var one string
	var many []string
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return nil, fmt.Errorf("input is required")
	case json.Unmarshal(raw, &one) == nil:
		many = []string{one}
	case json.Unmarshal(raw, &many) != nil:
		return nil, fmt.Errorf("input must be a string or a list of strings (token arrays are not accepted)")
	}
	if len(many) == 0 || len(many) > MaxInputs {
		return nil, fmt.Errorf("input holds %d texts: send 1 to %d", len(many), MaxInputs)
	}
	for i, text := range many {
		if strings.TrimSpace(text) == "" {
			return nil, fmt.Errorf("input %d is empty", i)
		}
	}
	return many, nil
}

// encodeVector writes a vector as floats, or as base64 of its
// little-endian float32 bytes.
func encodeVector(v []float32, format string) any {
	if format != "base64" {
		return v
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// writeError answers OpenAI's error shape.
func writeError(w http.ResponseWriter, status int, param, msg string) {
	body := map[string]any{"message": msg, "type": "invalid_request_error", "code": nil}
	if param != "" {
		body["param"] = param
	}
	writeJSON(w, status, map[string]any{"error": body})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
