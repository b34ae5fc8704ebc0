package postgres_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/postgres"
	"github.com/parentrag/parentrag/internal/index/postgres/pgtest"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// TestSparseSearchIsTheEmbeddedStores is the key property: the same ids in
// the same order with the same scores, bit for bit, as the embedded store,
// for every query and k.
func TestSparseSearchIsTheEmbeddedStores(t *testing.T) {
	st, f := filled(t, 0)
	ctx := context.Background()
	compared := 0
	for qi, q := range f.queries {
		for _, k := range []int{1, 10, 100} {
			req := index.SearchRequest{Vector: q, TopK: k}
			want, err := f.ref.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := st.Search(ctx, req)
			if err != nil {
				t.Fatalf("query %d k %d: %v", qi, k, err)
			}
			if len(got) != len(want) {
				t.Fatalf("query %d k %d: %d hits, want %d", qi, k, len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("query %d k %d: hit %d is %+v, want %+v", qi, k, i, got[i], want[i])
				}
			}
			compared += len(got)
		}
	}
	if compared < 1000 {
		t.Fatalf("only %d hits compared", compared)
	}
	for _, q := range []index.SearchRequest{
		{Vector: vector.Vector{}, TopK: 5},
		{Vector: vector.Vector{Sparse: &vector.Sparse{}}, TopK: 5},
		{Vector: vector.Vector{Sparse: &vector.Sparse{Indices: []uint32{999_999_999}, Values: []float32{1}}}, TopK: 5},
		{Vector: vector.Vector{Dense: []float32{1, 2, 3}}, TopK: 5}, // no dense column
	} {
		if got, err := st.Search(ctx, q); err != nil || len(got) != 0 {
			t.Fatalf("search %+v: %v, %v; want no hit", q, got, err)
		}
	}
	for _, q := range []index.SearchRequest{
		{Vector: f.queries[0], TopK: 0},
		{Vector: vector.Vector{Sparse: &vector.Sparse{Indices: []uint32{2, 1}, Values: []float32{1, 1}}}, TopK: 5},
		{Vector: vector.Vector{Sparse: &vector.Sparse{Indices: []uint32{1}, Values: []float32{1}}, Dense: []float32{1}}, TopK: 5},
	} {
		if _, err := st.Search(ctx, q); !errors.Is(err, index.ErrInvalidInput) {
			t.Fatalf("search %+v: %v is not ErrInvalidInput", q, err)
		}
	}
}

// TestDenseSearchFindsTheNearest compares the HNSW index's answers with an
// exact scan: scores agree and at least 95% of the true ten nearest come
// back, at every metric.
func TestDenseSearchFindsTheNearest(t *testing.T) {
	st, f := filled(t, denseDims)
	ctx := context.Background()
	found, total := 0, 0
	for qi := range 40 {
		q := f.records[qi*7].Vector.Dense
		want, err := f.dense.Search(ctx, index.SearchRequest{Vector: vector.Vector{Dense: q}, TopK: 10})
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Search(ctx, index.SearchRequest{Vector: vector.Vector{Dense: q}, TopK: 10})
		if err != nil {
			t.Fatal(err)
		}
		exact := map[string]float32{}
		for _, h := range want {
			exact[h.ID] = h.Score
		}
		for _, h := range got {
			if s, ok := exact[h.ID]; ok {
				found++
				if math.Abs(float64(s-h.Score)) > 1e-5 {
					t.Fatalf("query %d: %s scores %v, exactly %v", qi, h.ID, h.Score, s)
				}
			}
		}
		total += len(want)
		if got[0].ID != f.records[qi*7].ID {
			t.Errorf("query %d: a vector's nearest is %s, not itself", qi, got[0].ID)
		}
	}
	if recall := float64(found) / float64(total); recall < 0.95 {
		t.Fatalf("recall@10 %.3f, want at least 0.95", recall)
	}
	// More than hnsw.ef_search's 1,000: the iterative scan goes on.
	got, err := st.Search(ctx, index.SearchRequest{Vector: vector.Vector{Dense: f.records[0].Vector.Dense}, TopK: 1200})
	if err != nil || len(got) != 1200 {
		t.Fatalf("1200 nearest: %d hits, %v", len(got), err)
	}
	if _, err := st.Search(ctx, index.SearchRequest{Vector: vector.Vector{Dense: []float32{1}}, TopK: 3}); !errors.Is(err, index.ErrDimensionMismatch) {
		t.Fatalf("a query of 1 dimension: %v, want ErrDimensionMismatch", err)
	}
	if got, err := st.Search(ctx, index.SearchRequest{Vector: vector.Vector{Dense: make([]float32, denseDims)}, TopK: 3}); err != nil || len(got) != 0 {
		t.Fatalf("a zero query under cosine: %v, %v; want no hit", got, err)
	}
}

func TestUpsertReplacesAndDeleteRemoves(t *testing.T) {
	st, f := filled(t, 0)
	ctx := context.Background()
	a, b := f.records[0], f.records[1]
	// b takes a's sparse vector, twice in one batch: the last wins.
	b.Vector = vector.Vector{Sparse: a.Vector.Sparse}
	if err := st.Upsert(ctx, []index.Record{b, b}); err != nil {
		t.Fatal(err)
	}
	if n, _ := st.Count(ctx); n != len(f.records) {
		t.Fatalf("count %d after replacing, want %d", n, len(f.records))
	}
	if err := st.Delete(ctx, []string{a.ID, "no-such-child"}); err != nil {
		t.Fatal(err)
	}
	if n, _ := st.Count(ctx); n != len(f.records)-1 {
		t.Fatalf("count %d after deleting one, want %d", n, len(f.records)-1)
	}
	if err := st.Finish(ctx, len(f.records)); !errors.Is(err, postgres.ErrRowCount) {
		t.Fatalf("finish with a row missing: %v, want ErrRowCount", err)
	}
}

func TestBadRecordsAreRefusedBeforeAnyIsWritten(t *testing.T) {
	st := open(t, 4)
	ctx := context.Background()
	if err := st.Create(ctx); err != nil {
		t.Fatal(err)
	}
	good := index.Record{ID: "ok", ParentID: "p", DocID: "d", Vector: vector.Vector{Dense: []float32{1, 2, 3, 4}}, Text: "a\x00b \xff", Metadata: map[string]string{"k\x00": "v\x00"}}
	many := &vector.Sparse{}
	for i := range postgres.MaxSparseTerms + 1 {
		many.Indices, many.Values = append(many.Indices, uint32(i)), append(many.Values, 1)
	}
	for name, bad := range map[string]index.Record{
		"nul in id":      {ID: "a\x00", Vector: good.Vector},
		"invalid utf-8":  {ID: "ok2", ParentID: "\xff", Vector: good.Vector},
		"dims":           {ID: "ok3", Vector: vector.Vector{Dense: []float32{1}}},
		"nan":            {ID: "ok4", Vector: vector.Vector{Dense: []float32{1, float32(math.NaN()), 3, 4}}},
		"too many terms": {ID: "ok5", Vector: vector.Vector{Sparse: many, Dense: good.Vector.Dense}},
		"beyond the dim": {ID: "ok6", Vector: vector.Vector{Sparse: &vector.Sparse{Indices: []uint32{postgres.SparseDim}, Values: []float32{1}}, Dense: good.Vector.Dense}},
	} {
		err := st.Upsert(ctx, []index.Record{good, bad})
		if !errors.Is(err, index.ErrInvalidInput) && !errors.Is(err, index.ErrDimensionMismatch) {
			t.Errorf("%s: %v", name, err)
		}
		if n, _ := st.Count(ctx); n != 0 {
			t.Fatalf("%s: %d rows written before the bad record was refused", name, n)
		}
	}
	// Text and metadata are made storable rather than refused.
	if err := st.Upsert(ctx, []index.Record{good}); err != nil {
		t.Fatal(err)
	}
	var text, meta string
	st.Pool().QueryRow(ctx, `SELECT text, metadata::text FROM "`+st.Config().Schema+`".children_r1`).Scan(&text, &meta)
	if text != "a\uFFFDb \uFFFD" || meta != "{\"k\uFFFD\": \"v\uFFFD\"}" {
		t.Errorf("text %q, metadata %s", text, meta)
	}
}

// TestViewFollowsTheServingTable is the alias of a Milvus collection: the
// view reads one table at a time, a table it reads cannot be dropped, and
// moving it lets the old one go.
func TestViewFollowsTheServingTable(t *testing.T) {
	ctx := context.Background()
	one := open(t, 0)
	cfg := one.Config()
	cfg.Table = "children_r2"
	cfg.Dense = 3 // other columns: the view is replaced, not altered
	two, err := postgres.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer two.Close()
	for _, st := range []*postgres.Store{one, two} {
		if err := st.Create(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := one.SetView(ctx, "children"); err != nil {
		t.Fatal(err)
	}
	if err := one.SetView(ctx, "children"); err != nil {
		t.Fatalf("set the view again: %v", err)
	}
	if err := one.Drop(ctx); !errors.Is(err, postgres.ErrViewed) {
		t.Fatalf("drop the viewed table: %v, want ErrViewed", err)
	}
	if err := two.SetView(ctx, "children"); err != nil {
		t.Fatal(err)
	}
	if v, _ := one.Views(ctx); len(v) != 0 {
		t.Fatalf("the old table is still read by %v", v)
	}
	if v, _ := two.Views(ctx); len(v) != 1 || v[0] != "children" {
		t.Fatalf("views of the new table: %v", v)
	}
	if err := one.DropView(ctx, "children"); err != nil {
		t.Fatal(err)
	}
	if v, _ := two.Views(ctx); len(v) != 1 {
		t.Fatal("DropView of a table the view does not read dropped it")
	}
	for _, st := range []*postgres.Store{one, one} { // twice: a missing table drops fine
		if err := st.Drop(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if ok, _ := one.Exists(ctx); ok {
		t.Fatal("the dropped table exists")
	}
	if _, err := one.Count(ctx); !errors.Is(err, postgres.ErrNotFound) {
		t.Fatalf("count of a dropped table: %v, want ErrNotFound", err)
	}
	if err := two.DropView(ctx, "children"); err != nil {
		t.Fatal(err)
	}
	if err := two.Drop(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestCreateRefusesATableOfAnotherShape(t *testing.T) {
	ctx := context.Background()
	st := open(t, 4)
	if err := st.Create(ctx); err != nil {
		t.Fatal(err)
	}
	for _, dense := range []int{0, 8} {
		cfg := st.Config()
		cfg.Dense = dense
		other, err := postgres.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := other.Create(ctx); !errors.Is(err, postgres.ErrSchemaMismatch) {
			t.Errorf("dense %d over dense 4: %v, want ErrSchemaMismatch", dense, err)
		}
		other.Close()
	}
}

func TestConfigIsCheckedBeforeConnecting(t *testing.T) {
	for name, cfg := range map[string]postgres.Config{
		"no table":     {DSN: "postgres://x/y"},
		"bad table":    {DSN: "postgres://x/y", Table: "Children"},
		"long table":   {DSN: "postgres://x/y", Table: strings.Repeat("a", 64)},
		"too dense":    {DSN: "postgres://x/y", Table: "t", Dense: postgres.MaxDense + 1},
		"metric":       {DSN: "postgres://x/y", Table: "t", Metric: "HAMMING"},
		"hnsw m":       {DSN: "postgres://x/y", Table: "t", HNSWM: 1},
		"bad dsn":      {DSN: "postgres://u:secret@x:notaport/y", Table: "t"},
		"schema upper": {DSN: "postgres://x/y", Table: "t", Schema: "Parentrag"},
	} {
		_, err := postgres.Open(context.Background(), cfg)
		if !errors.Is(err, postgres.ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", name, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error shows the password: %v", name, err)
		}
	}
}

func TestTableNamesAreValidAndDistinct(t *testing.T) {
	long := strings.Repeat("corpus-", 20)
	for _, c := range []struct{ parts []string }{
		{[]string{"support", "handbook", "bd6a98db3707e3ef"}},
		{[]string{"9ns", "Handbook.v2", "r"}},
		{[]string{long + "a", "rev"}},
		{[]string{long + "b", "rev"}},
	} {
		name := postgres.TableName(c.parts...)
		if err := postgres.CheckName(name); err != nil {
			t.Errorf("%v: %v", c.parts, err)
		}
	}
	if a, b := postgres.TableName(long+"a", "rev"), postgres.TableName(long+"b", "rev"); a == b {
		t.Errorf("two long names both map to %s", a)
	}
	if got := postgres.TableName("support", "handbook", "bd6a98db"); got != "support_handbook_bd6a98db" {
		t.Errorf("TableName = %s", got)
	}
}

// TestConcurrentSearchesKeepTheirAnswers runs searches on several
// connections at once while another store writes: each search still gets
// its own answer, the embedded store's (PGlite shares one session between
// connections, which its DSN must allow for).
func TestConcurrentSearchesKeepTheirAnswers(t *testing.T) {
	st, f := filled(t, 0)
	ctx := context.Background()
	other := open(t, denseDims)
	if err := other.Create(ctx); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 9)
	go func() {
		for i := 0; i < 5; i++ {
			if err := other.Upsert(ctx, f.records[i*100:(i+1)*100]); err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	for w := range 8 {
		go func() {
			for i := w; i < len(f.queries); i += 8 {
				req := index.SearchRequest{Vector: f.queries[i], TopK: 10}
				want, _ := f.ref.Search(ctx, req)
				got, err := st.Search(ctx, req)
				if err != nil {
					errs <- err
					return
				}
				if len(got) != len(want) || (len(got) > 0 && got[0] != want[0]) {
					errs <- errors.New("a concurrent search got another answer")
					return
				}
			}
			errs <- nil
		}()
	}
	for range 9 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestAStalledDatabaseFailsInTime: a database that stops answering fails
// each call after Config.Timeout instead of holding it.
func TestAStalledDatabaseFailsInTime(t *testing.T) {
	st := open(t, 0)
	ctx := context.Background()
	if err := st.Create(ctx); err != nil {
		t.Fatal(err)
	}
	proxy, dsn, err := pgtest.ProxyDSN(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	cfg := st.Config()
	cfg.DSN, cfg.Timeout = dsn, 300*time.Millisecond
	slow, err := postgres.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	proxy.SetDelay(2 * time.Second)
	start := time.Now()
	_, err = slow.Count(ctx)
	if err == nil || time.Since(start) > 1500*time.Millisecond {
		t.Fatalf("count on a stalled database: %v after %s, want an error within about 0.3s", err, time.Since(start))
	}
	proxy.SetDelay(0)
}
