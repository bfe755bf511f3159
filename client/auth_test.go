package client

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/internal/testdeps"
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
	_, err = Dial(context.Background(), l.Addr().String(), WithToken("0123456789abcdef-token"), WithTimeout(2*time.Second))
	if err == nil || !strings.Contains(err.Error(), "refusing to send the token to "+l.Addr().String()+" in plaintext") {
		t.Fatalf("got %v", err)
	}
	if n := <-got; n != 0 {
		t.Fatalf("the listener received %d bytes", n)
	}
}
