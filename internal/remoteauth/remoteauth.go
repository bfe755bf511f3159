// Package remoteauth is the authentication shared by a loadnode node and its
// clients over protoactor-go remote (gRPC): a bearer token checked by the
// node's interceptors, and TLS in both directions.
//
// protoactor remote is symmetric: a client has an endpoint of its own, and
// the node answers a request by dialing back to the address in the request's
// sender PID. So there are two connections per client:
//
//   - client → node: TLS, verified by the client (its CA, or pinned by a test);
//     every RPC carries "authorization: Bearer TOKEN", checked by the node
//     before any message is read. The metadata also names the client's
//     endpoint (ReplyAddrKey) and the SHA-256 of its certificate
//     (ReplyCertKey).
//   - node → client (replies): TLS to the client's endpoint, which serves an
//     ephemeral self-signed certificate. The node accepts only the
//     certificate that an authenticated client pinned for that address
//     (ReplyDialCreds), and it presents its own server certificate as a
//     client certificate, which the client's endpoint requires to be the one
//     it saw when it dialed the node (so replies cannot be forged either).
//
// The node never sends the token: it cannot leak through a reply connection.
// Without TLS (allowed on loopback only) the token travels in plaintext over
// the loopback interface and replies are not authenticated.
package remoteauth

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Metadata keys (gRPC metadata keys are lower case).
const (
	// TokenKey carries "Bearer TOKEN".
	TokenKey = "authorization"
	// ReplyAddrKey is the client endpoint's host:port (its actor system
	// address, the address in its PIDs).
	ReplyAddrKey = "loadnode-reply-addr"
	// ReplyCertKey is the hex SHA-256 of the client endpoint's certificate.
	ReplyCertKey = "loadnode-reply-cert"
)

// CheckMethod is a gRPC method only a loadnode node answers (through
// grpc.UnknownServiceHandler, behind the same interceptors as the remote
// stream): a client calls it before anything else to learn whether its token
// is accepted, with the node's exact status. A protoactor endpoint that is
// not a loadnode node answers Unimplemented.
const CheckMethod = "/loadnode.Auth/Check"

// Bearer is the TokenKey value for token.
func Bearer(token string) string { return "Bearer " + token }

// CheckToken checks the token in ctx's incoming metadata against want with a
// constant-time compare. It returns a codes.Unauthenticated status naming
// what is wrong (no token, or a wrong one), never the token.
func CheckToken(ctx context.Context, want string) error {
	md, _ := metadata.FromIncomingContext(ctx)
	got := ""
	if v := md.Get(TokenKey); len(v) > 0 {
		got = v[0]
	}
	return checkBearer(got, want)
}

// CheckHeader is CheckToken for an HTTP Authorization header value.
func CheckHeader(header, want string) error { return checkBearer(header, want) }

func checkBearer(got, want string) error {
	if got == "" {
		return status.Error(codes.Unauthenticated, "authentication failed: no token")
	}
	scheme, tok, ok := strings.Cut(got, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return status.Error(codes.Unauthenticated, "authentication failed: the authorization is not a bearer token")
	}
	// Compare digests: ConstantTimeCompare returns early on a length
	// mismatch, which would tell the token's length.
	g, w := sha256.Sum256([]byte(strings.TrimSpace(tok))), sha256.Sum256([]byte(want))
	if subtle.ConstantTimeCompare(g[:], w[:]) != 1 {
		return status.Error(codes.Unauthenticated, "authentication failed: wrong token")
	}
	return nil
}

// Fingerprint is the hex SHA-256 of a DER certificate.
func Fingerprint(der []byte) string {
	s := sha256.Sum256(der)
	return hex.EncodeToString(s[:])
}

// EphemeralCert returns a fresh self-signed ECDSA P-256 certificate for a
// client endpoint and its fingerprint. Nobody verifies its name or chain:
// the node pins it by fingerprint.
func EphemeralCert() (tls.Certificate, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, "", err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "loadnode client endpoint"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, "", err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, Fingerprint(der), nil
}

// TokenCreds is the client's per-RPC credentials: the token and, once the
// client's endpoint runs, its reply address and certificate fingerprint.
type TokenCreds struct {
	// Token is sent as a bearer token; "" sends none.
	Token string
	// Secure is whether the transport is TLS. gRPC refuses to send the
	// credentials over an insecure connection when it is true.
	Secure bool

	mu        sync.Mutex
	replyAddr string
	replyCert string
}

// SetReply names the client's endpoint and its certificate's fingerprint.
func (c *TokenCreds) SetReply(addr, fingerprint string) {
	c.mu.Lock()
	c.replyAddr, c.replyCert = addr, fingerprint
	c.mu.Unlock()
}

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (c *TokenCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	md := map[string]string{}
	if c.Token != "" {
		md[TokenKey] = Bearer(c.Token)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.replyAddr != "" {
		md[ReplyAddrKey] = c.replyAddr
	}
	if c.replyCert != "" {
		md[ReplyCertKey] = c.replyCert
	}
	return md, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials.
func (c *TokenCreds) RequireTransportSecurity() bool { return c.Secure }

// Pins maps a client endpoint's address to the fingerprint its
// authenticated client named, while that client's stream is open.
type Pins struct {
	mu sync.Mutex
	m  map[string]*pin
}

type pin struct {
	fp   string
	refs int
}

// Add pins fp for addr until the returned release is called. A newer pin for
// the same address replaces an older one.
func (p *Pins) Add(addr, fp string) (release func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]*pin{}
	}
	e := p.m[addr]
	if e == nil || e.fp != fp {
		e = &pin{fp: fp}
		p.m[addr] = e
	}
	e.refs++
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			e.refs--
			if e.refs == 0 && p.m[addr] == e {
				delete(p.m, addr)
			}
		})
	}
}

// Get returns the fingerprint pinned for addr.
func (p *Pins) Get(addr string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.m[addr]
	if !ok {
		return "", false
	}
	return e.fp, true
}

// ReplyDialCreds are the node's transport credentials for its connections
// to client endpoints: TLS 1.3, presenting Cert (the node's own certificate)
// and accepting only the certificate pinned for the address dialed.
type ReplyDialCreds struct {
	Pins *Pins
	Cert tls.Certificate
}

var _ credentials.TransportCredentials = (*ReplyDialCreds)(nil)

// ClientHandshake implements credentials.TransportCredentials. authority is
// the dialed host:port, which is the client's endpoint address.
func (c *ReplyDialCreds) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	want, ok := c.Pins.Get(authority)
	if !ok {
		return nil, nil, fmt.Errorf("loadnode: no authenticated client named the certificate of %s; not sending replies there", authority)
	}
	cfg := &tls.Config{
		MinVersion:         tls.VersionTLS13,
		Certificates:       []tls.Certificate{c.Cert},
		InsecureSkipVerify: true, // verified below, by the pinned fingerprint
		VerifyPeerCertificate: func(rawCerts [][]byte, _ [][]*x509.Certificate) error {
			if len(rawCerts) == 0 || Fingerprint(rawCerts[0]) != want {
				return fmt.Errorf("loadnode: %s presented a certificate its client did not name", authority)
			}
			return nil
		},
	}
	return credentials.NewTLS(cfg).ClientHandshake(ctx, authority, raw)
}

// ServerHandshake implements credentials.TransportCredentials; the node
// never serves with these credentials.
func (c *ReplyDialCreds) ServerHandshake(net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("loadnode: reply credentials are for dialing only")
}

// Info implements credentials.TransportCredentials.
func (c *ReplyDialCreds) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "tls"}
}

// Clone implements credentials.TransportCredentials.
func (c *ReplyDialCreds) Clone() credentials.TransportCredentials {
	cp := *c
	return &cp
}

// OverrideServerName implements credentials.TransportCredentials (unused by
// gRPC).
func (c *ReplyDialCreds) OverrideServerName(string) error { return nil }

// PeerSet is the set of node certificates a client has verified on its own
// connections to the node; the client's endpoint accepts reply connections
// only from a peer presenting one of them.
type PeerSet struct {
	mu    sync.Mutex
	certs [][]byte
}

// Add records a verified node certificate (DER).
func (s *PeerSet) Add(der []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.certs {
		if bytes.Equal(c, der) {
			return
		}
	}
	s.certs = append(s.certs, bytes.Clone(der))
}

// Has reports whether der was recorded.
func (s *PeerSet) Has(der []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.certs {
		if bytes.Equal(c, der) {
			return true
		}
	}
	return false
}

// Len is the number of recorded certificates.
func (s *PeerSet) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.certs)
}

// Loopback reports whether host (no port) names only this machine.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
