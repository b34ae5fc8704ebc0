//go:build cluster

package monitoring

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// emptyWithoutTheirFeature are the dashboard panels whose series exist
// only when the samples use what they watch, with why they stay empty on
// the samples: their queries are still run and must be accepted.
var emptyWithoutTheirFeature = map[string]string{
	"Source errors": "the samples' documents all read (the panel shows Corpora with errors only)",
	"Query errors":  "no query of the run fails with a 5xx",
	"Load shed":     "no query of the run is refused",
	"Auth outcomes": "the samples' Retriever has no auth",
}

// TestDashboardOnTheNode applies config/samples to the one-node cluster,
// runs a real Prometheus ($PARENTRAG_PROMETHEUS, built from the module
// this one pins) that discovers pods as config/monitoring's PodMonitors
// select them (kubernetes_sd with the relabelings prometheus-operator
// derives from a PodMonitor), sends questions through the Retriever's
// Service, and runs every query of the dashboard against it: each
// returns series, but for the panels of features the samples do not use.
func TestDashboardOnTheNode(t *testing.T) {
	prometheus, kubeconfig := os.Getenv("PARENTRAG_PROMETHEUS"), os.Getenv("KUBECONFIG")
	if prometheus == "" || kubeconfig == "" {
		t.Fatal("PARENTRAG_PROMETHEUS and KUBECONFIG must be set: make test-dashboard builds Prometheus and runs this against make cluster-up's cluster")
	}
	if _, err := exec.Command(kubectlBin(), "get", "deployment", "-n", "parentrag-system", "parentrag-manager").CombinedOutput(); err != nil {
		t.Fatalf("no operator in parentrag-system: make test-cluster deploys it (or kubectl apply -k config/cluster): %v", err)
	}
	ns := fmt.Sprintf("dashboard-%d", os.Getpid())
	kubectl(t, "create", "namespace", ns)
	t.Cleanup(func() { kubectl(t, "delete", "namespace", ns, "--wait=false") })
	kubectl(t, "apply", "-n", ns, "-k", filepath.Join("..", "..", "config", "samples"))
	kubectl(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=5m", "corpus/parentrag-docs", "retriever/parentrag-docs")

	api := startPrometheus(t, prometheus, scrapeConfig(t, kubeconfig))
	service := "http://" + kubectl(t, "get", "service", "-n", ns, "parentrag-docs", "-o", "jsonpath={.spec.clusterIP}") + ":8080"
	waitTargets(t, api, 3)
	ask(t, service, 45*time.Second)

	for _, q := range dashboardQueries(t) {
		title := panelTitle(q.where)
		n, err := seriesOf(api, withoutVariables(q.expr))
		switch {
		case err != nil:
			t.Errorf("%s: %v", q.where, err)
		case n == 0 && emptyWithoutTheirFeature[title] == "":
			t.Errorf("%s returned no series: %s", q.where, q.expr)
		case n == 0:
			t.Logf("%-55s no series: %s", q.where, emptyWithoutTheirFeature[title])
		default:
			t.Logf("%-55s %d series", q.where, n)
		}
	}
}

// kubectl runs kubectl and returns its output.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(kubectlBin(), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// kubectlBin is $KUBECTL, else kubectl from PATH.
func kubectlBin() string {
	if bin := os.Getenv("KUBECTL"); bin != "" {
		return bin
	}
	return "kubectl"
}

// podMonitor is what the scrape configuration needs of a PodMonitor.
type podMonitor struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		PodMetricsEndpoints []struct {
			Port        string `json:"port"`
			Path        string `json:"path"`
			Relabelings []struct {
				SourceLabels []string `json:"sourceLabels"`
				TargetLabel  string   `json:"targetLabel"`
			} `json:"relabelings"`
		} `json:"podMetricsEndpoints"`
	} `json:"spec"`
}

var notLabelChar = regexp.MustCompile(`[^a-zA-Z0-9_]`)

// scrapeConfig is a Prometheus configuration with one job per endpoint of
// config/monitoring's PodMonitors, as prometheus-operator writes it: pods
// discovered through the API server, kept when their labels match the
// selector and their container has the port, labelled with their
// namespace and pod, then the endpoint's own relabelings.
func scrapeConfig(t *testing.T, kubeconfig string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(configDir, "podmonitor.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var jobs []map[string]any
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var pm podMonitor
		if err := yaml.Unmarshal([]byte(doc), &pm); err != nil || pm.Metadata.Name == "" {
			continue
		}
		for i, ep := range pm.Spec.PodMetricsEndpoints {
			var relabel []map[string]any
			for k, v := range pm.Spec.Selector.MatchLabels {
				relabel = append(relabel, map[string]any{"source_labels": []string{"__meta_kubernetes_pod_label_" + notLabelChar.ReplaceAllString(k, "_")}, "regex": v, "action": "keep"})
			}
			relabel = append(relabel,
				map[string]any{"source_labels": []string{"__meta_kubernetes_pod_container_port_name"}, "regex": ep.Port, "action": "keep"},
				map[string]any{"source_labels": []string{"__meta_kubernetes_namespace"}, "target_label": "namespace"},
				map[string]any{"source_labels": []string{"__meta_kubernetes_pod_name"}, "target_label": "pod"})
			for _, r := range ep.Relabelings {
				relabel = append(relabel, map[string]any{"source_labels": r.SourceLabels, "target_label": r.TargetLabel})
			}
			jobs = append(jobs, map[string]any{
				"job_name":              fmt.Sprintf("podMonitor/%s/%d", pm.Metadata.Name, i),
				"scrape_interval":       "2s",
				"metrics_path":          ep.Path,
				"kubernetes_sd_configs": []map[string]any{{"role": "pod", "kubeconfig_file": kubeconfig}},
				"relabel_configs":       relabel,
			})
		}
	}
	if len(jobs) == 0 {
		t.Fatal("config/monitoring/podmonitor.yaml holds no PodMonitor endpoint")
	}
	out, err := yaml.Marshal(map[string]any{"global": map[string]any{"scrape_interval": "2s"}, "scrape_configs": jobs})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// startPrometheus runs Prometheus with config until the test ends and
// returns its HTTP address.
func startPrometheus(t *testing.T, bin string, config []byte) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, config, 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var logs bytes.Buffer
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	api := "http://" + addr
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if resp, err := http.Get(api + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return api
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus not ready after a minute:\n%s", logs.String())
		}
	}
}

// waitTargets waits until Prometheus scrapes at least n targets that are
// up (the operator and the query pods).
func waitTargets(t *testing.T, api string, n int) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		up, err := seriesOf(api, `up == 1`)
		if err == nil && up >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 2 minutes Prometheus scrapes %d targets that are up (%v), want %d", up, err, n)
		}
	}
}

// ask sends questions to the Retriever's Service for d.
func ask(t *testing.T, service string, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	answered := 0
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, service+"/v1/retrieve", strings.NewReader(`{"query":"How does a new revision roll out to the query pods?"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			answered++
		}
		time.Sleep(100 * time.Millisecond)
	}
	if answered == 0 {
		t.Fatalf("the Service at %s answered no question", service)
	}
	t.Logf("%d questions answered through %s", answered, service)
}

// seriesOf runs an instant query and returns how many series it returned.
func seriesOf(api, expr string) (int, error) {
	resp, err := http.Get(api + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, err
	}
	if body.Status != "success" {
		return 0, fmt.Errorf("Prometheus refused the query: %s", body.Error)
	}
	return len(body.Data.Result), nil
}

// panelTitle is the panel's title in a query's where ("panel \"T\" target A").
func panelTitle(where string) string {
	if i := strings.Index(where, `"`); i >= 0 {
		if j := strings.Index(where[i+1:], `"`); j >= 0 {
			return where[i+1 : i+1+j]
		}
	}
	return where
}
