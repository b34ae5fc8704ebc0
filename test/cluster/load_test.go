//go:build cluster

package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/devcluster"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// docsQuestions are asked of the samples' docs Corpus in turn.
var docsQuestions = []string{
	"How does a new revision roll out to the query pods?",
	"How does a context budget trim parents?",
	"What does the Corpus status report?",
	"What happens to the serving revision when a build fails?",
	"What does the operator create for a Retriever?",
}

// load queries a Service without pause from a few goroutines and tallies
// every answer: it must come back, not be empty, and hold only parents of
// the revision the answering pod says it serves.
type load struct {
	endpoint *serviceEndpoint
	parents  *devcluster.RevisionParents // nil: parents are not checked (claims)

	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once

	mu      sync.Mutex
	queries int
	// refused counts the answers 503 or 429 with Retry-After: admission
	// turning work away, which a client retries after Retry-After.
	refused  int
	failed   int
	empty    int
	foreign  int
	answered map[string]int
	problems []string
	slowest  time.Duration
}

// startLoad starts workers goroutines asking the questions in turn.
func startLoad(ctx context.Context, e *serviceEndpoint, parents *devcluster.RevisionParents, workers int) *load {
	ctx, cancel := context.WithCancel(ctx)
	l := &load{endpoint: e, parents: parents, cancel: cancel, answered: map[string]int{}}
	for w := range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := w; ctx.Err() == nil; i++ {
				l.ask(ctx, docsQuestions[i%len(docsQuestions)])
			}
		}()
	}
	return l
}

// ask asks one question and tallies the answer.
func (l *load) ask(ctx context.Context, q string) {
	start := time.Now()
	resp, err := l.endpoint.retrieve(ctx, q, 3)
	if ctx.Err() != nil {
		return // stopped while asking: not an answer of the Service
	}
	took := time.Since(start)
	problem := ""
	if err == nil && len(resp.Results) > 0 && strings.TrimSpace(resp.Results[0].Text) != "" {
		problem = l.foreignParent(ctx, resp.Revision, resp.Results)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queries++
	l.slowest = max(l.slowest, took)
	var status *statusError
	switch {
	case errors.As(err, &status) && status.retryLater():
		l.refused++
	case err != nil:
		l.failed++
		problem = fmt.Sprintf("%s query %q failed: %v", time.Now().Format("15:04:05.000"), q, err)
	case len(resp.Results) == 0 || strings.TrimSpace(resp.Results[0].Text) == "":
		l.empty++
		problem = fmt.Sprintf("revision %s gave an empty answer to %q", resp.Revision, q)
	case problem != "":
		l.foreign++
	default:
		l.answered[resp.Revision]++
	}
	if problem != "" && len(l.problems) < 10 {
		l.problems = append(l.problems, problem)
	}
}

// foreignParent names a returned parent that the revision does not hold,
// "" when all belong to it.
func (l *load) foreignParent(ctx context.Context, revision string, results []retrieve.Result) string {
	if l.parents == nil {
		return ""
	}
	ids, err := l.parents.Of(ctx, revision)
	if err != nil {
		return err.Error()
	}
	for _, res := range results {
		if !ids[res.ParentID] {
			return fmt.Sprintf("revision %s returned parent %s (%s), which it does not hold", revision, res.ParentID, res.DocID)
		}
	}
	return ""
}

// stop stops the workers and waits for them.
func (l *load) stop() {
	l.once.Do(func() {
		l.cancel()
		l.wg.Wait()
	})
}

// answeredBy returns how many queries a revision answered.
func (l *load) answeredBy(revision string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.answered[revision]
}

// summary says how many queries were asked, how each ended, and which
// revisions answered.
func (l *load) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	revs := make([]string, 0, len(l.answered))
	for r := range l.answered {
		revs = append(revs, r)
	}
	sort.Strings(revs)
	var by []string
	for _, r := range revs {
		by = append(by, fmt.Sprintf("%s: %d", r[:8], l.answered[r]))
	}
	return fmt.Sprintf("%d queries: %d failed, %d refused with Retry-After, %d empty, %d with a parent of another revision; answered by revision {%s}; slowest %s",
		l.queries, l.failed, l.refused, l.empty, l.foreign, strings.Join(by, ", "), l.slowest.Round(time.Millisecond))
}

// check fails the test unless every query was answered, not empty, with
// parents of the answering revision.
func (l *load) check(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failed+l.empty+l.foreign > 0 || l.queries == 0 {
		t.Errorf("of %d queries %d failed, %d came back empty, %d held a parent of another revision; first problems:\n%s",
			l.queries, l.failed, l.empty, l.foreign, strings.Join(l.problems, "\n"))
	}
}
