package milvustest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"

	"github.com/parentrag/parentrag/internal/milvustest"
)

const dim = 8

func connect(t *testing.T, srv *milvustest.Server) *milvusclient.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cli, err := milvusclient.New(ctx, &milvusclient.ClientConfig{Address: srv.Addr()})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cli.Close(context.Background()) })
	return cli
}

func testSchema(dense bool) *entity.Schema {
	s := entity.NewSchema().
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeVarChar).WithIsPrimaryKey(true).WithMaxLength(64)).
		WithField(entity.NewField().WithName("parent_id").WithDataType(entity.FieldTypeVarChar).WithMaxLength(64)).
		WithField(entity.NewField().WithName("ordinal").WithDataType(entity.FieldTypeInt64)).
		WithField(entity.NewField().WithName("text").WithDataType(entity.FieldTypeVarChar).WithMaxLength(256)).
		WithField(entity.NewField().WithName("metadata").WithDataType(entity.FieldTypeJSON)).
		WithField(entity.NewField().WithName("sparse").WithDataType(entity.FieldTypeSparseVector))
	if dense {
		s.WithField(entity.NewField().WithName("dense").WithDataType(entity.FieldTypeFloatVector).WithDim(dim))
	}
	return s
}

// corpus is test rows with their vectors, kept for brute-force checks.
type corpus struct {
	ids      []string
	parents  []string
	ordinals []int64
	texts    []string
	meta     [][]byte
	metaMap  []map[string]string
	sparse   [][2]any // indices []uint32, values []float32
	dense    [][]float32
}

func makeCorpus(n int, seed uint64) *corpus {
	r := rand.New(rand.NewPCG(seed, 7))
	c := &corpus{}
	langs := []string{"en", "fr", "de"}
	for i := range n {
		id := fmt.Sprintf("c%04d", (i*7919)%n) // ids not in insertion order
		c.ids = append(c.ids, id)
		c.parents = append(c.parents, fmt.Sprintf("p%03d", i/4))
		c.ordinals = append(c.ordinals, int64(i%4))
		c.texts = append(c.texts, fmt.Sprintf("text of %s", id))
		m := map[string]string{"lang": langs[i%3], "source": fmt.Sprintf("doc-%d.md", i/10)}
		b, _ := json.Marshal(m)
		c.meta = append(c.meta, b)
		c.metaMap = append(c.metaMap, m)
		var idx []uint32
		var val []float32
		for term := uint32(0); term < 40; term++ {
			if r.IntN(5) == 0 {
				idx = append(idx, term*3)
				val = append(val, float32(r.IntN(4)+1)/4) // few distinct values: ties happen
			}
		}
		c.sparse = append(c.sparse, [2]any{idx, val})
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		c.dense = append(c.dense, v)
	}
	return c
}

// writeOption is what NewColumnBasedInsertOption returns: an insert and an
// upsert.
type writeOption interface {
	milvusclient.InsertOption
	milvusclient.UpsertOption
}

func (c *corpus) insertOption(coll string, from, to int, dense bool) writeOption {
	sp := make([]entity.SparseEmbedding, 0, to-from)
	for i := from; i < to; i++ {
		idx := slices.Clone(c.sparse[i][0].([]uint32))
		val := slices.Clone(c.sparse[i][1].([]float32))
		e, _ := entity.NewSliceSparseEmbedding(idx, val)
		sp = append(sp, e)
	}
	opt := milvusclient.NewColumnBasedInsertOption(coll).
		WithVarcharColumn("id", c.ids[from:to]).
		WithVarcharColumn("parent_id", c.parents[from:to]).
		WithInt64Column("ordinal", c.ordinals[from:to]).
		WithVarcharColumn("text", c.texts[from:to]).
		WithColumns(column.NewColumnJSONBytes("metadata", c.meta[from:to]), column.NewColumnSparseVectors("sparse", sp))
	if dense {
		return opt.WithFloatVectorColumn("dense", dim, c.dense[from:to])
	}
	return opt
}

// setup creates, indexes, fills, flushes and loads a collection.
func setup(t *testing.T, cli *milvusclient.Client, name string, c *corpus, metric entity.MetricType) {
	t.Helper()
	ctx := context.Background()
	dense := metric != ""
	if err := cli.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(name, testSchema(dense))); err != nil {
		t.Fatalf("create collection: %v", err)
	}
	task, err := cli.CreateIndex(ctx, milvusclient.NewCreateIndexOption(name, "sparse", index.NewSparseInvertedIndex(entity.IP, 0)))
	if err != nil {
		t.Fatalf("create sparse index: %v", err)
	}
	if err := task.Await(ctx); err != nil {
		t.Fatalf("await sparse index: %v", err)
	}
	if dense {
		task, err := cli.CreateIndex(ctx, milvusclient.NewCreateIndexOption(name, "dense", index.NewHNSWIndex(metric, 16, 100)))
		if err != nil {
			t.Fatalf("create dense index: %v", err)
		}
		if err := task.Await(ctx); err != nil {
			t.Fatalf("await dense index: %v", err)
		}
	}
	for from := 0; from < len(c.ids); from += 100 {
		to := min(from+100, len(c.ids))
		res, err := cli.Insert(ctx, c.insertOption(name, from, to, dense))
		if err != nil {
			t.Fatalf("insert: %v", err)
		}
		if res.InsertCount != int64(to-from) || res.IDs.Len() != to-from {
			t.Fatalf("insert count %d, ids %d, want %d", res.InsertCount, res.IDs.Len(), to-from)
		}
	}
	ft, err := cli.Flush(ctx, milvusclient.NewFlushOption(name))
	if err != nil {
		t.Fatalf("flush: %v", err)
	}
	if err := ft.Await(ctx); err != nil {
		t.Fatalf("await flush: %v", err)
	}
	lt, err := cli.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(name))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := lt.Await(ctx); err != nil {
		t.Fatalf("await load: %v", err)
	}
}

func count(t *testing.T, cli *milvusclient.Client, name, filter string) int64 {
	t.Helper()
	rs, err := cli.Query(context.Background(), milvusclient.NewQueryOption(name).WithFilter(filter).WithOutputFields("count(*)"))
	if err != nil {
		t.Fatalf("count: %v", err)
	}
	n, err := rs.GetColumn("count(*)").GetAsInt64(0)
	if err != nil {
		t.Fatalf("count column: %v", err)
	}
	return n
}

type scored struct {
	id    string
	score float32
}

func sparseDot(ai []uint32, av []float32, bi []uint32, bv []float32) (float32, bool) {
	var sum float32
	hit := false
	i, j := 0, 0
	for i < len(ai) && j < len(bi) {
		switch {
		case ai[i] == bi[j]:
			sum += av[i] * bv[j]
			hit = true
			i++
			j++
		case ai[i] < bi[j]:
			i++
		default:
			j++
		}
	}
	return sum, hit
}

// checkRanked compares results with brute force: the same scores in the
// same order, and the same ids once ties are sorted.
func checkRanked(t *testing.T, got, want []scored, lowerBetter bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d hits, want %d", len(got), len(want))
	}
	for i := range got {
		if math.Abs(float64(got[i].score-want[i].score)) > 1e-5 {
			t.Fatalf("hit %d: score %v, want %v", i, got[i].score, want[i].score)
		}
		if i > 0 {
			if lowerBetter && got[i].score < got[i-1].score || !lowerBetter && got[i].score > got[i-1].score {
				t.Fatalf("hits not ordered at %d", i)
			}
		}
	}
	// Ties may come in any order, and a tie at the cut may keep any of the
	// tied rows: compare ids group by group, except the last group.
	group := func(hs []scored) map[float32][]string {
		m := make(map[float32][]string)
		for _, h := range hs {
			m[h.score] = append(m[h.score], h.id)
		}
		for _, ids := range m {
			sort.Strings(ids)
		}
		return m
	}
	g, w := group(got), group(want)
	last := want[len(want)-1].score
	for s, ids := range w {
		if s != last && !slices.Equal(g[s], ids) {
			t.Fatalf("ids of score %v: %v, want %v", s, g[s], ids)
		}
	}
}

func hits(t *testing.T, rs milvusclient.ResultSet) []scored {
	t.Helper()
	if rs.Err != nil {
		t.Fatal(rs.Err)
	}
	out := make([]scored, rs.ResultCount)
	for i := range out {
		id, err := rs.IDs.GetAsString(i)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = scored{id: id, score: rs.Scores[i]}
	}
	return out
}

func TestCollectionLifecycleAndCount(t *testing.T) {
	srv := milvustest.Start(t)
	cli := connect(t, srv)
	ctx := context.Background()
	c := makeCorpus(250, 1)
	setup(t, cli, "children", c, "")

	if got := srv.Collections(); !slices.Equal(got, []string{"children"}) {
		t.Fatalf("collections %v", got)
	}
	names, err := cli.ListCollections(ctx, milvusclient.NewListCollectionOption())
	if err != nil || !slices.Equal(names, []string{"children"}) {
		t.Fatalf("list collections %v, %v", names, err)
	}
	has, err := cli.HasCollection(ctx, milvusclient.NewHasCollectionOption("children"))
	if err != nil || !has {
		t.Fatalf("has collection %v, %v", has, err)
	}
	has, err = cli.HasCollection(ctx, milvusclient.NewHasCollectionOption("missing"))
	if err != nil || has {
		t.Fatalf("has missing collection %v, %v", has, err)
	}
	coll, err := cli.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption("children"))
	if err != nil {
		t.Fatal(err)
	}
	if coll.Name != "children" || coll.Schema.PKFieldName() != "id" || len(coll.Schema.Fields) != 6 {
		t.Fatalf("describe: %+v", coll)
	}
	if n := count(t, cli, "children", ""); n != 250 {
		t.Fatalf("count %d", n)
	}
	if srv.RowCount("children") != 250 {
		t.Fatalf("row count %d", srv.RowCount("children"))
	}
	stats, err := cli.GetCollectionStats(ctx, milvusclient.NewGetCollectionStatsOption("children"))
	if err != nil || stats["row_count"] != "250" {
		t.Fatalf("stats %v, %v", stats, err)
	}
	idx, err := cli.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption("children", "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if p := idx.Params(); p["index_type"] != "SPARSE_INVERTED_INDEX" || p["metric_type"] != "IP" || idx.State != index.IndexState(commonpb.IndexState_Finished) {
		t.Fatalf("index %v %v", p, idx.State)
	}
	st, err := cli.GetLoadState(ctx, milvusclient.NewGetLoadStateOption("children"))
	if err != nil || st.State != entity.LoadStateLoaded {
		t.Fatalf("load state %v, %v", st, err)
	}

	// Re-creating with the same schema is idempotent; another schema fails.
	if err := cli.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("children", testSchema(false))); err != nil {
		t.Fatalf("idempotent create: %v", err)
	}
	if err := cli.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("children", testSchema(true))); err == nil {
		t.Fatal("create with another schema succeeded")
	}
	// A different index on an indexed field is refused; the same is not.
	if _, err := cli.CreateIndex(ctx, milvusclient.NewCreateIndexOption("children", "sparse", index.NewSparseWANDIndex(entity.IP, 0))); err == nil {
		t.Fatal("second index on a field accepted")
	}

	// Delete by ids, upsert, and inserting a key twice.
	if _, err := cli.Delete(ctx, milvusclient.NewDeleteOption("children").WithStringIDs("id", []string{c.ids[0], c.ids[1], "nope"})); err != nil {
		t.Fatal(err)
	}
	if n := count(t, cli, "children", ""); n != 248 {
		t.Fatalf("count after delete %d", n)
	}
	if _, err := cli.Upsert(ctx, c.insertOption("children", 0, 3, false)); err != nil {
		t.Fatal(err)
	}
	if n := count(t, cli, "children", ""); n != 250 {
		t.Fatalf("count after upsert %d", n)
	}
	if _, err := cli.Insert(ctx, c.insertOption("children", 5, 6, false)); err != nil {
		t.Fatal(err)
	}
	if n := count(t, cli, "children", ""); n != 251 {
		t.Fatalf("count after duplicate insert %d (Milvus keeps duplicates)", n)
	}
	rs, err := cli.Query(ctx, milvusclient.NewQueryOption("children").WithFilter(fmt.Sprintf("id == %q", c.ids[5])).WithOutputFields("text"))
	if err != nil || rs.ResultCount != 1 {
		t.Fatalf("query of a duplicated key: %d rows, %v", rs.ResultCount, err)
	}

	// Releasing makes search and query fail as in Milvus.
	if err := cli.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption("children")); err != nil {
		t.Fatal(err)
	}
	_, err = cli.Query(ctx, milvusclient.NewQueryOption("children").WithOutputFields("count(*)"))
	if !errors.Is(err, merr.ErrCollectionNotLoaded) {
		t.Fatalf("query of a released collection: %v", err)
	}
	e, _ := entity.NewSliceSparseEmbedding([]uint32{3}, []float32{1})
	_, err = cli.Search(ctx, milvusclient.NewSearchOption("children", 5, []entity.Vector{e}).WithANNSField("sparse"))
	if !errors.Is(err, merr.ErrCollectionNotLoaded) {
		t.Fatalf("search of a released collection: %v", err)
	}

	if err := cli.DropCollection(ctx, milvusclient.NewDropCollectionOption("children")); err != nil {
		t.Fatal(err)
	}
	if err := cli.DropCollection(ctx, milvusclient.NewDropCollectionOption("children")); err != nil {
		t.Fatalf("dropping a missing collection: %v", err)
	}
	if _, err := cli.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption("children")); !errors.Is(err, merr.ErrCollectionNotFound) {
		t.Fatalf("describe dropped: %v", err)
	}
}

func TestLoadNeedsIndexAndWaits(t *testing.T) {
	srv := milvustest.Start(t)
	cli := connect(t, srv)
	ctx := context.Background()
	if err := cli.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("c", testSchema(false))); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.LoadCollection(ctx, milvusclient.NewLoadCollectionOption("c")); !errors.Is(err, merr.ErrIndexNotFound) {
		t.Fatalf("load without index: %v", err)
	}
	task, err := cli.CreateIndex(ctx, milvusclient.NewCreateIndexOption("c", "sparse", index.NewAutoIndex(entity.IP)))
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Await(ctx); err != nil {
		t.Fatal(err)
	}
	srv.SetLoadDelay(300 * time.Millisecond)
	lt, err := cli.LoadCollection(ctx, milvusclient.NewLoadCollectionOption("c"))
	if err != nil {
		t.Fatal(err)
	}
	if st := srv.LoadState("c"); st != commonpb.LoadState_LoadStateLoading {
		t.Fatalf("state right after load: %v", st)
	}
	if _, err := cli.Query(ctx, milvusclient.NewQueryOption("c").WithOutputFields("count(*)")); !errors.Is(err, merr.ErrCollectionNotFullyLoaded) {
		t.Fatalf("query while loading: %v", err)
	}
	if err := lt.Await(ctx); err != nil {
		t.Fatal(err)
	}
	if st := srv.LoadState("c"); st != commonpb.LoadState_LoadStateLoaded {
		t.Fatalf("state after await: %v", st)
	}
}

func TestSparseSearchMatchesBruteForce(t *testing.T) {
	srv := milvustest.Start(t)
	cli := connect(t, srv)
	ctx := context.Background()
	c := makeCorpus(400, 2)
	setup(t, cli, "children", c, "")
	r := rand.New(rand.NewPCG(3, 4))
	for qn := range 20 {
		var qi []uint32
		var qv []float32
		for term := uint32(0); term < 40; term++ {
			if r.IntN(8) == 0 {
				qi = append(qi, term*3)
				qv = append(qv, float32(r.IntN(3)+1))
			}
		}
		if len(qi) == 0 {
			continue
		}
		var want []scored
		for i := range c.ids {
			if s, ok := sparseDot(qi, qv, c.sparse[i][0].([]uint32), c.sparse[i][1].([]float32)); ok {
				want = append(want, scored{c.ids[i], s})
			}
		}
		sort.SliceStable(want, func(a, b int) bool { return want[a].score > want[b].score })
		k := 10 + qn
		want = want[:min(k, len(want))]
		q, _ := entity.NewSliceSparseEmbedding(qi, qv)
		res, err := cli.Search(ctx, milvusclient.NewSearchOption("children", k, []entity.Vector{q}).WithANNSField("sparse"))
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 1 {
			t.Fatalf("%d result sets", len(res))
		}
		checkRanked(t, hits(t, res[0]), want, false)
	}
}

func TestDenseSearchMatchesBruteForce(t *testing.T) {
	srv := milvustest.Start(t)
	cli := connect(t, srv)
	ctx := context.Background()
	c := makeCorpus(300, 5)
	for _, metric := range []entity.MetricType{entity.IP, entity.COSINE, entity.L2} {
		t.Run(string(metric), func(t *testing.T) {
			name := "dense_" + strings.ToLower(string(metric))
			setup(t, cli, name, c, metric)
			r := rand.New(rand.NewPCG(8, 9))
			for range 10 {
				q := make([]float32, dim)
				for j := range q {
					q[j] = float32(r.NormFloat64())
				}
				var want []scored
				for i, v := range c.dense {
					var dot, nq, nv, l2 float64
					for j := range q {
						dot += float64(q[j]) * float64(v[j])
						nq += float64(q[j]) * float64(q[j])
						nv += float64(v[j]) * float64(v[j])
						d := float64(q[j]) - float64(v[j])
						l2 += d * d
					}
					s := dot
					switch metric {
					case entity.COSINE:
						s = dot / math.Sqrt(nq*nv)
					case entity.L2:
						s = l2 // Milvus reports squared L2 distances, smaller first
					}
					want = append(want, scored{c.ids[i], float32(s)})
				}
				lower := metric == entity.L2
				sort.SliceStable(want, func(a, b int) bool {
					if lower {
						return want[a].score < want[b].score
					}
					return want[a].score > want[b].score
				})
				want = want[:15]
				res, err := cli.Search(ctx, milvusclient.NewSearchOption(name, 15, []entity.Vector{entity.FloatVector(q)}).
					WithANNSField("dense").WithAnnParam(index.NewHNSWAnnParam(64)))
				if err != nil {
					t.Fatal(err)
				}
				got := hits(t, res[0])
				for i := range got {
					if got[i].id != want[i].id || math.Abs(float64(got[i].score-want[i].score)) > 1e-4 {
						t.Fatalf("hit %d: %v, want %v", i, got[i], want[i])
					}
				}
			}
			// A metric other than the index's is refused; ef below k too.
			_, err := cli.Search(ctx, milvusclient.NewSearchOption(name, 5, []entity.Vector{entity.FloatVector(make([]float32, dim))}).
				WithANNSField("dense").WithSearchParam("metric_type", "XX"))
			if err == nil {
				t.Fatal("search with a foreign metric succeeded")
			}
			_, err = cli.Search(ctx, milvusclient.NewSearchOption(name, 100, []entity.Vector{entity.FloatVector(make([]float32, dim))}).
				WithANNSField("dense").WithAnnParam(index.NewHNSWAnnParam(10)))
			if err == nil {
				t.Fatal("search with ef < k succeeded")
			}
		})
	}
}

func TestFiltersOutputFieldsAndGrouping(t *testing.T) {
	srv := milvustest.Start(t)
	cli := connect(t, srv)
	ctx := context.Background()
	c := makeCorpus(120, 11)
	setup(t, cli, "children", c, "")

	// Filters, checked with count(*) against the corpus.
	filters := []struct {
		expr string
		keep func(i int) bool
	}{
		{`parent_id == "p003"`, func(i int) bool { return c.parents[i] == "p003" }},
		{`parent_id in ["p001", "p002"]`, func(i int) bool { return c.parents[i] == "p001" || c.parents[i] == "p002" }},
		{`parent_id not in ["p001"]`, func(i int) bool { return c.parents[i] != "p001" }},
		{`id like "c00%"`, func(i int) bool { return strings.HasPrefix(c.ids[i], "c00") }},
		{`metadata["lang"] == "fr"`, func(i int) bool { return c.metaMap[i]["lang"] == "fr" }},
		{`metadata["lang"] == "fr" and ordinal >= 2`, func(i int) bool { return c.metaMap[i]["lang"] == "fr" && c.ordinals[i] >= 2 }},
		{`metadata["lang"] == 'de' or (ordinal < 1 && parent_id != "p000")`, func(i int) bool {
			return c.metaMap[i]["lang"] == "de" || (c.ordinals[i] < 1 && c.parents[i] != "p000")
		}},
		{`not (metadata["source"] like "doc-1%")`, func(i int) bool { return !strings.HasPrefix(c.metaMap[i]["source"], "doc-1") }},
		{`metadata["missing"] == "x"`, func(int) bool { return false }},
		{`exists metadata["lang"]`, func(int) bool { return true }},
	}
	for _, f := range filters {
		want := 0
		for i := range c.ids {
			if f.keep(i) {
				want++
			}
		}
		if got := count(t, cli, "children", f.expr); got != int64(want) {
			t.Errorf("count(%s) = %d, want %d", f.expr, got, want)
		}
	}
	rs0, err := cli.Query(ctx, milvusclient.NewQueryOption("children").WithFilter(`parent_id in {ps} and ordinal == {o}`).
		WithTemplateParam("ps", []string{"p001", "p002"}).WithTemplateParam("o", 3).WithOutputFields("count(*)"))
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := rs0.GetColumn("count(*)").GetAsInt64(0); n != 2 {
		t.Errorf("templated filter counted %d, want 2", n)
	}
	for _, bad := range []string{`nope == 1`, `ordinal == "x"`, `parent_id ==`, `sparse == 1`} {
		if _, err := cli.Query(ctx, milvusclient.NewQueryOption("children").WithFilter(bad).WithOutputFields("count(*)")); err == nil {
			t.Errorf("bad filter %q accepted", bad)
		}
	}

	// Query with output fields returns the rows' values.
	rs, err := cli.Query(ctx, milvusclient.NewQueryOption("children").WithFilter(`parent_id == "p002"`).
		WithOutputFields("parent_id", "ordinal", "metadata"))
	if err != nil {
		t.Fatal(err)
	}
	if rs.ResultCount != 4 {
		t.Fatalf("query rows %d", rs.ResultCount)
	}
	for i := range rs.ResultCount {
		p, _ := rs.GetColumn("parent_id").GetAsString(i)
		id, _ := rs.GetColumn("id").GetAsString(i)
		m, _ := rs.GetColumn("metadata").Get(i)
		if p != "p002" || id == "" || !strings.Contains(string(m.([]byte)), "lang") {
			t.Fatalf("row %d: %q %q %s", i, id, p, m)
		}
	}
	// An empty filter needs a limit.
	if _, err := cli.Query(ctx, milvusclient.NewQueryOption("children").WithOutputFields("id")); err == nil {
		t.Fatal("query without filter or limit accepted")
	}
	rs, err = cli.Query(ctx, milvusclient.NewQueryOption("children").WithLimit(7).WithOutputFields("id"))
	if err != nil || rs.ResultCount != 7 {
		t.Fatalf("query with limit: %d, %v", rs.ResultCount, err)
	}

	// Filtered search with output fields.
	q, _ := entity.NewSliceSparseEmbedding([]uint32{0, 3, 6, 9, 12, 15}, []float32{1, 1, 1, 1, 1, 1})
	res, err := cli.Search(ctx, milvusclient.NewSearchOption("children", 50, []entity.Vector{q}).WithANNSField("sparse").
		WithFilter(`metadata["lang"] == "en"`).WithOutputFields("parent_id", "ordinal", "text"))
	if err != nil {
		t.Fatal(err)
	}
	rset := res[0]
	if rset.ResultCount == 0 {
		t.Fatal("no hits")
	}
	byID := make(map[string]int)
	for i, id := range c.ids {
		byID[id] = i
	}
	for i := range rset.ResultCount {
		id, _ := rset.IDs.GetAsString(i)
		p, _ := rset.GetColumn("parent_id").GetAsString(i)
		o, _ := rset.GetColumn("ordinal").GetAsInt64(i)
		text, _ := rset.GetColumn("text").GetAsString(i)
		j := byID[id]
		if c.metaMap[j]["lang"] != "en" || p != c.parents[j] || o != c.ordinals[j] || text != c.texts[j] {
			t.Fatalf("hit %s: %q %d %q", id, p, o, text)
		}
	}

	// Grouping by parent: at most group_size hits per parent, topk parents.
	res, err = cli.Search(ctx, milvusclient.NewSearchOption("children", 5, []entity.Vector{q}).WithANNSField("sparse").
		WithGroupByField("parent_id").WithGroupSize(2).WithOutputFields("parent_id"))
	if err != nil {
		t.Fatal(err)
	}
	rset = res[0]
	perParent := make(map[string]int)
	var order []string
	for i := range rset.ResultCount {
		g, _ := rset.GroupByValue.GetAsString(i)
		p, _ := rset.GetColumn("parent_id").GetAsString(i)
		if g != p {
			t.Fatalf("group value %q for parent %q", g, p)
		}
		if perParent[p] == 0 {
			order = append(order, p)
		}
		perParent[p]++
	}
	if len(order) != 5 {
		t.Fatalf("%d groups: %v", len(order), order)
	}
	for p, n := range perParent {
		if n > 2 {
			t.Fatalf("parent %s has %d hits", p, n)
		}
	}
	// The groups are the parents of the best children, best first.
	var all []scored
	for i := range c.ids {
		if s, ok := sparseDot([]uint32{0, 3, 6, 9, 12, 15}, []float32{1, 1, 1, 1, 1, 1}, c.sparse[i][0].([]uint32), c.sparse[i][1].([]float32)); ok {
			all = append(all, scored{c.parents[i], s})
		}
	}
	sort.SliceStable(all, func(a, b int) bool { return all[a].score > all[b].score })
	best := make(map[string]float32)
	for _, h := range all {
		if _, seen := best[h.id]; !seen {
			best[h.id] = h.score
		}
	}
	for i := 1; i < len(order); i++ {
		if best[order[i]] > best[order[i-1]] {
			t.Fatalf("groups out of order: %v", order)
		}
	}
}

func TestHybridSearchRRF(t *testing.T) {
	srv := milvustest.Start(t)
	cli := connect(t, srv)
	ctx := context.Background()
	c := makeCorpus(100, 21)
	setup(t, cli, "children", c, entity.IP)
	sq, _ := entity.NewSliceSparseEmbedding([]uint32{0, 3, 6}, []float32{1, 1, 1})
	dq := entity.FloatVector(c.dense[7])
	sparseRes, err := cli.Search(ctx, milvusclient.NewSearchOption("children", 20, []entity.Vector{sq}).WithANNSField("sparse"))
	if err != nil {
		t.Fatal(err)
	}
	denseRes, err := cli.Search(ctx, milvusclient.NewSearchOption("children", 20, []entity.Vector{dq}).WithANNSField("dense"))
	if err != nil {
		t.Fatal(err)
	}
	fused := make(map[string]float64)
	for _, rs := range []milvusclient.ResultSet{sparseRes[0], denseRes[0]} {
		for i, h := range hits(t, rs) {
			fused[h.id] += 1 / (60 + float64(i+1))
		}
	}
	res, err := cli.HybridSearch(ctx, milvusclient.NewHybridSearchOption("children", 10,
		milvusclient.NewAnnRequest("sparse", 20, sq), milvusclient.NewAnnRequest("dense", 20, dq)).
		WithReranker(milvusclient.NewRRFReranker()))
	if err != nil {
		t.Fatal(err)
	}
	got := hits(t, res[0])
	if len(got) != 10 {
		t.Fatalf("%d hybrid hits", len(got))
	}
	for _, h := range got {
		if math.Abs(float64(h.score)-fused[h.id]) > 1e-6 {
			t.Fatalf("hit %s: score %v, want %v", h.id, h.score, fused[h.id])
		}
	}
}

func TestAliases(t *testing.T) {
	srv := milvustest.Start(t)
	cli := connect(t, srv)
	ctx := context.Background()
	c := makeCorpus(10, 1)
	setup(t, cli, "rev1", c, "")
	setup(t, cli, "rev2", makeCorpus(20, 2), "")

	if err := cli.CreateAlias(ctx, milvusclient.NewCreateAliasOption("rev1", "corpus")); err != nil {
		t.Fatal(err)
	}
	if err := cli.CreateAlias(ctx, milvusclient.NewCreateAliasOption("rev1", "corpus")); err != nil {
		t.Fatalf("re-creating the same alias: %v", err)
	}
	if err := cli.CreateAlias(ctx, milvusclient.NewCreateAliasOption("rev2", "corpus")); !errors.Is(err, merr.ErrAliasAlreadyExist) {
		t.Fatalf("alias to another collection: %v", err)
	}
	if err := cli.CreateAlias(ctx, milvusclient.NewCreateAliasOption("rev2", "rev1")); !errors.Is(err, merr.ErrAliasCollectionNameConfilct) {
		t.Fatalf("alias named like a collection: %v", err)
	}
	if err := cli.CreateAlias(ctx, milvusclient.NewCreateAliasOption("missing", "other")); !errors.Is(err, merr.ErrCollectionNotFound) {
		t.Fatalf("alias to a missing collection: %v", err)
	}
	a, err := cli.DescribeAlias(ctx, milvusclient.NewDescribeAliasOption("corpus"))
	if err != nil || a.CollectionName != "rev1" || a.Alias != "corpus" {
		t.Fatalf("describe alias %+v, %v", a, err)
	}
	// Reads through the alias reach the collection.
	if n := count(t, cli, "corpus", ""); n != 10 {
		t.Fatalf("count through alias %d", n)
	}
	coll, err := cli.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption("corpus"))
	if err != nil || coll.Name != "rev1" {
		t.Fatalf("describe through alias: %v, %v", coll, err)
	}
	// Dropping an aliased collection, or a collection through its alias,
	// is refused.
	if err := cli.DropCollection(ctx, milvusclient.NewDropCollectionOption("rev1")); err == nil || !strings.Contains(err.Error(), "alias") {
		t.Fatalf("dropping an aliased collection: %v", err)
	}
	if err := cli.DropCollection(ctx, milvusclient.NewDropCollectionOption("corpus")); err == nil {
		t.Fatal("dropping through an alias succeeded")
	}
	// On the wire, refusals carry both the error code and the legacy one.
	resp, err := cli.GetService().DescribeCollection(ctx, &milvuspb.DescribeCollectionRequest{CollectionName: "missing"})
	if err != nil {
		t.Fatal(err)
	}
	if st := resp.GetStatus(); st.GetCode() != 100 || st.GetErrorCode() != commonpb.ErrorCode_CollectionNotExists || st.GetReason() == "" {
		t.Fatalf("status of a missing collection: %v", st)
	}
	st, err := cli.GetService().DropCollection(ctx, &milvuspb.DropCollectionRequest{CollectionName: "rev1"})
	if err != nil {
		t.Fatal(err)
	}
	if st.GetCode() != 1100 || st.GetErrorCode() != commonpb.ErrorCode_IllegalArgument {
		t.Fatalf("status of a refused drop: %v", st)
	}
	// Move the alias.
	if err := cli.AlterAlias(ctx, milvusclient.NewAlterAliasOption("corpus", "rev2")); err != nil {
		t.Fatal(err)
	}
	if err := cli.AlterAlias(ctx, milvusclient.NewAlterAliasOption("nope", "rev2")); !errors.Is(err, merr.ErrAliasNotFound) {
		t.Fatalf("altering a missing alias: %v", err)
	}
	if n := count(t, cli, "corpus", ""); n != 20 {
		t.Fatalf("count through moved alias %d", n)
	}
	if err := cli.CreateAlias(ctx, milvusclient.NewCreateAliasOption("rev2", "latest")); err != nil {
		t.Fatal(err)
	}
	list, err := cli.ListAliases(ctx, milvusclient.NewListAliasesOption("rev2"))
	if err != nil || !slices.Equal(list, []string{"corpus", "latest"}) {
		t.Fatalf("list aliases %v, %v", list, err)
	}
	list, err = cli.ListAliases(ctx, milvusclient.NewListAliasesOption("rev1"))
	if err != nil || len(list) != 0 {
		t.Fatalf("aliases of rev1 %v, %v", list, err)
	}
	if got := srv.Aliases(); got["corpus"] != "rev2" || got["latest"] != "rev2" || len(got) != 2 {
		t.Fatalf("server aliases %v", got)
	}
	if err := cli.DropCollection(ctx, milvusclient.NewDropCollectionOption("rev1")); err != nil {
		t.Fatalf("dropping the un-aliased collection: %v", err)
	}
	for _, al := range []string{"corpus", "latest", "corpus"} {
		if err := cli.DropAlias(ctx, milvusclient.NewDropAliasOption(al)); err != nil {
			t.Fatalf("drop alias %s: %v", al, err)
		}
	}
	if _, err := cli.DescribeAlias(ctx, milvusclient.NewDescribeAliasOption("corpus")); !errors.Is(err, merr.ErrAliasNotFound) {
		t.Fatalf("describe dropped alias: %v", err)
	}
	if err := cli.DropCollection(ctx, milvusclient.NewDropCollectionOption("rev2")); err != nil {
		t.Fatal(err)
	}
	if len(srv.Collections()) != 0 {
		t.Fatalf("collections left: %v", srv.Collections())
	}
}

func TestInsertSchemaChecks(t *testing.T) {
	srv := milvustest.Start(t)
	cli := connect(t, srv)
	ctx := context.Background()
	if err := cli.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("c", testSchema(true))); err != nil {
		t.Fatal(err)
	}
	c := makeCorpus(3, 1)
	sp := func() *column.ColumnSparseFloatVector {
		e, _ := entity.NewSliceSparseEmbedding([]uint32{1}, []float32{1})
		return column.NewColumnSparseVectors("sparse", []entity.SparseEmbedding{e, e, e})
	}
	base := func(text []string, meta [][]byte) []column.Column {
		return []column.Column{
			column.NewColumnVarChar("id", c.ids), column.NewColumnVarChar("parent_id", c.parents),
			column.NewColumnInt64("ordinal", c.ordinals), column.NewColumnVarChar("text", text),
			column.NewColumnJSONBytes("metadata", meta), sp(),
		}
	}
	cases := map[string]milvusclient.InsertOption{
		"missing dense field": milvusclient.NewColumnBasedInsertOption("c", base(c.texts, c.meta)...),
		"text too long": milvusclient.NewColumnBasedInsertOption("c", base([]string{"a", strings.Repeat("x", 300), "b"}, c.meta)...).
			WithFloatVectorColumn("dense", dim, c.dense),
		"invalid json": milvusclient.NewColumnBasedInsertOption("c", base(c.texts, [][]byte{[]byte("{"), []byte("{}"), []byte("{}")})...).
			WithFloatVectorColumn("dense", dim, c.dense),
	}
	for name, opt := range cases {
		if _, err := cli.Insert(ctx, opt); err == nil {
			t.Errorf("%s: insert accepted", name)
		} else if !errors.Is(err, merr.ErrParameterInvalid) {
			t.Errorf("%s: %v is not ErrParameterInvalid", name, err)
		}
	}
	// The client checks the dense dimension itself.
	if _, err := cli.Insert(ctx, milvusclient.NewColumnBasedInsertOption("c", base(c.texts, c.meta)...).
		WithFloatVectorColumn("dense", 4, [][]float32{{1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2, 3, 4}})); err == nil {
		t.Error("wrong dimension accepted")
	}
	if srv.RowCount("c") != 0 {
		t.Fatalf("rows after refused inserts: %d", srv.RowCount("c"))
	}
	if _, err := cli.Insert(ctx, milvusclient.NewColumnBasedInsertOption("c", base(c.texts, c.meta)...).
		WithFloatVectorColumn("dense", dim, c.dense)); err != nil {
		t.Fatal(err)
	}
	if srv.RowCount("c") != 3 {
		t.Fatalf("rows %d", srv.RowCount("c"))
	}
}

func TestFaultInjection(t *testing.T) {
	srv := milvustest.Start(t)
	cli := connect(t, srv)
	ctx := context.Background()
	setup(t, cli, "c", makeCorpus(20, 1), "")

	// A gRPC error that the client does not retry surfaces as is.
	srv.FailNext("Query", 1, codes.Internal)
	_, err := cli.Query(ctx, milvusclient.NewQueryOption("c").WithOutputFields("count(*)"))
	if status.Code(err) != codes.Internal {
		t.Fatalf("injected Internal: %v", err)
	}
	// A Milvus status error surfaces as the merr error.
	srv.Inject("Query", 1, milvustest.Fault{Err: merr.ErrServiceRateLimit})
	_, err = cli.Query(ctx, milvusclient.NewQueryOption("c").WithOutputFields("count(*)"))
	if !errors.Is(err, merr.ErrServiceRateLimit) {
		t.Fatalf("injected rate limit: %v", err)
	}
	// The client retries Unavailable by itself.
	before := srv.Calls("Query")
	srv.FailNext("Query", 2)
	if n := count(t, cli, "c", ""); n != 20 {
		t.Fatalf("count after retries %d", n)
	}
	if got := srv.Calls("Query") - before; got != 3 {
		t.Fatalf("%d Query calls, want 3", got)
	}
	// A lost answer: the insert took effect although the client saw an error.
	srv.Inject("Insert", 1, milvustest.Fault{After: true, Code: codes.DeadlineExceeded})
	c2 := makeCorpus(1, 9)
	c2.ids[0] = "extra"
	if _, err := cli.Insert(ctx, c2.insertOption("c", 0, 1, false)); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("lost answer: %v", err)
	}
	if n := count(t, cli, "c", ""); n != 21 {
		t.Fatalf("count after lost answer %d", n)
	}
	// An outage: calls fail until it ends.
	srv.SetUnavailable(true)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = cli.Query(short, milvusclient.NewQueryOption("c").WithOutputFields("count(*)"))
	cancel()
	if err == nil {
		t.Fatal("query during an outage succeeded")
	}
	srv.SetUnavailable(false)
	if n := count(t, cli, "c", ""); n != 21 {
		t.Fatalf("count after outage %d", n)
	}
	// A slow call.
	srv.Inject("Query", 1, milvustest.Fault{Delay: 500 * time.Millisecond})
	short, cancel = context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := cli.Query(short, milvusclient.NewQueryOption("c").WithOutputFields("count(*)")); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("slow call: %v", err)
	}
}

func TestDatabasesAndAuth(t *testing.T) {
	srv := milvustest.Start(t)
	ctx := context.Background()
	cli := connect(t, srv)
	if err := cli.CreateDatabase(ctx, milvusclient.NewCreateDatabaseOption("team")); err != nil {
		t.Fatal(err)
	}
	dbs, err := cli.ListDatabase(ctx, milvusclient.NewListDatabaseOption())
	if err != nil || !slices.Equal(dbs, []string{"default", "team"}) {
		t.Fatalf("databases %v, %v", dbs, err)
	}
	teamCli, err := milvusclient.New(ctx, &milvusclient.ClientConfig{Address: srv.Addr(), DBName: "team"})
	if err != nil {
		t.Fatal(err)
	}
	defer teamCli.Close(ctx)
	if err := teamCli.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("c", testSchema(false))); err != nil {
		t.Fatal(err)
	}
	if got := srv.CollectionsIn("team"); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("team collections %v", got)
	}
	if len(srv.Collections()) != 0 {
		t.Fatalf("default collections %v", srv.Collections())
	}
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := milvusclient.New(short, &milvusclient.ClientConfig{Address: srv.Addr(), DBName: "nope"}); !errors.Is(err, merr.ErrDatabaseNotFound) {
		t.Fatalf("connecting to a missing database: %v", err)
	}

	srv.RequireAuth("root", "secret")
	if _, err := milvusclient.New(short, &milvusclient.ClientConfig{Address: srv.Addr(), Username: "root", Password: "wrong"}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("wrong password: %v", err)
	}
	authed, err := milvusclient.New(short, &milvusclient.ClientConfig{Address: srv.Addr(), APIKey: "root:secret"})
	if err != nil {
		t.Fatalf("token: %v", err)
	}
	defer authed.Close(ctx)
	if _, err := authed.ListCollections(ctx, milvusclient.NewListCollectionOption()); err != nil {
		t.Fatal(err)
	}
}

// TestQuickSetupAndDynamicFields covers the client's quick setup: an
// auto-id int64 key, a "vector" field, an index and a load in one call,
// and keys outside the schema kept in the dynamic field.
func TestQuickSetupAndDynamicFields(t *testing.T) {
	srv := milvustest.Start(t)
	cli := connect(t, srv)
	ctx := context.Background()
	if err := cli.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions("quick", 4)); err != nil {
		t.Fatal(err)
	}
	if st := srv.LoadState("quick"); st != commonpb.LoadState_LoadStateLoaded {
		t.Fatalf("quick setup left the collection %v", st)
	}
	if p := srv.IndexParams("quick", "vector"); p["metric_type"] != "COSINE" {
		t.Fatalf("quick setup index %v", p)
	}
	vecs := [][]float32{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {1, 1, 0, 0}}
	res, err := cli.Insert(ctx, milvusclient.NewColumnBasedInsertOption("quick").
		WithFloatVectorColumn("vector", 4, vecs).
		WithVarcharColumn("color", []string{"red", "blue", "red", "green"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.IDs.Len() != 4 {
		t.Fatalf("%d generated ids", res.IDs.Len())
	}
	if n := count(t, cli, "quick", `color == "red"`); n != 2 {
		t.Fatalf("dynamic filter counted %d", n)
	}
	sr, err := cli.Search(ctx, milvusclient.NewSearchOption("quick", 2, []entity.Vector{entity.FloatVector{1, 0, 0, 0}}).
		WithOutputFields("color"))
	if err != nil {
		t.Fatal(err)
	}
	if sr[0].ResultCount != 2 || math.Abs(float64(sr[0].Scores[0])-1) > 1e-6 {
		t.Fatalf("quick search: %d hits, scores %v", sr[0].ResultCount, sr[0].Scores)
	}
	color, err := sr[0].GetColumn("color").GetAsString(0)
	if err != nil || color != "red" {
		t.Fatalf("dynamic output field: %q, %v", color, err)
	}
}
