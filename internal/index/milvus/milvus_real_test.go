package milvus_test

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/index/milvus"
)

// TestSuiteOnRealMilvus runs the shared suite (sparse parity with the
// embedded store, filters, grouping, deletes, row counts, aliases, schema
// checks) against the Milvus at MILVUS_ADDR (host:port; MILVUS_TOKEN and
// MILVUS_DATABASE optional). Collections are named parentrag_test_<time>_<n>
// and dropped at the end.
func TestSuiteOnRealMilvus(t *testing.T) {
	addr := os.Getenv("MILVUS_ADDR")
	if addr == "" {
		t.Skip("MILVUS_ADDR is not set: no real Milvus to run the suite against (the same suite runs against milvustest in TestSuiteOnTestServer)")
	}
	prefix := fmt.Sprintf("parentrag_test_%d", time.Now().Unix())
	var n atomic.Int64
	suite{
		config: func(*testing.T) milvus.Config {
			return milvus.Config{
				Address:     addr,
				Token:       os.Getenv("MILVUS_TOKEN"),
				Database:    os.Getenv("MILVUS_DATABASE"),
				Collection:  fmt.Sprintf("%s_%d", prefix, n.Add(1)),
				Consistency: "Strong", // reads right after deletes and upserts
			}
		},
		strict: false,
	}.run(t)
}
