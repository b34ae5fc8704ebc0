package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/parentrag/parentrag/internal/policy/policytest"
	"github.com/parentrag/parentrag/internal/retrieval/bundle/bundletest"
)

// TestLocalQueryAdaptive indexes bundletest's handbook into three levels
// and asks it in both modes: Adaptive returns the section both of whose
// paragraphs match, and the one other sentence that does, and says so;
// Parents returns parents.
func TestLocalQueryAdaptive(t *testing.T) {
	dir := t.TempDir()
	handbook := bundletest.Handbook()
	page := writeFile(t, dir, handbook.ID, handbook.Text)
	spec, err := yaml.Marshal(map[string]any{"apiVersion": "parentrag.io/v1alpha1", "kind": "ChunkingPolicy",
		"metadata": map[string]string{"name": "levels"}, "spec": policytest.LevelsPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "index")
	mustExecute(t, "local", "index", "--quiet", "--policy", writeFile(t, dir, "levels.yaml", string(spec)), "--out", index, page)
	levels := func(mode string) []string {
		out, _ := mustExecute(t, "local", "query", "--index", index, "--json", "--mode", mode, "hotel room")
		var answer struct {
			Results []struct{ Level string }
		}
		if err := json.Unmarshal([]byte(out), &answer); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		var got []string
		for _, r := range answer.Results {
			got = append(got, r.Level)
		}
		return got
	}
	if got := strings.Join(levels("Adaptive"), ","); got != "section,window" {
		t.Errorf("Adaptive returned levels %s, want section,window", got)
	}
	if got := strings.Join(levels("Parents"), ","); strings.Trim(strings.ReplaceAll(got, "parent", ""), ",") != "" {
		t.Errorf("Parents returned levels %s, want parents only", got)
	}
	out, _ := mustExecute(t, "local", "query", "--index", index, "--mode", "Adaptive", "hotel room")
	if !strings.Contains(out, "  section  ") || !strings.Contains(out, "  window  ") {
		t.Errorf("the listing does not name the levels:\n%s", out)
	}
	if _, _, err := execute(t, "local", "query", "--index", index, "--mode", "Sections", "hotel"); err == nil || !strings.Contains(err.Error(), `--mode "Sections": want Parents or Adaptive`) {
		t.Errorf("--mode Sections: %v", err)
	}
}
