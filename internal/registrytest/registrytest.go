// Package registrytest runs a Confluent-compatible schema registry for
// tests: franz-go's srfake (the subjects, schemas and ids endpoints pkg/sr
// uses) served on 127.0.0.1 by a server this package can stop and start
// again on the same address, so that a test sees a registry that is down
// (connection refused) and comes back. Production code only uses pkg/sr.
package registrytest

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

// Server is a schema registry on 127.0.0.1.
type Server struct {
	Reg  *srfake.Registry
	addr string

	mu  sync.Mutex
	srv *http.Server
	ln  net.Listener
}

// New starts a registry on a free port; t.Cleanup stops it.
func New(t testing.TB) *Server {
	t.Helper()
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Start starts a registry on a free port of 127.0.0.1 (for callers that
// are not tests: the benchmark harness). Close stops it.
func Start() (*Server, error) {
	s := &Server{Reg: srfake.New()}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.Reg.Close()
		return nil, fmt.Errorf("registrytest: listen: %w", err)
	}
	s.addr = ln.Addr().String()
	s.serve(ln)
	return s, nil
}

// Close stops serving and releases the registry.
func (s *Server) Close() {
	s.Stop()
	s.Reg.Close()
}

// URL is the registry's base URL.
func (s *Server) URL() string { return "http://" + s.addr }

func (s *Server) serve(ln net.Listener) {
	srv := &http.Server{Handler: s.Reg.Handler()}
	s.srv, s.ln = srv, ln
	go func() { _ = srv.Serve(ln) }()
}

// Stop closes the listener and every connection: requests are refused
// until Start.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		_ = s.srv.Close()
		s.srv = nil
	}
}

// Start serves again on the same address.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return errors.New("registrytest: already serving")
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return err
	}
	s.serve(ln)
	return nil
}

// Register registers schema text under subject and returns its id.
func (s *Server) Register(t testing.TB, subject string, typ sr.SchemaType, schema string, refs ...sr.SchemaReference) int {
	t.Helper()
	id, _, err := s.Reg.RegisterSchema(subject, sr.Schema{Schema: schema, Type: typ, References: refs})
	if err != nil {
		t.Fatalf("registrytest: register %s: %v", subject, err)
	}
	return id
}
