package mysqlserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"

	"github.com/loadnode/loadnode/api"
)

// Execer runs one Doris-compatible statement as `loadnode sql` does
// (client.Client.Exec).
type Execer interface {
	Exec(ctx context.Context, statement string) (*api.ExecResponse, error)
}

// Defaults of Config.
const (
	DefaultMaxConns         = 256
	DefaultMaxQuery         = 1 << 20 // 1 MiB
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultIdleTimeout      = 8 * time.Hour // MySQL's wait_timeout
	DefaultReadTimeout      = 30 * time.Second
	DefaultWriteTimeout     = 30 * time.Second
	DefaultExecTimeout      = 60 * time.Second
)

// ServerVersion is what the handshake and SELECT VERSION() report: Doris
// FE's MySQL version, which clients know.
const ServerVersion = "5.7.99"

// VersionComment is @@version_comment (the mysql client prints it).
const VersionComment = "loadnode (Doris-compatible routine loads)"

// DefaultDatabase is the name of the embedded store among the databases
// (SHOW DATABASES, USE): the tables that name no database of the node
// config.
const DefaultDatabase = "loadnode"

// Config is what a Server is started with.
type Config struct {
	// Exec runs the statements; required.
	Exec Execer
	// Token is the password of every user; "" takes the empty password.
	Token string
	// TLS, when not nil, is the certificate the server offers; a client
	// that does not switch to TLS is refused after the handshake.
	TLS *tls.Config
	// Databases are the node config's database names; DefaultDatabase is
	// added.
	Databases []string
	// MaxConns bounds the open connections (default DefaultMaxConns);
	// one more is answered error 1040 and closed.
	MaxConns int
	// MaxQuery bounds one command's bytes (default DefaultMaxQuery).
	MaxQuery int
	// HandshakeTimeout bounds the handshake and auth (default 10s);
	// IdleTimeout a wait for the next command (default 8h); WriteTimeout
	// each write to the client (default 30s); ExecTimeout a statement
	// (default 60s).
	// ReadTimeout bounds the rest of a command once its first bytes came
	// (default 30s): a client trickling a packet is cut off.
	HandshakeTimeout, IdleTimeout, ReadTimeout, WriteTimeout, ExecTimeout time.Duration
	// Logger receives the server's logs; nil discards them.
	Logger *slog.Logger
}

func (c *Config) setDefaults() {
	if c.MaxConns <= 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.MaxQuery <= 0 {
		c.MaxQuery = DefaultMaxQuery
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.ExecTimeout <= 0 {
		c.ExecTimeout = DefaultExecTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Server serves the MySQL protocol on one listener.
type Server struct {
	cfg    Config
	proto  *server.Server
	ln     net.Listener
	ctx    context.Context // ends at Close: cancels the statements running
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu struct {
		sync.Mutex
		conns  map[net.Conn]struct{}
		closed bool
	}
}

// Listen binds addr and returns the server; Serve starts answering.
func Listen(addr string, cfg Config) (*Server, error) {
	if cfg.Exec == nil {
		return nil, errors.New("mysqlserver: Config.Exec is required")
	}
	cfg.setDefaults()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("mysqlserver: listen %s: %w", addr, err)
	}
	return New(ln, cfg), nil
}

// New serves on ln (which Close closes).
func New(ln net.Listener, cfg Config) *Server {
	cfg.setDefaults()
	var tlsCfg *tls.Config
	if cfg.TLS != nil {
		tlsCfg = cfg.TLS.Clone()
		if tlsCfg.MinVersion == 0 {
			tlsCfg.MinVersion = tls.VersionTLS12
		}
		tlsCfg.GetConfigForClient = markTLS(tlsCfg.GetConfigForClient)
	}
	s := &Server{cfg: cfg, ln: ln,
		proto: server.NewServer(ServerVersion, mysql.DEFAULT_COLLATION_ID, mysql.AUTH_NATIVE_PASSWORD, nil, tlsCfg)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.mu.conns = make(map[net.Conn]struct{})
	return s
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve accepts connections until Close; it returns nil after Close.
// An accept error (a process out of file descriptors) is retried after a
// growing pause (at most 1s).
func (s *Server) Serve() error {
	var delay time.Duration
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if s.isClosed() {
				return nil
			}
			// EMFILE and the like: wait and retry, as net/http does for
			// a temporary error; a listener that stays broken is logged
			// once a second.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			s.cfg.Logger.Warn("mysql: accept failed; retrying", "err", err, "in", delay)
			time.Sleep(delay)
			continue
		}
		delay = 0
		if !s.track(nc) {
			// Too many connections: answered in place of the handshake,
			// as MySQL does, on its own goroutine (a client that does not
			// read cannot hold the accept loop).
			go refuse(nc, s.cfg.WriteTimeout)
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.untrack(nc)
			s.serveConn(nc)
		}()
	}
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.closed
}

// track adds nc to the open connections; false when the server is closed
// or MaxConns are open.
func (s *Server) track(nc net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed || len(s.mu.conns) >= s.cfg.MaxConns {
		return false
	}
	s.mu.conns[nc] = struct{}{}
	return true
}

func (s *Server) untrack(nc net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.mu.conns, nc)
}

// Close stops accepting, closes every connection (a statement running is
// cancelled) and waits for their goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return nil
	}
	s.mu.closed = true
	err := s.ln.Close()
	for nc := range s.mu.conns {
		nc.Close()
	}
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	return err
}

// refuse answers a connection over MaxConns with error 1040 and closes it.
func refuse(nc net.Conn, writeTimeout time.Duration) {
	defer nc.Close()
	_ = nc.SetWriteDeadline(time.Now().Add(writeTimeout))
	_, _ = nc.Write(errPacket(0, mysql.ER_CON_COUNT_ERROR, "08004", "Too many connections"))
}

// errPacket is a MySQL ERR packet with sequence number seq.
func errPacket(seq byte, code uint16, state, msg string) []byte {
	body := []byte{mysql.ERR_HEADER, byte(code), byte(code >> 8), '#'}
	body = append(body, state...)
	body = append(body, msg...)
	n := len(body)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, body...)
}
