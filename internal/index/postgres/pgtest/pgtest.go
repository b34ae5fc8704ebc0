// Package pgtest gives tests a PostgreSQL with pgvector: the one at
// $PARENTRAG_POSTGRES_DSN when it is set, otherwise PGlite (PostgreSQL 18
// compiled to WebAssembly, from test/postgres) served on the Postgres wire
// protocol on a loopback port by a Node.js process this package starts and
// stops.
//
// PGlite is one database session shared by its connections: its socket
// server queues their messages and keeps a transaction to the connection
// that began it, but prepared statements, named or not, are the session's:
// one connection's Parse can land between another's Parse and Bind. So
// its DSN asks pgx for the simple protocol
// (default_query_exec_mode=simple_protocol): each statement is one
// message, its parameters written into it by pgx.
package pgtest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DSNEnv names a real PostgreSQL with pgvector to test against instead of
// PGlite.
const DSNEnv = "PARENTRAG_POSTGRES_DSN"

// Server is a running PGlite.
type Server struct {
	DSN string
	cmd *exec.Cmd
}

// startTimeout bounds PGlite's start (it compiles its WebAssembly).
const startTimeout = 90 * time.Second

// Dir returns test/postgres of the nearest folder above the working
// directory that has one.
func Dir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		cand := filepath.Join(dir, "test", "postgres")
		if _, err := os.Stat(filepath.Join(cand, "package-lock.json")); err == nil {
			return cand, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no test/postgres/package-lock.json above %s", wd)
		}
	}
}

// StartPGlite starts PGlite with pgvector on a free loopback port of host
// ("127.0.0.1" for tests) and waits until it answers a query. dataDir ""
// keeps the database in memory. Stop ends it.
func StartPGlite(ctx context.Context, host, dataDir string) (*Server, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "node_modules", "@electric-sql", "pglite-socket", "dist", "scripts", "server.js")
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("PGlite is not installed: run npm ci in %s (make postgres-engine)", dir)
	}
	port, err := freePort(host)
	if err != nil {
		return nil, err
	}
	db := "memory://"
	if dataDir != "" {
		db = dataDir
	}
	cmd := exec.Command("node", script, "--db="+db, "--host="+host, "--port="+strconv.Itoa(port),
		"--extensions=@electric-sql/pglite-pgvector:vector", "--max-connections=64")
	cmd.Dir = dir
	// The server dies with the test binary even when the binary is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting PGlite (node): %w", err)
	}
	s := &Server{cmd: cmd, DSN: fmt.Sprintf("postgres://postgres:postgres@%s/postgres?sslmode=disable&default_query_exec_mode=simple_protocol", net.JoinHostPort(host, strconv.Itoa(port)))}
	log := make(chan string, 64)
	go drain(out, log)
	if err := s.await(ctx, log); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// drain keeps the last lines of the server's output for an error message.
func drain(r interface{ Read([]byte) (int, error) }, log chan<- string) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		select {
		case log <- sc.Text():
		default:
		}
	}
	close(log)
}

// await polls the server with a query until it answers.
func (s *Server) await(ctx context.Context, log <-chan string) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	var last error
	for ctx.Err() == nil {
		conn, err := pgx.Connect(ctx, s.DSN)
		if err == nil {
			err = conn.QueryRow(ctx, `SELECT 1`).Scan(new(int))
			conn.Close(ctx)
			if err == nil {
				return nil
			}
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	var lines []string
	for l := range log {
		lines = append(lines, l)
		if len(lines) > 20 {
			break
		}
	}
	return fmt.Errorf("PGlite did not answer within %s: %v; its output: %s", startTimeout, last, strings.Join(lines, " | "))
}

// freePort asks the kernel for a port free on host.
func freePort(host string) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Stop ends the server and waits for it.
func (s *Server) Stop() {
	if s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			s.cmd.Process.Kill()
			<-done
		}
	}
}

var shared struct {
	mu  sync.Mutex
	srv *Server
	err error
}

// DSN returns the database of the tests: $PARENTRAG_POSTGRES_DSN, or a
// PGlite started once per test binary (Main stops it). When PGlite is not
// installed the test is skipped, or under CI=true fails, saying how to
// install it.
func DSN(tb testing.TB) string {
	tb.Helper()
	if dsn := os.Getenv(DSNEnv); dsn != "" {
		return dsn
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv == nil && shared.err == nil {
		shared.srv, shared.err = StartPGlite(context.Background(), "127.0.0.1", "")
	}
	if shared.err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("PostgreSQL for the tests: %v", shared.err)
		}
		tb.Skipf("no PostgreSQL for the tests (make postgres-engine installs PGlite, or set %s): %v", DSNEnv, shared.err)
	}
	return shared.srv.DSN
}

// Main runs the tests of a package and stops its PGlite, if one started:
// call it from TestMain.
func Main(m interface{ Run() int }) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the PGlite DSN started, if it did; a later DSN starts
// another.
func Stop() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv != nil {
		shared.srv.Stop()
	}
	shared.srv, shared.err = nil, nil
}

var schemas struct {
	mu sync.Mutex
	n  int
}

// Schema returns a schema name no other test of this process uses, so
// tests on one database do not see each other's tables.
func Schema(tb testing.TB) string {
	schemas.mu.Lock()
	defer schemas.mu.Unlock()
	schemas.n++
	return fmt.Sprintf("t%d_%d", time.Now().UnixNano()%1_000_000_000, schemas.n)
}
