package client_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/internal/remoteauth"
	"github.com/loadnode/loadnode/internal/testcert"
	"github.com/loadnode/loadnode/internal/testdeps"
	"github.com/loadnode/loadnode/node"
)

// nonLoopbackIP is an address of this machine that is not loopback (nor
// link-local), IPv4 if there is one. A machine with none cannot run the
// test: it fails, unless $LOADNODE_SKIP_NETWORK=1 skips it.
func nonLoopbackIP(t *testing.T) net.IP {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	var v6 net.IP
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		switch {
		case !ok || !n.IP.IsGlobalUnicast():
		case n.IP.To4() != nil:
			return n.IP
		case v6 == nil:
			v6 = n.IP
		}
	}
	if v6 == nil {
		testdeps.Require(t, testdeps.Network, errors.New("no IP address beyond loopback on this machine: the test listens on one (give the machine a network interface)"))
	}
	return v6
}

// TestNoPlaintextTokenOffLoopback: a token is never sent without TLS to an
// address that is not loopback; the listener gets a connection (the reach
// check) and not one byte.
func TestNoPlaintextTokenOffLoopback(t *testing.T) {
	ip := nonLoopbackIP(t)
	l, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan int, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- -1
			return
		}
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b, _ := io.ReadAll(c)
		got <- len(b)
	}()
	_, err = client.Dial(context.Background(), l.Addr().String(), client.WithToken("0123456789abcdef-token"), client.WithTimeout(2*time.Second))
	if err == nil || !strings.Contains(err.Error(), "refusing to send the token to "+l.Addr().String()+" in plaintext") {
		t.Fatalf("got %v", err)
	}
	if n := <-got; n != 0 {
		t.Fatalf("the listener received %d bytes", n)
	}
}

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
