package index

import (
	"fmt"
	"strings"
)

// Metric selects how dense vectors are compared. Every metric yields a score
// where higher is better, so Search always orders by descending score.
type Metric uint8

const (
	// IP scores a dense match by the inner product of query and record.
	IP Metric = iota
	// Cosine scores a dense match by cosine similarity. Records are stored
	// normalized to unit length (a zero vector stays zero and scores 0) and
	// the query is normalized before scoring; a zero query matches nothing.
	Cosine
	// L2 scores a dense match by the negated Euclidean distance, so the
	// nearest record has the highest score (0 for an identical vector).
	L2
)

// String returns the Milvus spelling of the metric: "IP", "COSINE" or "L2".
func (m Metric) String() string {
	switch m {
	case IP:
		return "IP"
	case Cosine:
		return "COSINE"
	case L2:
		return "L2"
	}
	return fmt.Sprintf("Metric(%d)", uint8(m))
}

// ParseMetric parses a metric name case-insensitively ("ip", "cosine",
// "l2"); the empty string means IP. Any other name is ErrInvalidInput.
func ParseMetric(s string) (Metric, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "", "IP":
		return IP, nil
	case "COSINE":
		return Cosine, nil
	case "L2":
		return L2, nil
	}
	return 0, fmt.Errorf("unknown metric %q: %w", s, ErrInvalidInput)
}

// Valid says whether m is one of the metrics above.
func (m Metric) Valid() bool { return m <= L2 }
