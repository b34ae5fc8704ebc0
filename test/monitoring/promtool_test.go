package monitoring

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// promtool returns the promtool this module pins (go.mod's tool line):
// $PROMTOOL, or the one go tool builds into the build cache.
func promtool(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PROMTOOL"); p != "" {
		return p
	}
	out, err := exec.Command("go", "tool", "-n", "promtool").Output()
	if err != nil {
		t.Fatalf("building promtool: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestAlertRules runs promtool check rules and promtool test rules
// (testdata/alerts.test.yaml) on the rule file the PrometheusRule holds.
func TestAlertRules(t *testing.T) {
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(rules, ruleFile(t), 0o644); err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join("testdata", "alerts.test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	testFile := filepath.Join(dir, "alerts.test.yaml")
	if err := os.WriteFile(testFile, tests, 0o644); err != nil {
		t.Fatal(err)
	}
	tool := promtool(t)
	for _, args := range [][]string{{"check", "rules", rules}, {"test", "rules", testFile}} {
		out, err := exec.Command(tool, args...).CombinedOutput()
		t.Logf("promtool %s:\n%s", strings.Join(args[:2], " "), out)
		if err != nil {
			t.Errorf("promtool %s: %v", strings.Join(args[:2], " "), err)
		}
	}
}
