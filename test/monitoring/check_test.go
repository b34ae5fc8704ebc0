package monitoring

import (
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// scrapeLabels are the labels Prometheus adds to every series of a target
// that config/monitoring's PodMonitors scrape.
var scrapeLabels = []string{"job", "instance", "namespace", "pod", "container", "endpoint", "retriever"}

// TestQueriesSelectExportedSeries parses every query of the dashboard and
// the rules with Prometheus's parser and checks that each series selector
// names a series the query server or the operator exports, or one a
// recording rule records, and matches only labels those series carry.
func TestQueriesSelectExportedSeries(t *testing.T) {
	series := serverSeries(t)
	for name, labels := range operatorSeries(t) {
		series[name] = labels
	}
	groups := ruleGroups(t)
	recorded := map[string]bool{}
	var queries []query
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				recorded[r.Record] = true
				queries = append(queries, query{where: "record " + r.Record, expr: r.Expr})
			} else {
				queries = append(queries, query{where: "alert " + r.Alert, expr: r.Expr})
			}
		}
	}
	queries = append(queries, dashboardQueries(t)...)
	p := parser.NewParser(parser.Options{})
	used := map[string]bool{}
	for _, q := range queries {
		expr, err := p.ParseExpr(withoutVariables(q.expr))
		if err != nil {
			t.Errorf("%s: %v\n%s", q.where, err, q.expr)
			continue
		}
		for _, sel := range selectors(expr) {
			name := metricName(sel)
			used[name] = true
			switch {
			case name == "":
				t.Errorf("%s: selector %s names no metric", q.where, sel)
			case recorded[name]:
			case series[name] == nil:
				t.Errorf("%s: %s is not exported by the query server or the operator", q.where, name)
			default:
				checkLabels(t, q.where, name, sel, series[name])
			}
		}
	}
	for name := range recorded {
		if !used[name] {
			t.Errorf("recording rule %s is used by no alert or panel", name)
		}
	}
	if len(queries) < 30 {
		t.Errorf("read %d queries: the dashboard or the rules lost theirs", len(queries))
	}
}

// selectors returns the vector selectors of expr.
func selectors(expr parser.Expr) []*parser.VectorSelector {
	var out []*parser.VectorSelector
	parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			out = append(out, vs)
		}
		return nil
	})
	return out
}

// metricName is the metric a selector names, or "".
func metricName(vs *parser.VectorSelector) string {
	if vs.Name != "" {
		return vs.Name
	}
	for _, m := range vs.LabelMatchers {
		if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
			return m.Value
		}
	}
	return ""
}

// checkLabels fails when sel matches on a label that name's series do not
// carry and a scrape does not add.
func checkLabels(t *testing.T, where, name string, sel *parser.VectorSelector, carried map[string]bool) {
	t.Helper()
	for _, m := range sel.LabelMatchers {
		if m.Name == labels.MetricName || carried[m.Name] || contains(scrapeLabels, m.Name) {
			continue
		}
		t.Errorf("%s: %s has no label %s (it has %s)", where, name, m.Name, strings.Join(sortedKeys(carried), ", "))
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
