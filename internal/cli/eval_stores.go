package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/parentrag/parentrag/internal/eval"
	"github.com/parentrag/parentrag/internal/index/milvus"
	"github.com/parentrag/parentrag/internal/index/postgres"
	"github.com/parentrag/parentrag/internal/retrieval/build"
)

// evalStoreFlags choose where parentrag eval keeps each strategy's
// children.
type evalStoreFlags struct {
	childIndex, postgresDSN, milvusAddress string
}

// newStore returns eval's store factory for the flags: nil for the
// embedded store, else a fresh table or collection per strategy, named
// parentrag_eval_<strategy>_<time> and dropped when the strategy is
// scored. dense is the dimension of the embedding model (0: none).
func (f evalStoreFlags) newStore(dense int) (func(context.Context, string) (eval.Store, error), error) {
	name := func(strategy string) string {
		return postgres.TableName("parentrag_eval", strategy, fmt.Sprint(time.Now().Unix()))
	}
	switch f.childIndex {
	case "", "embedded":
		return nil, nil
	case "postgres":
		dsn := f.postgresDSN
		if dsn == "" {
			dsn = os.Getenv("PARENTRAG_POSTGRES_DSN")
		}
		return func(ctx context.Context, strategy string) (eval.Store, error) {
			st, err := build.OpenTable(ctx, postgres.Config{DSN: dsn, Table: name(strategy), Dense: dense, MaxConns: 8})
			return evalTable{st}, err
		}, nil
	case "milvus":
		if f.milvusAddress == "" {
			return nil, fmt.Errorf("--child-index milvus needs --milvus-address")
		}
		return func(ctx context.Context, strategy string) (eval.Store, error) {
			st, err := build.OpenCollection(ctx, milvus.Config{Address: f.milvusAddress, Collection: name(strategy), Dense: dense, Consistency: "Strong"})
			return evalCollection{st}, err
		}, nil
	}
	return nil, fmt.Errorf("--child-index %q: want embedded, postgres or milvus", f.childIndex)
}

// evalTable is a Postgres table dropped on Close.
type evalTable struct{ *postgres.Store }

func (t evalTable) Close(ctx context.Context) error {
	defer t.Store.Close()
	return t.Drop(ctx)
}

// evalCollection is a Milvus collection dropped on Close.
type evalCollection struct{ *milvus.Store }

func (c evalCollection) Close(ctx context.Context) error {
	err := c.Drop(ctx)
	if cerr := c.Store.Close(ctx); err == nil {
		err = cerr
	}
	return err
}

// childIndexNames lists the --child-index values of eval.
var childIndexNames = strings.Join([]string{"embedded", "postgres", "milvus"}, ", ")
