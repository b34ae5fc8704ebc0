package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/inspector"
)

// runningUI is a parentrag local ui command running in process.
type runningUI struct {
	stdout *syncBuffer
	cancel context.CancelFunc
	done   chan error
	// url is the inspector's page.
	url string
}

var uiAddr = regexp.MustCompile(`parentrag inspector: (http://\S+)`)

// startUI runs local ui with args (plus --addr 127.0.0.1:0) and waits
// until it prints the page's address.
func startUI(t *testing.T, args ...string) *runningUI {
	t.Helper()
	cmd := NewRootCommand()
	ui := &runningUI{stdout: &syncBuffer{}, done: make(chan error, 1)}
	cmd.SetArgs(append(append([]string{"local", "ui"}, args...), "--addr", "127.0.0.1:0"))
	cmd.SetOut(ui.stdout)
	cmd.SetErr(&bytes.Buffer{})
	ctx, cancel := context.WithCancel(context.Background())
	ui.cancel = cancel
	go func() { ui.done <- cmd.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-ui.done
	})
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := uiAddr.FindStringSubmatch(ui.stdout.String()); m != nil {
			ui.url = m[1]
			return ui
		}
		select {
		case err := <-ui.done:
			ui.done <- err
			t.Fatalf("local ui exited before listening: %v", err)
		default:
		}
	}
	t.Fatalf("local ui printed no address in 10s: %s", ui.stdout)
	return nil
}

// post posts body to path of the UI's server and returns the status and
// the body of the answer.
func (ui *runningUI) post(t *testing.T, path, body string) (int, string) {
	t.Helper()
	base := strings.TrimSuffix(ui.url, inspector.Prefix)
	resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// previewRequest is a preview of a short note with the default policy.
func previewRequest(t *testing.T) string {
	t.Helper()
	data, err := json.Marshal(inspector.PreviewRequest{Name: "note.md", Document: "# Note\n\nZebras have stripes.", Policies: []string{""}})
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestLocalUIServesTheInspectorOnAnIndex(t *testing.T) {
	ui := startUI(t, "--index", localIndex(t))
	resp, err := http.Get(ui.url)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "parentrag") {
		t.Fatalf("GET %s: %d %.80s", ui.url, resp.StatusCode, page)
	}
	if code, body := ui.post(t, "/v1/retrieve", `{"query": "zebra stripes"}`); code != http.StatusOK || !strings.Contains(body, `"docId":"zebra.md"`) {
		t.Errorf("/v1/retrieve: %d %s, want zebra.md", code, body)
	}
	if code, body := ui.post(t, inspector.PreviewPath, previewRequest(t)); code != http.StatusOK || !strings.Contains(body, `"layouts"`) {
		t.Errorf("preview: %d %s", code, body)
	}
	ui.cancel()
	if err := <-ui.done; err != nil {
		t.Errorf("local ui after Ctrl-C: %v, want nil", err)
	}
	ui.done <- nil
}

func TestLocalUIWithoutAnIndexPreviewsOnly(t *testing.T) {
	ui := startUI(t)
	if !strings.Contains(ui.stdout.String(), "no --index") {
		t.Errorf("output %q does not say that queries do not answer", ui.stdout)
	}
	if code, body := ui.post(t, inspector.PreviewPath, previewRequest(t)); code != http.StatusOK {
		t.Errorf("preview: %d %s", code, body)
	}
	if code, body := ui.post(t, "/v1/retrieve", `{"query": "zebra"}`); code != http.StatusServiceUnavailable || !strings.Contains(body, "no index loaded") {
		t.Errorf("/v1/retrieve without an index: %d %s, want 503", code, body)
	}
}

func TestLocalUIRefusesAMissingIndex(t *testing.T) {
	_, _, err := execute(t, "local", "ui", "--index", t.TempDir()+"/missing", "--addr", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), "--index") || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("local ui with a missing index: %v", err)
	}
}
