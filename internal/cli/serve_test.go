package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/parentrag/parentrag/internal/cmbundle"
	"github.com/parentrag/parentrag/internal/server"
)

// syncBuffer is a bytes.Buffer safe to write from the command while the
// test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runningServe is a parentrag serve command running in process.
type runningServe struct {
	stderr *syncBuffer
	cancel context.CancelFunc
	done   chan error
	url    string
}

var servingAddr = regexp.MustCompile(`msg=serving addr=(\S+)`)

// startServe runs serve with args (plus --addr 127.0.0.1:0) in a goroutine
// and waits until it logs the address it listens on.
func startServe(t *testing.T, reader newReader, args ...string) *runningServe {
	t.Helper()
	cmd := NewRootCommand()
	if reader != nil {
		cmd = newServeCommandWith(reader)
		cmd.SilenceUsage = true
	} else {
		args = append([]string{"serve"}, args...)
	}
	rs := &runningServe{stderr: &syncBuffer{}, done: make(chan error, 1)}
	cmd.SetArgs(append(args, "--addr", "127.0.0.1:0"))
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(rs.stderr)
	ctx, cancel := context.WithCancel(context.Background())
	rs.cancel = cancel
	go func() { rs.done <- cmd.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-rs.done
	})
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := servingAddr.FindStringSubmatch(rs.stderr.String()); m != nil {
			rs.url = "http://" + m[1]
			return rs
		}
		select {
		case err := <-rs.done:
			t.Fatalf("serve exited before listening: %v\nstderr: %s", err, rs.stderr)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("serve logged no address in 10s: %s", rs.stderr)
	return nil
}

// waitReady polls /readyz until it answers 200.
func (rs *runningServe) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(rs.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("not ready in 30s: %s", rs.stderr)
}

// stop cancels the command's context and returns what it returned.
func (rs *runningServe) stop(t *testing.T) error {
	t.Helper()
	rs.cancel()
	select {
	case err := <-rs.done:
		rs.done <- err // for the cleanup
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop within 30s of cancel")
		return nil
	}
}

// retrieve posts body to /v1/retrieve and decodes a 200 answer.
func (rs *runningServe) retrieve(t *testing.T, body string) server.RetrieveResponse {
	t.Helper()
	resp, err := http.Post(rs.url+"/v1/retrieve", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out server.RetrieveResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/retrieve %s: %d, %v", body, resp.StatusCode, err)
	}
	return out
}

// localIndex indexes the test corpus into a new directory.
func localIndex(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	index := filepath.Join(tmp, "index")
	policy := writeFile(t, tmp, "policy.yaml", testPolicy)
	mustExecute(t, "local", "index", "--quiet", "--policy", policy, "--out", index, testCorpus(t, tmp))
	return index
}

// checkLoadedLine checks the one log line about the loaded revision.
func checkLoadedLine(t *testing.T, stderr string) {
	t.Helper()
	var loaded []string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, `msg="revision loaded"`) {
			loaded = append(loaded, line)
		}
	}
	if len(loaded) != 1 {
		t.Fatalf("%d revision loaded lines in %q, want 1", len(loaded), stderr)
	}
	for _, part := range []string{"revision=", "documents=3", "parents=", "children=", "loadTime="} {
		if !strings.Contains(loaded[0], part) {
			t.Errorf("loaded line %q lacks %s", loaded[0], part)
		}
	}
}

func TestServeIndex(t *testing.T) {
	index := localIndex(t)
	rs := startServe(t, nil, "--index", index, "--max-parents", "2")
	rs.waitReady(t)
	resp, err := http.Get(rs.url + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %v %v", resp, err)
	}
	resp.Body.Close()

	got := rs.retrieve(t, `{"query": "zebra stripes keep flies away"}`)
	if len(got.Results) == 0 || len(got.Results) > 2 || got.Results[0].DocID != "zebra.md" || got.Revision == "" {
		t.Errorf("answer %+v: want at most 2 parents (the --max-parents default), zebra.md first", got)
	}
	got = rs.retrieve(t, `{"query": "lionesses pride cubs", "maxParents": 1}`)
	if len(got.Results) != 1 || got.Results[0].DocID != "lion.md" {
		t.Errorf("answer %+v: want lion.md only", got)
	}
	checkLoadedLine(t, rs.stderr.String())
	if err := rs.stop(t); err != nil {
		t.Errorf("serve after cancel: %v, want nil", err)
	}
	if _, err := http.Get(rs.url + "/healthz"); err == nil {
		t.Error("still answering after it returned")
	}
}

func TestServeConfigMap(t *testing.T) {
	index := localIndex(t)
	packer, err := cmbundle.NewPacker(index, "team-a", "docs-rev", map[string]string{cmbundle.LabelCorpus: "docs"})
	if err != nil {
		t.Fatal(err)
	}
	var objs []client.Object
	if err := packer.Each(func(cm *corev1.ConfigMap) error {
		objs = append(objs, cm.DeepCopy())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	reader := func() (client.Reader, error) { return fake.NewClientBuilder().WithObjects(objs...).Build(), nil }
	t.Setenv("POD_NAMESPACE", "team-a")
	dataDir := t.TempDir()

	rs := startServe(t, reader, "--configmap", "docs-rev", "--data-dir", dataDir)
	rs.waitReady(t)
	got := rs.retrieve(t, `{"query": "baobab tree water"}`)
	if len(got.Results) == 0 || got.Results[0].DocID != "plants/baobab.txt" {
		t.Errorf("answer %+v: want plants/baobab.txt first", got)
	}
	checkLoadedLine(t, rs.stderr.String())
	if err := rs.stop(t); err != nil {
		t.Errorf("serve after cancel: %v, want nil", err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "docs-rev", "manifest.json")); err != nil {
		t.Errorf("the revision is not unpacked under --data-dir: %v", err)
	}
}

func TestServeFailures(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "")
	empty := t.TempDir()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{}, "--index or --configmap is required"},
		{[]string{"--index", empty, "--configmap", "x", "--namespace", "ns"}, "exclusive"},
		{[]string{"--configmap", "x"}, "--namespace"},
		{[]string{"--index", empty, "--aggregation", "Median"}, `--aggregation "Median"`},
		{[]string{"--index", empty, "--max-parents", "0"}, "--max-parents 0"},
		{[]string{"--index", empty, "--child-top-k", "1001"}, "--child-top-k 1001"},
		{[]string{"--index", empty, "--addr", "256.0.0.1:99999"}, "--addr"},
		{[]string{"--index", filepath.Join(empty, "nope")}, "no such file"},
		{[]string{"--index", empty, "--addr", "127.0.0.1:0"}, "not a complete parentrag index"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, _, err := execute(t, append([]string{"serve"}, c.args...)...)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("serve %v: %v, want one line naming %q", c.args, err, c.want)
			}
		})
	}
}

// blockingReader returns a reader func that waits for release (or ctx)
// before returning a fake client holding nothing.
func blockingReader(ctx context.Context, release <-chan struct{}) newReader {
	return func() (client.Reader, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return fake.NewClientBuilder().Build(), nil
	}
}

func TestServeAnswersHealthzWhileLoading(t *testing.T) {
	release := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rs := startServe(t, blockingReader(ctx, release), "--configmap", "docs-rev", "--namespace", "ns", "--data-dir", t.TempDir())
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 503} {
		resp, err := http.Get(rs.url + path)
		if err != nil || resp.StatusCode != want {
			t.Fatalf("%s while loading: %v %v, want %d", path, resp, err, want)
		}
		resp.Body.Close()
	}
	resp, err := http.Post(rs.url+"/v1/retrieve", "application/json", strings.NewReader(`{"query": "x"}`))
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("/v1/retrieve while loading: %v %v, want 503", resp, err)
	}
	resp.Body.Close()
	// Stopped while loading: a clean exit, not a load failure.
	rs.cancel()
	cancel()
	if err := rs.stop(t); err != nil {
		t.Errorf("serve stopped while loading: %v, want nil", err)
	}
}

func TestServeMissingConfigMap(t *testing.T) {
	reader := func() (client.Reader, error) { return fake.NewClientBuilder().Build(), nil }
	cmd := newServeCommandWith(reader)
	cmd.SilenceUsage = true
	cmd.SetArgs([]string{"--configmap", "docs-rev", "--namespace", "ns", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir()})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.ExecuteContext(context.Background())
	if err == nil || !strings.Contains(err.Error(), "ns/docs-rev") || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("serve of a missing configmap: %v, want an error naming ns/docs-rev", err)
	}
	reader = func() (client.Reader, error) { return nil, fmt.Errorf("finding the cluster: no kubeconfig") }
	cmd = newServeCommandWith(reader)
	cmd.SilenceUsage = true
	cmd.SetArgs([]string{"--configmap", "docs-rev", "--namespace", "ns", "--addr", "127.0.0.1:0"})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.ExecuteContext(context.Background()); err == nil || !strings.Contains(err.Error(), "finding the cluster") {
		t.Fatalf("serve without a cluster: %v", err)
	}
}

// TestServeInspectorFlag checks that the inspector's page is served only
// with --inspector.
func TestServeInspectorFlag(t *testing.T) {
	index := localIndex(t)
	for args, want := range map[string]int{"": http.StatusNotFound, "--inspector": http.StatusOK} {
		rs := startServe(t, nil, append([]string{"--index", index, "--shutdown-delay", "0"}, strings.Fields(args)...)...)
		resp, err := http.Get(rs.url + "/inspector/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("serve %s: GET /inspector/ %d, want %d", args, resp.StatusCode, want)
		}
		if err := rs.stop(t); err != nil {
			t.Errorf("serve %s: %v", args, err)
		}
	}
}
