// Package serveload measures `parentrag serve` as a query pod runs it, on
// a large local index built by `parentrag local index`: the share of
// ordinary questions it refuses under concurrent clients, the latency of
// those it answers and the memory of its process.
package serveload

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/repo"
)

// BenchmarkServeQuestions builds a local index of PARENTRAG_QUESTIONS_MB
// (default 300) megabytes of the synthetic corpus (Zipf pseudo-words: no
// stop word is removed, so its frequent words weigh as a product name on
// every page does; or, with PARENTRAG_QUESTIONS_SET=squad-qasper, the
// SQuAD and QASPER documents repeated), serves it with the parentrag
// binary, and drives it with 16 and 64 clients sending short questions (5
// to 9 consecutive words of a sentence of the corpus, or the sets' own
// questions) for PARENTRAG_QUESTIONS_SECONDS
// (default 20) each, with the postings limits fixed at their floors and
// scaled with the index (the default), side by side. It reports the share
// of questions refused as heavy (429) and for overload (503), the p50 and p99 of the answered
// ones, and the serve process's resident and anonymous memory at the end
// (VmRSS, RssAnon) and its peak (VmHWM).
//
//	go test -run '^$' -bench ServeQuestions -benchtime 1x -timeout 2h ./test/serveload/
func BenchmarkServeQuestions(b *testing.B) {
	f := questionsFixture(b)
	for _, limits := range []struct {
		name  string
		flags []string
	}{
		{"fixed", []string{"--heavy-postings-per-child=0", "--max-postings-per-child=0"}},
		{"scaled", nil},
	} {
		for _, c := range []int{16, 64} {
			b.Run(fmt.Sprintf("limits=%s/c=%d", limits.name, c), func(b *testing.B) {
				for range b.N {
					r := f.run(b, limits.flags, c)
					b.ReportMetric(r.heavy, "heavy-429/op")
					b.ReportMetric(r.refused, "overload-503/op")
					b.ReportMetric(r.p50, "p50-ms")
					b.ReportMetric(r.p99, "p99-ms")
					b.ReportMetric(r.answered, "answered/s")
					b.ReportMetric(r.rss, "rss-MiB")
					b.ReportMetric(r.anon, "anon-MiB")
					b.ReportMetric(r.hwm, "peak-rss-MiB")
				}
			})
		}
	}
}

// fixture is a built index, the binary and the questions.
type fixture struct {
	bin, index string
	questions  [][]byte
	duration   time.Duration
	children   int
}

var (
	fixtureOnce sync.Once
	shared      *fixture
)

// questionsFixture builds the binary and the index once per process.
func questionsFixture(b *testing.B) *fixture {
	b.Helper()
	fixtureOnce.Do(func() { shared = buildFixture(b) })
	if shared == nil {
		b.Fatal("the fixture could not be built")
	}
	return shared
}

// buildFixture writes the corpus as JSON Lines, indexes it with `parentrag
// local index` and draws the questions.
func buildFixture(b *testing.B) *fixture {
	root, err := repo.Root()
	if err != nil {
		b.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "parentrag-serveload-*")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "parentrag")
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(root, "cmd", "parentrag")).CombinedOutput(); err != nil {
		b.Fatalf("building parentrag: %v\n%s", err, out)
	}
	docs, questions := corpusAndQuestions(b, int(envFloat(b, "PARENTRAG_QUESTIONS_MB", 300)*1e6))
	size := 0
	corpus := filepath.Join(dir, "corpus.jsonl")
	out, err := os.Create(corpus)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	for _, d := range docs {
		if err := enc.Encode(map[string]string{"id": d.ID, "title": d.Title, "text": d.Text}); err != nil {
			b.Fatal(err)
		}
		size += len(d.Text)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	out.Close()
	index := filepath.Join(dir, "index")
	start := time.Now()
	cmd := exec.Command(bin, "local", "index", "--no-unit-cache", "--out", index, corpus)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("local index: %v", err)
	}
	var m struct {
		Children int `json:"children"`
	}
	raw, err := os.ReadFile(filepath.Join(index, "manifest.json"))
	if err != nil || json.Unmarshal(raw, &m) != nil {
		b.Fatalf("reading the index's manifest: %v", err)
	}
	b.Logf("%.0f MB of text, %d documents, %d children, indexed in %s; %d questions",
		float64(size)/1e6, len(docs), m.Children, time.Since(start).Round(time.Second), len(questions))
	secs := envFloat(b, "PARENTRAG_QUESTIONS_SECONDS", 20)
	return &fixture{bin: bin, index: index, questions: questions, duration: time.Duration(secs * float64(time.Second)), children: m.Children}
}

// questionOf is the request body of a question made of 5 to 9 consecutive
// words of a sentence of text, as a person asks about what they read.
func questionOf(r *rand.Rand, text string) []byte {
	sentences := strings.Split(text, ". ")
	words := strings.Fields(sentences[r.IntN(len(sentences))])
	n := min(len(words), 5+r.IntN(5))
	from := r.IntN(len(words) - n + 1)
	body, _ := json.Marshal(map[string]string{"query": strings.Trim(strings.Join(words[from:from+n], " "), ".")})
	return body
}

// result is what one run measured.
type result struct {
	heavy, refused, p50, p99, answered, rss, anon, hwm float64
}

// run serves the index with the extra flags, drives it with c clients and
// reads the server's memory at the end.
func (f *fixture) run(b *testing.B, flags []string, c int) result {
	addr := freeAddr(b)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, f.bin, append([]string{"serve", "--index", f.index, "--addr", addr, "--shutdown-delay=0"}, flags...)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()
	waitReady(b, addr)
	url := "http://" + addr + "/v1/retrieve"
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: c}}
	var mu sync.Mutex
	var lat []time.Duration
	heavy, refused, total := 0, 0, 0
	end := time.Now().Add(f.duration)
	var wg sync.WaitGroup
	for i := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 9))
			for time.Now().Before(end) {
				start := time.Now()
				resp, err := client.Post(url, "application/json", bytes.NewReader(f.questions[r.IntN(len(f.questions))]))
				code := 0
				if err == nil {
					resp.Body.Close()
					code = resp.StatusCode
				}
				mu.Lock()
				total++
				switch code {
				case http.StatusOK:
					lat = append(lat, time.Since(start))
				case http.StatusTooManyRequests:
					heavy++
				case http.StatusServiceUnavailable:
					refused++
				default:
					b.Errorf("a question was answered %d (%v)", code, err)
				}
				mu.Unlock()
				if code != http.StatusOK {
					time.Sleep(50 * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	mem := procStatus(b, cmd.Process.Pid)
	slices.Sort(lat)
	res := result{heavy: float64(heavy) / float64(max(total, 1)), refused: float64(refused) / float64(max(total, 1)), answered: float64(len(lat)) / f.duration.Seconds(),
		rss: mem["VmRSS"], anon: mem["RssAnon"], hwm: mem["VmHWM"]}
	if len(lat) > 0 {
		res.p50 = float64(lat[len(lat)/2].Microseconds()) / 1000
		res.p99 = float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds()) / 1000
	}
	b.Logf("%d children, %d clients, flags %v: %d questions, %.1f%% refused as heavy (429), %.1f%% as overload (503), p50 %.1f ms, p99 %.1f ms; RSS %.0f MiB (anon %.0f), peak %.0f MiB",
		f.children, c, flags, total, 100*res.heavy, 100*res.refused, res.p50, res.p99, res.rss, res.anon, res.hwm)
	return res
}

// freeAddr returns a free loopback address.
func freeAddr(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitReady waits until the server's /readyz answers 200.
func waitReady(b *testing.B, addr string) {
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	b.Fatalf("parentrag serve on %s not ready within 5 minutes", addr)
}

// procStatus reads the memory lines of /proc/<pid>/status in MiB.
func procStatus(b *testing.B, pid int) map[string]float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(raw), "\n") {
		key, rest, ok := strings.Cut(line, ":")
		fields := strings.Fields(rest)
		if !ok || len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		if kb, err := strconv.ParseFloat(fields[0], 64); err == nil {
			out[key] = kb / 1024
		}
	}
	return out
}

// envFloat reads a number from the environment, def without it.
func envFloat(b *testing.B, name string, def float64) float64 {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 {
		b.Fatalf("%s=%q: want a positive number", name, v)
	}
	return f
}
