package testnode

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/loadnode/loadnode/client"
)

// TB is the part of testing.TB the harness uses.
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
	Failed() bool
}

// Start is Launch for a test: it fails t if the node does not start (with
// its output), kills the node when t ends and, if t failed, logs the end
// of its output. LOADNODE_TEST_LOG=1 copies the output to stderr as well.
func Start(t TB, o Options) *Proc {
	t.Helper()
	if o.Log == nil && os.Getenv("LOADNODE_TEST_LOG") != "" {
		o.Log = os.Stderr
	}
	if o.Binary == "" {
		// Before the readiness deadline starts: the first build takes a while.
		bin, err := BuildBinary()
		if err != nil {
			t.Fatalf("%v", err)
		}
		o.Binary = bin
	}
	o = o.withDefaults()
	ctx, cancel := context.WithTimeout(context.Background(), o.ReadyTimeout)
	defer cancel()
	p, err := Launch(ctx, o)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Logf("%v", err)
		}
		if t.Failed() {
			t.Logf("loadnode output (data %s), last %d lines:\n%s", o.DataDir, p.opts.DumpLines, p.Tail(p.opts.DumpLines))
		}
	})
	return p
}

// MustRestart is Restart for a test: it fails t (with the output) if the
// new process does not start or get ready.
func (p *Proc) MustRestart(t TB, env ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), p.opts.ReadyTimeout)
	defer cancel()
	if err := p.Restart(ctx, env...); err != nil {
		t.Fatalf("restart: %v\n%s", err, p.Tail(p.opts.DumpLines))
	}
}

// MustKill is Kill for a test.
func (p *Proc) MustKill(t TB) {
	t.Helper()
	if err := p.Kill(); err != nil {
		t.Fatalf("%v", err)
	}
}

// Client dials the current process (10 s per request unless opts say
// otherwise), fails t if it cannot, and closes the client when t ends.
func (p *Proc) Client(t TB, opts ...client.Option) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := p.Dial(ctx, opts...)
	if err != nil {
		t.Fatalf("dial %s: %v\n%s", p.Addr(), err, p.Tail(p.opts.DumpLines))
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var _ io.Writer = (*LogRing)(nil)
