package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestMonitoringRenders builds config/monitoring as kubectl apply -k
// would: the two PodMonitors select the pods the operator and the
// Retrievers run with, and the dashboard ConfigMap carries Grafana's
// sidecar label and the dashboard file, unchanged.
func TestMonitoringRenders(t *testing.T) {
	m := render(t, "config/monitoring")
	kinds := map[string]int{}
	for _, o := range m {
		kinds[o.GetKind()]++
	}
	if kinds["PodMonitor"] != 2 || kinds["PrometheusRule"] != 1 || kinds["ConfigMap"] != 1 {
		t.Fatalf("rendered %v, want 2 PodMonitors, a PrometheusRule and a ConfigMap", kinds)
	}
	for _, o := range m {
		switch o.GetKind() {
		case "ConfigMap":
			if o.GetLabels()["grafana_dashboard"] != "1" {
				t.Errorf("the dashboard ConfigMap's labels %v lack grafana_dashboard: \"1\"", o.GetLabels())
			}
			data := o.Object["data"].(map[string]any)
			want, err := os.ReadFile(filepath.Join(repoRoot(t), "config", "monitoring", "dashboard.json"))
			if err != nil {
				t.Fatal(err)
			}
			if data["parentrag.json"] != string(want) {
				t.Errorf("the ConfigMap's parentrag.json differs from dashboard.json")
			}
			if !json.Valid(want) {
				t.Errorf("dashboard.json is not JSON")
			}
		case "PodMonitor":
			sel := o.Object["spec"].(map[string]any)["selector"].(map[string]any)["matchLabels"].(map[string]any)
			if name := sel["app.kubernetes.io/name"]; name != "parentrag" && name != "parentrag-retriever" {
				t.Errorf("PodMonitor %s selects %v", o.GetName(), sel)
			}
		}
	}
}
