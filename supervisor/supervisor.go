// Package supervisor decides what happens to a failed actor: it maps typed
// failures to protoactor directives and restarts with a real exponential
// back-off (with jitter and a cap) inside a restart budget.
//
// protoactor-go's bundled "exponential" strategy grows linearly and never
// gives up; Strategy replaces it. A Strategy is shared by all children of one
// parent and is safe for concurrent use: the only state it keeps is the
// child's RestartStatistics, which protoactor owns, and a mutex-guarded
// random source for jitter.
package supervisor

import (
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/loadnode/loadnode/internal/backoff"
)

// Permanent marks a failure that restarting cannot fix (bad configuration,
// authorization). The decider stops the actor instead of restarting it.
type Permanent struct{ Err error }

func (e *Permanent) Error() string { return "supervisor: permanent failure: " + e.Err.Error() }
func (e *Permanent) Unwrap() error { return e.Err }

// PermanentError is a failure that says whether restarting can fix it:
// Permanent true stops the actor. A source's configuration or authorization
// error (sources.ConfigError) is one. The method is the contract, so the
// package that defines such an error need not import this one.
type PermanentError interface {
	error
	Permanent() bool
}

// Policy is a restart budget and back-off. The supervisor declares no
// defaults of its own: a node passes its config's job_restart_* keys
// (config.NodeKeys, the one place of their defaults) and DefaultJitter.
type Policy struct {
	// MaxRestarts within Window before the child is stopped; >= 1.
	MaxRestarts int
	// Window over which restarts are counted; > 0.
	Window time.Duration
	// InitialBackoff before the first restart; > 0.
	InitialBackoff time.Duration
	// MaxBackoff caps the delay; >= InitialBackoff.
	MaxBackoff time.Duration
	// Jitter is the fraction of the delay drawn at random, 0..1 (0: none).
	Jitter float64
}

// DefaultJitter is the restart jitter of job actors (no config key sets it).
const DefaultJitter = 0.2

// Decide maps a failure reason to a directive: a *Permanent error or a
// PermanentError that says it is permanent (a source's configuration or
// authorization error) stops the actor; everything else (transient errors,
// panics) restarts it.
func Decide(reason any) actor.Directive {
	if err, ok := reason.(error); ok {
		var p *Permanent
		var pe PermanentError
		if errors.As(err, &p) || errors.As(err, &pe) && pe.Permanent() {
			return actor.StopDirective
		}
	}
	return actor.RestartDirective
}

// Strategy is a one-for-one supervisor strategy with exponential back-off.
type Strategy struct {
	policy Policy
	decide actor.DeciderFunc
	mu     struct {
		sync.Mutex
		rnd *rand.Rand
	}
}

var _ actor.SupervisorStrategy = (*Strategy)(nil)

// NewStrategy returns a strategy for p; decide may be nil (Decide is used).
//
// REQUIRES: p is complete (every field in the range Policy documents).
func NewStrategy(p Policy, decide actor.DeciderFunc, seed uint64) *Strategy {
	if decide == nil {
		decide = Decide
	}
	s := &Strategy{policy: p, decide: decide}
	s.mu.rnd = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return s
}

// Backoff returns the delay before restart number n (1-based) without
// jitter: InitialBackoff * 2^(n-1), capped at MaxBackoff.
func (p Policy) Backoff(n int) time.Duration {
	return backoff.Doubling(p.InitialBackoff, n-1, p.MaxBackoff)
}

func (s *Strategy) jittered(d time.Duration) time.Duration {
	s.mu.Lock()
	f := s.mu.rnd.Float64()
	s.mu.Unlock()
	// d * (1 - jitter/2 + jitter*f): centred on d.
	return time.Duration(float64(d) * (1 - s.policy.Jitter/2 + s.policy.Jitter*f))
}

// HandleFailure implements actor.SupervisorStrategy.
func (s *Strategy) HandleFailure(system *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, rs *actor.RestartStatistics, reason any, message any) {
	switch s.decide(reason) {
	case actor.ResumeDirective:
		sup.ResumeChildren(child)
	case actor.StopDirective:
		publish(system, child, reason, actor.StopDirective)
		sup.StopChildren(child)
	case actor.EscalateDirective:
		sup.EscalateFailure(reason, message)
	default:
		if rs.NumberOfFailures(s.policy.Window) == 0 {
			rs.Reset()
		}
		rs.Fail()
		n := rs.NumberOfFailures(s.policy.Window)
		if n > s.policy.MaxRestarts {
			rs.Reset()
			publish(system, child, reason, actor.StopDirective)
			sup.StopChildren(child)
			return
		}
		delay := s.jittered(s.policy.Backoff(n))
		publish(system, child, reason, actor.RestartDirective)
		// The Restart may reach the child after someone (its supervisor
		// restarting, say) stopped it; protoactor then restarts the
		// stopping child instead of letting it terminate. A child that
		// must stay stopped guards itself (actors/stopping.go).
		time.AfterFunc(delay, func() { sup.RestartChildren(child) })
	}
}

func publish(system *actor.ActorSystem, child *actor.PID, reason any, d actor.Directive) {
	system.EventStream.Publish(&actor.SupervisorEvent{Child: child, Reason: reason, Directive: d})
}
