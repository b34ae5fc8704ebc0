package remote

import (
	"reflect"
	"strings"
	"testing"
)

func TestEmptyDocumentsAreReportedNotIndexed(t *testing.T) {
	jsonl := `{"_id": "j1", "text": "kept"}` + "\n" + `{"_id": "j2", "text": " \t\n"}` + "\n"
	srv, _ := serveBody(t, tarGz(t, regular("a.md", "# A", "empty.md", "", "blank.txt", " \n\t \n", "docs.jsonl", jsonl)), "application/gzip")
	res := fetchOK(t, "s", Spec{URL: srv.URL + "/a.tgz"})
	if got := ids(res.Documents); !reflect.DeepEqual(got, []string{"s/a.md", "s/docs.jsonl#j1"}) && !reflect.DeepEqual(got, []string{"s/a.md", "s/j1"}) {
		t.Errorf("documents %v, want a.md and the non-empty JSON line only", got)
	}
	if res.Count != len(res.Documents) {
		t.Errorf("Count %d, want %d", res.Count, len(res.Documents))
	}
	var empties []string
	for _, e := range res.Errors {
		if strings.Contains(e.Message, "is empty") {
			empties = append(empties, e.Document)
		}
	}
	if len(empties) != 3 {
		t.Errorf("empty-document errors for %v (all errors %+v), want 3", empties, res.Errors)
	}
	for _, id := range []string{"s/empty.md", "s/blank.txt"} {
		if e := errorFor(t, res, id); !strings.Contains(e.Message, "document "+id+" is empty") {
			t.Errorf("%s: %q", id, e.Message)
		}
	}
}
