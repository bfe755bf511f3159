package mysqlserver

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"
)

// Error codes of MySQL's that go-mysql does not name.
const (
	erMalformedPacket       = 1835
	erSecureTransportNeeded = 3159
)

// serveConn runs one connection: the handshake, then its commands until
// the client quits, a deadline passes or a command is refused.
func (s *Server) serveConn(nc net.Conn) {
	lc := &limitConn{Conn: nc, srv: s}
	lc.budget.Store(int64(s.cfg.MaxQuery) + budgetSlack)
	_ = nc.SetDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
	sess := &session{srv: s, db: DefaultDatabase}
	c, err := s.handshake(lc, sess)
	if err != nil {
		s.cfg.Logger.Debug("mysql: handshake failed", "peer", nc.RemoteAddr().String(), "err", err)
		nc.Close()
		return
	}
	sess.conn = c
	lc.top = func() net.Conn {
		if pc := c.Conn; pc != nil {
			return pc.Conn
		}
		return lc
	}
	_ = nc.SetDeadline(time.Time{})
	for !c.Closed() {
		lc.startCommand()
		if err := s.command(c); err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.cfg.Logger.Debug("mysql: connection closed", "peer", nc.RemoteAddr().String(), "err", err)
			}
			break
		}
	}
	nc.Close()
}

// handshake runs go-mysql's handshake, turning its panics on a malformed
// handshake packet into an error.
func (s *Server) handshake(lc *limitConn, sess *session) (c *server.Conn, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("mysqlserver: malformed handshake: %v", r)
		}
	}()
	return s.proto.NewCustomizedConn(lc, credentials{srv: s, lc: lc}, sess)
}

// command reads and answers one command. go-mysql indexes a packet without
// checking its length (an empty packet, a COM_FIELD_LIST without its NUL):
// such a panic is answered error 1835 and closes the connection.
func (s *Server) command(c *server.Conn) (err error) {
	pc := c.Conn
	defer func() {
		if r := recover(); r != nil {
			s.cfg.Logger.Debug("mysql: malformed packet", "panic", fmt.Sprint(r))
			if pc != nil {
				_, _ = pc.Conn.Write(errPacket(1, erMalformedPacket, "08S01", "Malformed communication packet."))
			}
			c.Close()
			err = fmt.Errorf("mysqlserver: malformed packet: %v", r)
		}
	}()
	return c.HandleCommand()
}

// credentials: every user's password is the token. With TLS configured, a
// client that did not switch to TLS is refused here, during the handshake
// (its answer is an error packet the client shows).
type credentials struct {
	srv *Server
	lc  *limitConn
}

func (cr credentials) CheckUsername(string) (bool, error) { return true, nil }

func (cr credentials) GetCredential(string) (string, bool, error) {
	if cr.srv.cfg.TLS != nil && !cr.lc.tls.Load() {
		return "", false, mysql.NewError(erSecureTransportNeeded, "Connections using insecure transport are prohibited: this node serves TLS (mysql --ssl, JDBC useSSL=true, go-sql-driver tls=true)")
	}
	return cr.srv.cfg.Token, true, nil
}

var _ server.CredentialProvider = credentials{}

// budgetSlack is what a command may read beyond MaxQuery before its
// connection is cut: the packet header, TLS records' overhead and what the
// reader buffers ahead. A query between MaxQuery and this is refused by
// HandleQuery with the connection kept.
const budgetSlack = 64 << 10

// drainMax and drainWait bound what is read and dropped after a command is
// cut for its size, so that the client, still sending, reads the error.
const (
	drainMax  = 64 << 20
	drainWait = 2 * time.Second
)

// limitConn is the connection under go-mysql (and under TLS): it bounds the
// bytes of one command, tightens the read deadline once a command has
// begun, and puts a deadline on every write.
//
// Concurrency: used by its connection's goroutine only, but for tls (set
// by the TLS handshake's callback, on that goroutine too).
type limitConn struct {
	net.Conn
	srv *Server
	// tls is set when the client switched to TLS.
	tls atomic.Bool
	// budget is what the current command may still read; started is
	// whether its first bytes came.
	budget  atomic.Int64
	started bool
	// top is the connection go-mysql writes to (the TLS one, or this),
	// for the error written when a command is cut.
	top func() net.Conn
}

// startCommand opens the wait for the next command: the idle deadline,
// and a full budget.
func (l *limitConn) startCommand() {
	l.budget.Store(int64(l.srv.cfg.MaxQuery) + budgetSlack)
	l.started = false
	_ = l.Conn.SetReadDeadline(time.Now().Add(l.srv.cfg.IdleTimeout))
}

// errTooLarge ends a connection whose command went over the budget.
var errTooLarge = errors.New("mysqlserver: command larger than the limit")

func (l *limitConn) Read(p []byte) (int, error) {
	left := l.budget.Load()
	if left <= 0 {
		l.tooLarge()
		return 0, errTooLarge
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := l.Conn.Read(p)
	l.budget.Add(-int64(n))
	if n > 0 && !l.started {
		// The command has begun: the rest must come within ReadTimeout.
		l.started = true
		_ = l.Conn.SetReadDeadline(time.Now().Add(l.srv.cfg.ReadTimeout))
	}
	return n, err
}

// tooLarge answers a command cut for its size with error 1153 (as MySQL
// answers a packet over max_allowed_packet), after reading and dropping
// what the client still sends (bounded), so that it reads the error.
func (l *limitConn) tooLarge() {
	msg := fmt.Sprintf("Got a packet bigger than 'max_allowed_packet' bytes (%d)", l.srv.cfg.MaxQuery)
	w := net.Conn(l)
	if l.top != nil {
		w = l.top()
	}
	_ = l.Conn.SetReadDeadline(time.Now().Add(drainWait))
	_, _ = io.CopyN(io.Discard, l.Conn, drainMax)
	_, _ = w.Write(errPacket(1, mysql.ER_NET_PACKET_TOO_LARGE, "08S01", msg))
}

func (l *limitConn) Write(p []byte) (int, error) {
	_ = l.Conn.SetWriteDeadline(time.Now().Add(l.srv.cfg.WriteTimeout))
	return l.Conn.Write(p)
}

// markTLS is the TLS configuration's GetConfigForClient: it records on the
// connection that the client switched to TLS.
func markTLS(next func(*tls.ClientHelloInfo) (*tls.Config, error)) func(*tls.ClientHelloInfo) (*tls.Config, error) {
	return func(hi *tls.ClientHelloInfo) (*tls.Config, error) {
		if lc, ok := hi.Conn.(*limitConn); ok {
			lc.tls.Store(true)
		}
		if next != nil {
			return next(hi)
		}
		return nil, nil
	}
}
