package monitoring

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"
)

// configDir holds the dashboard and the rules.
var configDir = filepath.Join("..", "..", "config", "monitoring")

// query is a PromQL expression and where it comes from.
type query struct {
	where, expr string
}

// dashboardQueries returns every PromQL expression of the dashboard: each
// panel's targets, nested rows included, and each variable's query.
func dashboardQueries(t *testing.T) []query {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(configDir, "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	var out []query
	for _, p := range flatten(d.Panels) {
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			out = append(out, query{where: fmt.Sprintf("panel %q target %s", p.Title, tg.RefID), expr: tg.Expr})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(map[string]any)
		expr, ok := labelValuesSelector(fmt.Sprint(q["query"]))
		if !ok {
			t.Errorf("variable %s: %v is not label_values(selector, label)", v.Name, q["query"])
			continue
		}
		out = append(out, query{where: "variable " + v.Name, expr: expr})
	}
	return out
}

// panel is what the check reads of a Grafana panel.
type panel struct {
	Type    string  `json:"type"`
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

// flatten lists panels with the panels of collapsed rows.
func flatten(ps []panel) []panel {
	var out []panel
	for _, p := range ps {
		out = append(out, p)
		out = append(out, flatten(p.Panels)...)
	}
	return out
}

var labelValuesCall = regexp.MustCompile(`^label_values\((.+),\s*\w+\)$`)

// labelValuesSelector returns the selector of a label_values(selector,
// label) variable query.
func labelValuesSelector(q string) (string, bool) {
	m := labelValuesCall.FindStringSubmatch(strings.TrimSpace(q))
	if m == nil {
		return "", false
	}
	return m[1], true
}

var grafanaVariable = regexp.MustCompile(`\$(\{\w+\}|\w+)`)

// withoutVariables replaces Grafana's variables by what PromQL accepts
// in their place: a duration for the interval variables, a regular
// expression matching anything for the others (they stand in =~ matchers).
func withoutVariables(expr string) string {
	return grafanaVariable.ReplaceAllStringFunc(expr, func(v string) string {
		switch strings.Trim(v, "${}") {
		case "__rate_interval", "__interval", "__range":
			return "5m"
		}
		return ".*"
	})
}

// ruleFile is the PrometheusRule's spec, as a Prometheus rule file.
func ruleFile(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(configDir, "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var pr struct {
		Kind string          `json:"kind"`
		Spec json.RawMessage `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &pr); err != nil {
		t.Fatalf("prometheusrule.yaml: %v", err)
	}
	if pr.Kind != "PrometheusRule" {
		t.Fatalf("prometheusrule.yaml holds a %s", pr.Kind)
	}
	out, err := yaml.JSONToYAML(pr.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// ruleGroups parses the rule file as Prometheus does, refusing what it
// would refuse.
func ruleGroups(t *testing.T) *rulefmt.RuleGroups {
	t.Helper()
	groups, errs := rulefmt.Parse(ruleFile(t), false, model.LegacyValidation, parser.NewParser(parser.Options{}), slog.New(slog.DiscardHandler))
	for _, err := range errs {
		t.Errorf("rules: %v", err)
	}
	if groups == nil {
		t.FailNow()
	}
	return groups
}
