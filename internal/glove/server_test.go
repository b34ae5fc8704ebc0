package glove_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/glove"
	"github.com/parentrag/parentrag/internal/glove/glovetest"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
)

// client is parentrag's own OpenAI-compatible client pointed at the
// server.
func client(t *testing.T, endpoint, model string) *embed.OpenAI {
	t.Helper()
	c, err := embed.NewOpenAI(embed.OpenAIOptions{Endpoint: endpoint, Model: model, Dimensions: 100, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestWordsKeepTheirMeaning(t *testing.T) {
	m := glovetest.Model(t)
	sim := func(a, b string) float64 { return cosine(m.Vector(a), m.Vector(b)) }
	if m.Words() != 341479 || m.Dimensions() != 100 {
		t.Fatalf("%d words of %d dimensions, want 341479 of 100", m.Words(), m.Dimensions())
	}
	for _, c := range []struct {
		a, b, unlike string
	}{{"king", "queen", "banana"}, {"car", "automobile", "banana"}, {"paris", "france", "carburetor"}} {
		if near, far := sim(c.a, c.b), sim(c.a, c.unlike); near < 0.6 || far > 0.3 {
			t.Errorf("%s~%s %.2f, %s~%s %.2f: want related words near and others far", c.a, c.b, near, c.a, c.unlike, far)
		}
	}
}

// TestSentencesThroughTheOpenAIClient embeds through parentrag's real
// client: a paraphrase is nearer than an unrelated sentence, with either
// pooling.
func TestSentencesThroughTheOpenAIClient(t *testing.T) {
	endpoint := glovetest.Start(t)
	texts := []string{
		"The cat slept on the carpet.",
		"A kitten was resting on the rug.",
		"Stock markets fell sharply after the central bank raised interest rates.",
		"Shares dropped when the bank increased its lending rate.",
	}
	for _, model := range []string{glove.ModelSIF, glove.ModelMean} {
		vecs, err := client(t, endpoint, model).EmbedDocuments(context.Background(), texts)
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		sim := func(i, j int) float64 { return cosine(vecs[i].Dense, vecs[j].Dense) }
		if sim(0, 1) <= sim(0, 2) || sim(2, 3) <= sim(1, 3) {
			t.Errorf("%s: cat~kitten %.2f, cat~stocks %.2f, stocks~shares %.2f, kitten~shares %.2f: paraphrases should be nearer",
				model, sim(0, 1), sim(0, 2), sim(2, 3), sim(1, 3))
		}
		for i, v := range vecs {
			if n := norm(v.Dense); math.Abs(n-1) > 1e-5 {
				t.Errorf("%s: vector %d has norm %v, want 1", model, i, n)
			}
		}
		q, err := client(t, endpoint, model).EmbedQuery(context.Background(), texts[1])
		if err != nil || cosine(q.Dense, vecs[1].Dense) < 0.99999 {
			t.Errorf("%s: a query is embedded as the same text's document (%v)", model, err)
		}
	}
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// TestBase64AsTheOpenAINodeClientAsks decodes what a client asking for
// encoding_format base64 (the openai npm package's default) gets.
func TestBase64AsTheOpenAINodeClientAsks(t *testing.T) {
	endpoint := glovetest.Start(t)
	status, body := post(t, endpoint, `{"model":"glove-sif","input":["queen"],"encoding_format":"base64"}`)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	var resp struct {
		Data []struct {
			Embedding string `json:"embedding"`
		} `json:"data"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &resp); err != nil || len(resp.Data) != 1 {
		t.Fatalf("answer %s: %v", body, err)
	}
	raw, err := base64.StdEncoding.DecodeString(resp.Data[0].Embedding)
	if err != nil || len(raw) != 400 {
		t.Fatalf("base64 of %d bytes (%v), want 400", len(raw), err)
	}
	v := make([]float32, 100)
	binary.Read(bytes.NewReader(raw), binary.LittleEndian, v)
	floats, err := client(t, endpoint, glove.ModelSIF).EmbedQuery(context.Background(), "queen")
	if err != nil || cosine(v, floats.Dense) < 0.99999 || resp.Usage.PromptTokens != 1 {
		t.Errorf("base64 and float answers differ (%v), or usage %d", err, resp.Usage.PromptTokens)
	}
}

func post(t *testing.T, endpoint, body string) (int, []byte) {
	t.Helper()
	resp, err := http.Post(endpoint+"/embeddings", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func TestBadRequestsAreRefusedWithAReason(t *testing.T) {
	endpoint := glovetest.Start(t)
	many := `"x"` + strings.Repeat(`,"x"`, glove.MaxInputs)
	cases := map[string]struct {
		body, want string
		status     int
	}{
		"unknown model":  {`{"model":"gpt","input":"a"}`, "unknown model", 400},
		"dimensions":     {`{"model":"glove-sif","input":"a","dimensions":64}`, "cannot shorten", 400},
		"token arrays":   {`{"model":"glove-sif","input":[[1,2]]}`, "list of strings", 400},
		"empty text":     {`{"model":"glove-sif","input":["a"," "]}`, "input 1 is empty", 400},
		"no input":       {`{"model":"glove-sif"}`, "input is required", 400},
		"too many":       {`{"model":"glove-sif","input":[` + many + `]}`, "send 1 to 2048", 400},
		"encoding":       {`{"model":"glove-sif","input":"a","encoding_format":"int8"}`, "float or base64", 400},
		"not json":       {`{"model":`, "not a JSON object", 400},
		"over the limit": {`{"model":"glove-sif","input":"` + strings.Repeat("a", glove.MaxRequestBytes) + `"}`, "over", 413},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			status, body := post(t, endpoint, c.body)
			var e struct {
				Error struct{ Message string } `json:"error"`
			}
			json.Unmarshal(body, &e)
			if status != c.status || !strings.Contains(e.Error.Message, c.want) {
				t.Errorf("status %d, error %q: want %d saying %q", status, e.Error.Message, c.status, c.want)
			}
		})
	}
	// The client reports the server's reason and does not retry a 400.
	_, err := client(t, endpoint, "no-such-model").EmbedQuery(context.Background(), "a")
	if err == nil || !strings.Contains(err.Error(), "unknown model") {
		t.Errorf("client error %v, want the server's reason", err)
	}
}

func TestATextOfUnknownWordsIsTheZeroVector(t *testing.T) {
	enc, err := glove.NewEncoder(glovetest.Model(t), glove.SIF)
	if err != nil {
		t.Fatal(err)
	}
	v, known := enc.Encode("🙂 ⌘ ∑")
	if known != 0 || norm(v) != 0 {
		t.Errorf("known %d, norm %v: want 0 and the zero vector", known, norm(v))
	}
}

// cosine is the cosine similarity of two vectors of equal length, 0 when
// either is zero.
func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
