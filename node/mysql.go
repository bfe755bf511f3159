package node

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/config"
	dorisexec "github.com/loadnode/loadnode/doris/exec"
	"github.com/loadnode/loadnode/mysqlserver"
)

// mysqlEndpoint is the MySQL-protocol endpoint (node key mysql): a
// mysqlserver.Server whose statements a client connected to this node's
// own remote endpoint runs, with the node's token and over its TLS. So a
// statement over MySQL takes the path `loadnode sql` takes (client.Exec's
// translation, the token check, the manager), one set of rules.
type mysqlEndpoint struct {
	srv    *mysqlserver.Server
	cl     *client.Client
	served chan error
}

// startMySQL dials the node at nodeAddr and serves the MySQL protocol on
// cfg.MySQL. The node must answer (recovery done).
func startMySQL(ctx context.Context, cfg config.Node, sec *security, nodeAddr string, logger *slog.Logger) (*mysqlEndpoint, error) {
	opts := []client.Option{client.WithToken(sec.token), client.WithLogger(logger),
		client.WithTimeout(mysqlserver.DefaultExecTimeout)}
	if sec.cert != nil {
		leaf := sec.cert.Certificate[0]
		opts = append(opts, client.WithTLS(&tls.Config{
			// The node's own certificate, pinned: it need not name the
			// address dialed (a loopback one) nor chain to a root we know.
			InsecureSkipVerify: true,
			VerifyConnection: func(cs tls.ConnectionState) error {
				if len(cs.PeerCertificates) == 0 || !bytes.Equal(cs.PeerCertificates[0].Raw, leaf) {
					return errors.New("node: mysql: the remote endpoint's certificate is not the node's")
				}
				return nil
			},
		}))
	}
	cl, err := client.Dial(ctx, dialable(nodeAddr), opts...)
	if err != nil {
		return nil, fmt.Errorf("node: mysql: connect to the node's own endpoint: %w", err)
	}
	var dbs []string
	for name := range cfg.Databases {
		dbs = append(dbs, name)
	}
	slices.Sort(dbs)
	srv, err := mysqlserver.Listen(cfg.MySQL, mysqlserver.Config{
		Exec: clientExecer{cl}, Token: sec.token, TLS: sec.serverTLS(), Databases: dbs,
		MaxConns: cfg.MySQLMaxConnections, Logger: logger,
	})
	if err != nil {
		cl.Close()
		return nil, fmt.Errorf("node: %w", err)
	}
	m := &mysqlEndpoint{srv: srv, cl: cl, served: make(chan error, 1)}
	go func() { m.served <- srv.Serve() }()
	return m, nil
}

// Addr is the address the endpoint listens on.
func (m *mysqlEndpoint) Addr() string { return m.srv.Addr() }

// close stops the endpoint (its connections, their statements), then the
// client.
func (m *mysqlEndpoint) close() {
	m.srv.Close()
	<-m.served
	m.cl.Close()
}

// dialable is addr with an unspecified host (every interface) made the
// loopback one, which a client can dial.
func dialable(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

// clientExecer runs a statement as `loadnode sql` does: through the Doris
// translation over the node's own client.
type clientExecer struct{ c *client.Client }

func (e clientExecer) Exec(ctx context.Context, statement string) (*api.ExecResponse, error) {
	return dorisexec.Exec(ctx, e.c, statement)
}
