package remoteauth

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

func TestCheckToken(t *testing.T) {
	const want = "0123456789abcdef"
	for _, tc := range []struct {
		md   metadata.MD
		code codes.Code
		msg  string
	}{
		{nil, codes.Unauthenticated, "no token"},
		{metadata.Pairs(TokenKey, "Bearer "+want), codes.OK, ""},
		{metadata.Pairs(TokenKey, "bearer "+want), codes.OK, ""},
		{metadata.Pairs(TokenKey, "Bearer "+want+"x"), codes.Unauthenticated, "wrong token"},
		{metadata.Pairs(TokenKey, "Bearer "+want[:15]), codes.Unauthenticated, "wrong token"},
		{metadata.Pairs(TokenKey, "Bearer "), codes.Unauthenticated, "wrong token"},
		{metadata.Pairs(TokenKey, want), codes.Unauthenticated, "not a bearer token"},
		{metadata.Pairs(TokenKey, "Basic "+want), codes.Unauthenticated, "not a bearer token"},
	} {
		ctx := metadata.NewIncomingContext(context.Background(), tc.md)
		err := CheckToken(ctx, want)
		st := status.Convert(err)
		if st.Code() != tc.code || !strings.Contains(st.Message(), tc.msg) {
			t.Errorf("%v: got %v, want %v %q", tc.md, err, tc.code, tc.msg)
		}
		if err != nil && strings.Contains(err.Error(), want) {
			t.Errorf("the error shows the token: %v", err)
		}
	}
}

func TestPins(t *testing.T) {
	var p Pins
	r1 := p.Add("a:1", "f1")
	r2 := p.Add("a:1", "f1")
	r1()
	r1() // once only
	if fp, ok := p.Get("a:1"); !ok || fp != "f1" {
		t.Fatalf("released while a stream holds it: %q %v", fp, ok)
	}
	r2()
	if _, ok := p.Get("a:1"); ok {
		t.Fatal("pin outlived its streams")
	}
	old := p.Add("b:1", "old")
	nw := p.Add("b:1", "new")
	old() // the old stream ending does not drop the newer pin
	if fp, _ := p.Get("b:1"); fp != "new" {
		t.Fatalf("got %q", fp)
	}
	nw()
}

// TestReplyDialCreds: the node's reply connection completes only to the
// certificate pinned for the address, and presents the node's certificate.
func TestReplyDialCreds(t *testing.T) {
	endpoint, fp, err := EphemeralCert()
	if err != nil {
		t.Fatal(err)
	}
	nodeCert, nodeFP, err := EphemeralCert()
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{endpoint}, ClientAuth: tls.RequireAnyClientCert, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	seen := make(chan string, 10)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			tc := c.(*tls.Conn)
			if tc.Handshake() == nil {
				seen <- Fingerprint(tc.ConnectionState().PeerCertificates[0].Raw)
			}
			c.Close()
		}
	}()
	addr := l.Addr().String()
	var pins Pins
	creds := &ReplyDialCreds{Pins: &pins, Cert: nodeCert}
	dial := func() error {
		raw, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, _, err := creds.ClientHandshake(ctx, addr, raw)
		if err == nil {
			c.Close()
		}
		return err
	}
	if err := dial(); err == nil || !strings.Contains(err.Error(), "no authenticated client named") {
		t.Fatalf("no pin: %v", err)
	}
	release := pins.Add(addr, strings.Repeat("0", 64))
	if err := dial(); err == nil || !strings.Contains(err.Error(), "did not name") {
		t.Fatalf("wrong pin: %v", err)
	}
	release()
	defer pins.Add(addr, fp)()
	if err := dial(); err != nil {
		t.Fatalf("right pin: %v", err)
	}
	select {
	case got := <-seen:
		if got != nodeFP {
			t.Fatalf("the endpoint saw %s, want the node's certificate %s", got, nodeFP)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the endpoint saw no completed handshake")
	}
}
