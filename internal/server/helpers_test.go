package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/bundle/bundletest"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// corpus is a few documents on distinct topics, two of them sharing words
// and metadata so filters have something to choose between.
func corpus() []hierarchy.Document {
	return []hierarchy.Document{
		{ID: "ops/rollout.md", Title: "Rollout", Text: "# Rollout\n\n" +
			"A new index revision is built beside the serving one. Query pods keep reading the old revision.\n\n" +
			"Verification compares row counts with the manifest and resolves sample children to parents.",
			Metadata: map[string]string{"team": "platform", "lang": "en"}},
		{ID: "ops/rollback.md", Title: "Rollback", Text: "# Rollback\n\n" +
			"Rolling back points the retriever at the previous revision, which is kept until garbage collection.\n\n" +
			"The old revision's parents and children are still there, so rollback is instant.",
			Metadata: map[string]string{"team": "search", "lang": "en"}},
		{ID: "garden.md", Title: "Garden", Text: "# Garden\n\n" +
			"Tomatoes need full sun, deep watering and a stake to climb. Basil grows well beside tomatoes.\n\n" +
			"Compost improves the soil; mulch keeps moisture in during the dry summer weeks. The garden revision of the plan is old."},
		{ID: "sailing.txt", Text: "Sailing upwind means tacking: the boat zigzags across the wind. " +
			"A reef in the mainsail reduces heeling in strong gusts. The harbor master assigns moorings.",
			Metadata: map[string]string{"lang": "en"}},
	}
}

// saveBundle indexes docs and saves them as a bundle of revision rev,
// returning its directory.
func saveBundle(t testing.TB, docs []hierarchy.Document, rev string) string {
	return bundletest.Save(t, docs, rev)
}

// openBundle saves docs as revision rev and opens the bundle, closing it
// when the test ends.
func openBundle(t testing.TB, docs []hierarchy.Document, rev string) *bundle.Bundle {
	t.Helper()
	b, err := bundle.Open(saveBundle(t, docs, rev))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// do sends a request and returns the status code and body, failing the
// test on a transport error. Call it from the test's goroutine only.
func do(t testing.TB, c *http.Client, method, url, body string) (int, []byte) {
	t.Helper()
	code, data, err := send(c, method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	return code, data
}

// send sends a request and returns the status code and body; it is safe
// in any goroutine.
func send(c *http.Client, method, url, body string) (int, []byte, error) {
	req, err := http.NewRequest(method, url, bytes.NewBufferString(body))
	if err != nil {
		return 0, nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// doRequest sends req and returns the response, its body read.
func doRequest(t testing.TB, c *http.Client, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, data
}

// decodeStrict decodes data into v, refusing fields v does not have.
func decodeStrict(t testing.TB, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
}
