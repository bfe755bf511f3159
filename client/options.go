package client

import (
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
