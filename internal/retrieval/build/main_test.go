package build_test

import (
	"testing"

	"github.com/parentrag/parentrag/internal/index/postgres/pgtest"
)

// TestMain stops the PGlite the tests started.
func TestMain(m *testing.M) { pgtest.Main(m) }
