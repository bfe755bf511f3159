package node

import (
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/loadnode/loadnode/api"
)

// hostNames are the names, beyond IP addresses and localhost, under which
// the admin endpoint answers: the node config's http_allowed_hosts and the
// host of `http` when it is a name. Lower case, without a final dot.
// Read-only once the endpoint starts.
//
// Why: a page of another site can make a browser reach a loopback node by
// DNS rebinding (its name, once resolved to the attacker, resolves to
// 127.0.0.1). The browser then sends that name as Host and as Origin, so
// the console's same-origin check passes and a token-less node opens a
// session. A name the operator did not list is never this endpoint's, and
// an IP address or localhost is one an attacker's page cannot claim.
type hostNames map[string]bool

// newHostNames returns the names of allowed (http_allowed_hosts, validated
// by config) and of the host of httpAddr when it is a name.
func newHostNames(httpAddr string, allowed []string) hostNames {
	h := hostNames{}
	for _, name := range allowed {
		h[canonicalHost(name)] = true
	}
	if host, _, err := net.SplitHostPort(httpAddr); err == nil && host != "" {
		if _, err := netip.ParseAddr(host); err != nil {
			h[canonicalHost(host)] = true
		}
	}
	return h
}

func canonicalHost(name string) string { return strings.ToLower(strings.TrimSuffix(name, ".")) }

// allows reports whether a request's Host (host or host:port) names this
// endpoint: any IP address, localhost, or one of h, on any port.
func (h hostNames) allows(hostport string) bool {
	host := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		host = hh
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if host == "" {
		return false
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	name := canonicalHost(host)
	return name == "localhost" || h[name]
}

// checkHost answers 421 Misdirected Request to a request whose Host is not
// a name of this endpoint, on every path but /healthz (load balancers probe
// it under names of their own; it says only that the process is up).
func (a *admin) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" && !a.hosts.allows(r.Host) {
			a.logger.Warn("admin: refused a request for another host", "peer", r.RemoteAddr, "path", r.URL.Path, "host", api.Clip(r.Host, api.MaxEchoBytes))
			what := "does not answer to Host " + api.Quote(r.Host)
			if r.Host == "" {
				what = "answers only requests that name it in a Host header"
			}
			http.Error(w, "loadnode: this endpoint "+what+
				": it answers IP addresses, localhost and the names listed in the node config's http_allowed_hosts"+
				" (add the name there to reach the endpoint by it)", http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}
