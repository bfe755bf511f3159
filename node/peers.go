package node

import (
	"context"
	"net/url"
	"sync"

	"github.com/loadnode/loadnode/internal/remoteauth"
)

// peerAuth is how a cluster member authenticates to the other members
// when it forwards a command to a job's owner (and when the owner's
// answer comes back): the members share one token, and over TLS each
// member's certificate is published in etcd with its membership.
//
// It is the member's per-RPC credentials on its own connections. To a
// live member's address it sends the member's token and names its own
// endpoint and certificate (as the loadnode client does); to any other
// address (a client's endpoint, where replies go) it sends nothing, so
// the token never leaves for a client. The certificates of live members
// are pinned for their addresses, so that the TLS dial (ReplyDialCreds)
// accepts a peer's certificate as it accepts a pinned client's.
type peerAuth struct {
	token string
	fp    string // hex SHA-256 of the node's certificate; "" without TLS
	pins  *remoteauth.Pins

	mu struct {
		sync.Mutex
		self  string
		peers map[string]string // live members' addresses: certificate fingerprint
		pins  map[string]func() // releases of the pins this set holds
	}
}

func newPeerAuth(sec *security) *peerAuth {
	p := &peerAuth{token: sec.token, pins: &sec.pins}
	if sec.cert != nil && len(sec.cert.Certificate) > 0 {
		p.fp = remoteauth.Fingerprint(sec.cert.Certificate[0])
	}
	p.mu.peers, p.mu.pins = map[string]string{}, map[string]func(){}
	return p
}

// needed: without a token or TLS, members need no credentials.
func (p *peerAuth) needed() bool { return p.token != "" || p.fp != "" }

func (p *peerAuth) setSelf(addr string) {
	p.mu.Lock()
	p.mu.self = addr
	p.mu.Unlock()
}

// setPeers replaces the live members (address: certificate fingerprint,
// this member excluded), from the member's watch.
func (p *peerAuth) setPeers(peers map[string]string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for addr, release := range p.mu.pins {
		if fp, ok := peers[addr]; !ok || fp != p.mu.peers[addr] {
			release()
			delete(p.mu.pins, addr)
		}
	}
	for addr, fp := range peers {
		if _, ok := p.mu.pins[addr]; !ok && fp != "" {
			p.mu.pins[addr] = p.pins.Add(addr, fp)
		}
	}
	p.mu.peers = peers
}

func (p *peerAuth) isPeer(addr string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.mu.peers[addr]
	return ok
}

// GetRequestMetadata implements credentials.PerRPCCredentials: uri[0] is
// "https://host:port/service" of the connection's target.
func (p *peerAuth) GetRequestMetadata(_ context.Context, uri ...string) (map[string]string, error) {
	md := map[string]string{}
	if len(uri) == 0 {
		return md, nil
	}
	u, err := url.Parse(uri[0])
	if err != nil || !p.isPeer(u.Host) {
		return md, nil
	}
	if p.token != "" {
		md[remoteauth.TokenKey] = remoteauth.Bearer(p.token)
	}
	p.mu.Lock()
	self := p.mu.self
	p.mu.Unlock()
	if p.fp != "" && self != "" {
		md[remoteauth.ReplyAddrKey] = self
		md[remoteauth.ReplyCertKey] = p.fp
	}
	return md, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials: the
// node refuses a token without TLS except on loopback (config), so the
// connections it is sent on are TLS or local.
func (p *peerAuth) RequireTransportSecurity() bool { return false }
