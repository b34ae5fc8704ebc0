// Package milvustest is a Milvus-wire-compatible gRPC server for tests. It
// speaks the MilvusService protocol of github.com/milvus-io/milvus-proto, so
// the real Go client (github.com/milvus-io/milvus/client/v2/milvusclient)
// drives it exactly as it drives a Milvus server, and it keeps real state in
// memory: databases, collections with schemas, rows, aliases, indexes, load
// and flush states. Search is exact (brute force): sparse float vectors by
// inner product, dense float vectors by IP, COSINE or L2, with boolean
// filters, output fields and grouping.
//
// Errors follow Milvus: a refused request answers with a response Status
// carrying both the error Code and the legacy ErrorCode, built the way the
// Milvus server builds them (merr.Status), so the client's errors.Is checks
// (merr.ErrCollectionNotFound and friends) hold.
//
// Faults can be injected per method (FailNext, Inject) or for every method
// (SetUnavailable) to test retries and outages.
package milvustest

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
)

// Version is what GetVersion reports: the Milvus release whose wire
// behaviour the server follows.
const Version = "v2.6.5"

// maxMessageBytes is the largest request or response the server accepts,
// as Milvus's proxy (grpc.serverMaxRecvSize) does.
const maxMessageBytes = 256 << 20

// Server is an in-memory Milvus. The zero value is not usable; call New or
// Start. All methods are safe for concurrent use.
type Server struct {
	milvuspb.UnimplementedMilvusServiceServer

	mu    sync.RWMutex
	state *state

	faultMu     sync.Mutex
	faults      map[string][]Fault
	unavailable bool
	latency     time.Duration
	calls       map[string]int
	auth        string // expected authorization header value; "" disables auth
	loadDelay   time.Duration

	grpc *grpc.Server
	lis  net.Listener
}

// New returns a server with a "default" database and nothing else. Serve
// it on a listener, or use Start.
func New() *Server {
	s := &Server{
		state:  newState(),
		faults: make(map[string][]Fault),
		calls:  make(map[string]int),
	}
	s.grpc = grpc.NewServer(
		grpc.MaxRecvMsgSize(maxMessageBytes),
		grpc.MaxSendMsgSize(maxMessageBytes),
		// The client pings every 5 s even without streams; accept it as
		// Milvus does instead of answering with GOAWAY too_many_pings.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: time.Second, PermitWithoutStream: true}),
		grpc.ChainUnaryInterceptor(s.intercept),
	)
	milvuspb.RegisterMilvusServiceServer(s.grpc, s)
	return s
}

// Start serves a new server on 127.0.0.1 on a free port and stops it when
// the test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("milvustest: listen: %v", err)
	}
	s := New()
	s.setListener(lis)
	go func() { _ = s.Serve(lis) }()
	tb.Cleanup(s.Stop)
	return s
}

// Serve accepts connections on lis until Stop. It returns nil after Stop.
func (s *Server) Serve(lis net.Listener) error {
	s.setListener(lis)
	err := s.grpc.Serve(lis)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

func (s *Server) setListener(lis net.Listener) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.lis = lis
}

// Stop closes the listener and every connection at once.
func (s *Server) Stop() {
	s.grpc.Stop()
}

// Addr is the host:port the server listens on, for ClientConfig.Address.
// It is empty before Serve.
func (s *Server) Addr() string {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	if s.lis == nil {
		return ""
	}
	return s.lis.Addr().String()
}

// Fault is one injected failure of one call.
type Fault struct {
	// Code is the gRPC status code the call fails with. It is used when Err
	// is nil; zero means codes.Unavailable.
	Code codes.Code
	// Err, when set, is a Milvus error (one of merr's, e.g.
	// merr.ErrServiceRateLimit) that the call returns inside its response
	// Status, as Milvus refuses requests, instead of a gRPC error.
	Err error
	// After applies the call first and fails only its answer: a response
	// lost on the way back, so the client cannot tell that it took effect.
	After bool
	// Delay holds the call this long before it is answered (or fails).
	Delay time.Duration
}

// FailNext makes the next n calls of method ("Insert", "Search", ... as
// named in MilvusService) fail with a gRPC error of the given code,
// codes.Unavailable when none is given, before they take effect. Note
// that client/v2 itself retries Unavailable and ResourceExhausted up to six
// times with backoff (60 ms × 3^attempt).
func (s *Server) FailNext(method string, n int, code ...codes.Code) {
	f := Fault{Code: codes.Unavailable}
	if len(code) > 0 {
		f.Code = code[0]
	}
	s.Inject(method, n, f)
}

// Inject queues fault for the next n calls of method. Faults queue in the
// order injected.
func (s *Server) Inject(method string, n int, f Fault) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	for range n {
		s.faults[method] = append(s.faults[method], f)
	}
}

// ClearFaults drops every queued fault and ends an outage.
func (s *Server) ClearFaults() {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.faults = make(map[string][]Fault)
	s.unavailable = false
}

// SetUnavailable starts (true) or ends (false) an outage: while it lasts
// every call fails with codes.Unavailable.
func (s *Server) SetUnavailable(down bool) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.unavailable = down
}

// SetLatency delays every call by d, a slow server.
func (s *Server) SetLatency(d time.Duration) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.latency = d
}

// SetLoadDelay makes LoadCollection take d: the collection stays in
// LoadStateLoading, with a growing progress, until d has passed.
func (s *Server) SetLoadDelay(d time.Duration) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.loadDelay = d
}

// RequireAuth turns authentication on: every call must carry the
// authorization the client sends for Username/Password user and password,
// or for APIKey "user:password", else it fails with codes.Unauthenticated.
func (s *Server) RequireAuth(user, password string) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.auth = base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
}

// Calls returns how many calls of method reached the server, failed ones
// included.
func (s *Server) Calls(method string) int {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	return s.calls[method]
}

// intercept counts calls, enforces auth and applies faults around the
// handler.
func (s *Server) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	method := info.FullMethod[strings.LastIndexByte(info.FullMethod, '/')+1:]
	s.faultMu.Lock()
	s.calls[method]++
	down, latency, auth := s.unavailable, s.latency, s.auth
	var fault *Fault
	if q := s.faults[method]; len(q) > 0 {
		f := q[0]
		fault = &f
		s.faults[method] = q[1:]
	}
	s.faultMu.Unlock()

	if latency > 0 {
		if err := sleep(ctx, latency); err != nil {
			return nil, err
		}
	}
	if down {
		return nil, status.Error(codes.Unavailable, "milvustest: server unavailable")
	}
	if auth != "" {
		md, _ := metadata.FromIncomingContext(ctx)
		if v := md.Get("authorization"); len(v) == 0 || v[0] != auth {
			return nil, status.Error(codes.Unauthenticated, "auth check failure, please check username, password or API key")
		}
	}
	if fault == nil {
		return handler(ctx, req)
	}
	if fault.Delay > 0 {
		if err := sleep(ctx, fault.Delay); err != nil {
			return nil, err
		}
	}
	if fault.After {
		if _, err := handler(ctx, req); err != nil {
			return nil, err
		}
	}
	if fault.Err != nil {
		return statusResponse(method, merr.Status(fault.Err))
	}
	code := fault.Code
	if code == codes.OK {
		code = codes.Unavailable
	}
	return nil, status.Errorf(code, "milvustest: injected %s failure of %s", code, method)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	case <-t.C:
		return nil
	}
}

var serviceType = reflect.TypeFor[milvuspb.MilvusServiceServer]()

// statusResponse builds method's response message carrying st: the Status
// itself for methods that answer with a bare Status, else the response's
// status field.
func statusResponse(method string, st *commonpb.Status) (any, error) {
	m, ok := serviceType.MethodByName(method)
	if !ok {
		return nil, status.Errorf(codes.Unimplemented, "milvustest: unknown method %s", method)
	}
	out := m.Type.Out(0) // pointer to the response message
	msg := reflect.New(out.Elem()).Interface().(proto.Message)
	if st2, ok := msg.(*commonpb.Status); ok {
		proto.Merge(st2, st)
		return st2, nil
	}
	r := msg.ProtoReflect()
	f := r.Descriptor().Fields().ByName(protoreflect.Name("status"))
	if f == nil {
		return nil, status.Errorf(codes.Internal, "milvustest: %s response has no status", method)
	}
	r.Set(f, protoreflect.ValueOfMessage(st.ProtoReflect()))
	return msg, nil
}

// Collections returns the names of the collections of the default
// database, sorted.
func (s *Server) Collections() []string {
	return s.CollectionsIn(defaultDB)
}

// CollectionsIn returns the names of the collections of database db,
// sorted; nil when db does not exist.
func (s *Server) CollectionsIn(db string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d := s.state.dbs[db]
	if d == nil {
		return nil
	}
	out := make([]string, 0, len(d.colls))
	for name := range d.colls {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Aliases returns the aliases of the default database, each mapped to its
// collection's name.
func (s *Server) Aliases() map[string]string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string]string)
	for a, c := range s.state.dbs[defaultDB].aliases {
		out[a] = c
	}
	return out
}

// RowCount returns the number of live rows of the named collection (or
// alias) of the default database, flushed or not; -1 when it does not
// exist. Rows inserted twice with the same primary key count twice, as in
// Milvus.
func (s *Server) RowCount(name string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, err := s.state.dbs[defaultDB].lookup(name)
	if err != nil {
		return -1
	}
	return c.live
}

// LoadState returns the load state of the named collection of the
// default database (LoadStateNotExist when there is none).
func (s *Server) LoadState(name string) commonpb.LoadState {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, err := s.state.dbs[defaultDB].lookup(name)
	if err != nil {
		return commonpb.LoadState_LoadStateNotExist
	}
	st, _ := c.loadState(time.Now())
	return st
}

// IndexParams returns the parameters of the index on field of the named
// collection of the default database (index_type, metric_type and the
// index's own), or nil when the field has no index.
func (s *Server) IndexParams(name, field string) map[string]string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, err := s.state.dbs[defaultDB].lookup(name)
	if err != nil {
		return nil
	}
	for _, ix := range c.indexes {
		if ix.field == field {
			out := make(map[string]string, len(ix.params))
			for k, v := range ix.params {
				out[k] = v
			}
			return out
		}
	}
	return nil
}

// String describes the server for test logs.
func (s *Server) String() string { return fmt.Sprintf("milvustest.Server(%s)", s.Addr()) }
