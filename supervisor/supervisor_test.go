package supervisor

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/loadnode/loadnode/sources"
)

func TestBackoffDoublesAndCaps(t *testing.T) {
	p := Policy{InitialBackoff: 100 * time.Millisecond, MaxBackoff: time.Second}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second}
	for i, w := range want {
		if got := p.Backoff(i + 1); got != w {
			t.Errorf("Backoff(%d) = %s, want %s", i+1, got, w)
		}
	}
}

func TestJitterStaysWithinBounds(t *testing.T) {
	s := NewStrategy(Policy{MaxRestarts: 1, Window: time.Second, InitialBackoff: time.Second, MaxBackoff: time.Second, Jitter: 0.5}, nil, 42)
	for range 1000 {
		d := s.jittered(time.Second)
		if d < 750*time.Millisecond || d > 1250*time.Millisecond {
			t.Fatalf("jittered(1s) = %s, outside [0.75s, 1.25s]", d)
		}
	}
}

func TestDecide(t *testing.T) {
	cases := []struct {
		reason any
		want   actor.Directive
	}{
		{&Permanent{Err: errors.New("bad password")}, actor.StopDirective},
		{errors.Join(errors.New("ctx"), &Permanent{Err: errors.New("x")}), actor.StopDirective},
		{errors.New("broker down"), actor.RestartDirective},
		{fmt.Errorf("task: %w", &sources.ConfigError{Err: errors.New("SASL authentication failed")}), actor.StopDirective},
		{&sources.UnreachableError{Err: errors.New("dial")}, actor.RestartDirective},
		{fmt.Errorf("task: %w", permanence{true}), actor.StopDirective},
		{permanence{false}, actor.RestartDirective},
		{"a panic value", actor.RestartDirective},
	}
	for _, c := range cases {
		if got := Decide(c.reason); got != c.want {
			t.Errorf("Decide(%v) = %v, want %v", c.reason, got, c.want)
		}
	}
}

// permanence is a PermanentError of another package, as sources.ConfigError is.
type permanence struct{ permanent bool }

func (p permanence) Error() string   { return fmt.Sprintf("permanent: %v", p.permanent) }
func (p permanence) Permanent() bool { return p.permanent }

// A source's configuration error stops its actor: sources knows nothing of
// the supervisor, only the method.
var _ PermanentError = (*sources.ConfigError)(nil)

type crasher struct{ started chan<- struct{} }

func (c *crasher) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		c.started <- struct{}{}
	case error:
		panic(msg)
	}
}

type parent struct {
	props *actor.Props
	child chan<- *actor.PID
	gone  chan<- struct{}
}

func (p *parent) Receive(ctx actor.Context) {
	switch ctx.Message().(type) {
	case *actor.Started:
		p.child <- ctx.Spawn(p.props)
	case *actor.Terminated:
		p.gone <- struct{}{}
	}
}

// TestRestartBudget: a child that keeps failing is restarted with back-off
// until the budget is spent, then stopped (its parent sees Terminated); a
// permanent failure stops it at once.
func TestRestartBudget(t *testing.T) {
	system := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return slog.New(slog.DiscardHandler) }))
	defer system.Shutdown()
	for _, tc := range []struct {
		name     string
		reason   error
		restarts int
	}{
		{"transient", errors.New("transient"), 3},
		{"permanent", &Permanent{Err: errors.New("auth")}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started := make(chan struct{}, 100)
			childCh := make(chan *actor.PID, 1)
			gone := make(chan struct{}, 1)
			strategy := NewStrategy(Policy{MaxRestarts: 3, Window: time.Minute, InitialBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond}, nil, 1)
			childProps := actor.PropsFromProducer(func() actor.Actor { return &crasher{started: started} })
			props := actor.PropsFromProducer(func() actor.Actor { return &parent{props: childProps, child: childCh, gone: gone} }, actor.WithSupervisor(strategy))
			system.Root.Spawn(props)
			child := <-childCh
			<-started
			restarts := 0
			for {
				system.Root.Send(child, tc.reason)
				select {
				case <-started:
					restarts++
					continue
				case <-gone:
				case <-time.After(5 * time.Second):
					t.Fatalf("child neither restarted nor stopped after %d restarts", restarts)
				}
				break
			}
			if restarts != tc.restarts {
				t.Fatalf("restarts = %d, want %d", restarts, tc.restarts)
			}
		})
	}
}
