package client

import (
	"crypto/tls"
	"log/slog"
	"time"
)

// DefaultTimeout bounds each request when WithTimeout is not given.
const DefaultTimeout = 10 * time.Second

// Option configures a Client (see Dial).
type Option func(*options)

type options struct {
	// timeout bounds each request; > 0. Default DefaultTimeout.
	timeout time.Duration
	// logger receives the client's logs and protoactor's warnings. Default:
	// discarded.
	logger *slog.Logger
	// token is presented to the node on every call; "" presents none.
	token string
	// tls, when not nil, is the TLS configuration of the connection to the
	// node (and makes the client's own endpoint serve TLS).
	tls *tls.Config
}

func defaultOptions() options {
	return options{timeout: DefaultTimeout, logger: slog.New(slog.DiscardHandler)}
}

func buildOptions(opts []Option) options {
	o := defaultOptions()
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

func (o options) validate() error {
	if o.timeout <= 0 {
		return errorf("timeout %s must be > 0", o.timeout)
	}
	if o.logger == nil {
		return errorf("logger must not be nil")
	}
	for i := 0; i < len(o.token); i++ {
		if c := o.token[i]; c <= ' ' || c > '~' {
			return errorf("token has a character at byte %d that is not printable ASCII (or is a space)", i)
		}
	}
	return nil
}

// WithTimeout bounds each request (default 10s). A context deadline that
// comes sooner wins.
func WithTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout = d }
}

// WithLogger sends the client's logs to l. protoactor's own logs are passed
// on at WARN and above only.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithToken presents token to the node ("authorization: Bearer TOKEN" on
// every gRPC call). Dial refuses to send it in plaintext to a node that is
// not on this machine: give WithTLS too.
func WithToken(token string) Option {
	return func(o *options) { o.token = token }
}

// WithTLS talks TLS to the node, verifying its certificate with cfg (a nil
// RootCAs is the system's roots; ServerName defaults to the host dialed).
// The client's own endpoint, where the node's replies arrive, then serves
// TLS too, with a throwaway certificate the client names to the node over
// the verified connection, and it accepts only the node's certificate. cfg
// is cloned; a nil cfg is an empty one.
func WithTLS(cfg *tls.Config) Option {
	return func(o *options) {
		if cfg == nil {
			cfg = &tls.Config{}
		}
		o.tls = cfg.Clone()
	}
}
