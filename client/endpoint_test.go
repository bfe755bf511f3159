package client_test

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/internal/remoteauth"
	"github.com/loadnode/loadnode/internal/testcert"
	"github.com/loadnode/loadnode/node"
)

// An external test: node imports client (its MySQL endpoint runs
// statements through one), so a test of package client cannot import node.

// TestEndpointTakesOnlyTheNode: with TLS, the client's endpoint (where
// replies arrive) completes a connection only from the node's certificate.
func TestEndpointTakesOnlyTheNode(t *testing.T) {
	dir := t.TempDir()
	certs := testcert.Write(t, dir, "node")
	cfg := config.DefaultNode()
	cfg.DataDir, cfg.Listen = t.TempDir(), "127.0.0.1:0"
	cfg.AuthToken = "0123456789abcdef-token"
	cfg.TLSCertFile, cfg.TLSKeyFile = certs.CertFile, certs.KeyFile
	n, err := node.Start(context.Background(), node.Config{Node: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ctx := context.Background()
	c, err := client.Dial(ctx, n.Addr(), client.WithToken(cfg.AuthToken), client.WithTLS(&tls.Config{RootCAs: certs.Pool}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	endpoint := client.EndpointAddr(c)

	other, _, err := remoteauth.EphemeralCert()
	if err != nil {
		t.Fatal(err)
	}
	for name, certsToShow := range map[string][]tls.Certificate{"no certificate": nil, "another certificate": {other}} {
		conn, err := tls.Dial("tcp", endpoint, &tls.Config{InsecureSkipVerify: true, Certificates: certsToShow, NextProtos: []string{"h2"}})
		if err != nil {
			continue // refused in the handshake
		}
		// TLS 1.3: the server checks the client's certificate after the
		// client's side of the handshake; a refusal arrives on read.
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = conn.Read(make([]byte, 64))
		conn.Close()
		if err == nil || errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "timeout") {
			t.Errorf("%s: the endpoint accepted the connection (read err %v)", name, err)
		}
	}
	// The node itself still gets through.
	if _, err := c.ListJobs(ctx); err != nil {
		t.Fatal(err)
	}
}
