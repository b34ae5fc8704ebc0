package cli

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serve --auth=bearer answers a query only with a token from the
// directory, and never writes the token to its log.
func TestServeBearerAuth(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app"), []byte("s3cret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rs := startServe(t, nil, "--index", localIndex(t), "--shutdown-delay", "0", "--auth", "bearer", "--auth-token-dir", dir)
	rs.waitReady(t)
	for token, want := range map[string]int{"": 401, "guess": 401, "s3cret-token": 200} {
		req, _ := http.NewRequest("POST", rs.url+"/v1/retrieve", strings.NewReader(`{"query": "parents"}`))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("token %q: %d, want %d", token, resp.StatusCode, want)
		}
	}
	if err := rs.stop(t); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(rs.stderr.String(), "s3cret-token") {
		t.Fatalf("the log shows the token:\n%s", rs.stderr)
	}
}

// Auth flags that cannot work together are refused before anything
// listens, with a message that names the flag to fix.
func TestServeAuthFlagsRefuseBadCombinations(t *testing.T) {
	index := localIndex(t)
	empty := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--auth", "token"}, `--auth "token": want none, bearer or kubernetes`},
		{[]string{"--auth", "bearer"}, "--auth=bearer needs --auth-token-dir"},
		{[]string{"--auth-token-dir", empty}, "--auth-token-dir is only read with --auth=bearer"},
		{[]string{"--auth", "kubernetes"}, "--auth=kubernetes needs --auth-retriever namespace/name"},
		{[]string{"--auth", "kubernetes", "--auth-retriever", "docs"}, "--auth=kubernetes needs --auth-retriever namespace/name"},
		{[]string{"--auth-retriever", "team/docs"}, "--auth-retriever is only read with --auth=kubernetes"},
		{[]string{"--auth", "bearer", "--auth-token-dir", empty}, "holds no token"},
	} {
		_, _, err := execute(t, append([]string{"serve", "--index", index, "--addr", "127.0.0.1:0"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("serve %v: %v, want an error that says %q", tc.args, err, tc.want)
		}
	}
}
