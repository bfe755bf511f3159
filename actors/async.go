package actors

import (
	"context"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// Work an actor starts outside its mailbox.
//
// Every goroutine an actor starts (a look-up, a read, a commit) and every
// timer it sets belongs to one lifetime: the actor incarnation that
// started it. The lifetime's context is cancelled when the incarnation
// stops or restarts; a result, a failure (a panic, reported with its stack
// as a *PanicError) or a timer's message reaches the actor only as a
// message, wrapped with the lifetime's id, and an incarnation drops what
// an earlier one started. So a restarted actor, whose state the producer
// rebuilt, is never handed a look-up its predecessor asked for.

// lifetimeIDs numbers lifetimes node-wide.
var lifetimeIDs atomic.Uint64

// lifetime is one actor incarnation's outside work.
type lifetime struct {
	id     uint64
	ctx    context.Context
	cancel context.CancelFunc
	self   *actor.PID
	system *actor.ActorSystem
}

// fromLifetime wraps a message of lifetime life.
type fromLifetime struct {
	life uint64
	msg  any
}

// newLifetime starts the lifetime of the actor ctx belongs to. Call it in
// *actor.Started.
func newLifetime(ctx actor.Context) *lifetime {
	c, cancel := context.WithCancel(context.Background())
	return &lifetime{id: lifetimeIDs.Add(1), ctx: c, cancel: cancel, self: ctx.Self(), system: ctx.ActorSystem()}
}

// end cancels the lifetime's context; nothing it started is delivered
// after. Safe on a nil lifetime and more than once.
func (l *lifetime) end() {
	if l != nil {
		l.cancel()
	}
}

// open reports a message for the actor to handle: msg itself, or the
// message a fromLifetime carries if it is of lifetime l (still running).
func (l *lifetime) open(msg any) (any, bool) {
	w, ok := msg.(*fromLifetime)
	if !ok {
		return msg, true
	}
	if l == nil || w.life != l.id || l.ctx.Err() != nil {
		return nil, false
	}
	return w.msg, true
}

// send delivers msg to the actor as a message of this lifetime; it may be
// called from any goroutine (a callback of a source watch, a timer).
func (l *lifetime) send(msg any) {
	if l.ctx.Err() == nil {
		l.system.Root.Send(l.self, &fromLifetime{life: l.id, msg: msg})
	}
}

// after delivers msg to the actor after d, unless the lifetime ended.
func (l *lifetime) after(d time.Duration, msg any) *time.Timer {
	return time.AfterFunc(d, func() { l.send(msg) })
}

// run calls fn on a goroutine with the lifetime's context and delivers its
// result to the actor; a panic in fn is delivered as fail(*PanicError). It
// returns a channel closed once fn has returned (the actor may wait on it
// when it must not stop under the work, as for a commit).
func run[T any](l *lifetime, where string, fn func(ctx context.Context) T, fail func(err error) T) <-chan struct{} {
	return runTo(l, nil, where, fn, fail)
}

// runTo is run delivering the result to `to` (a requester waiting for its
// answer) instead of the actor; nil means the actor.
func runTo[T any](l *lifetime, to *actor.PID, where string, fn func(ctx context.Context) T, fail func(err error) T) <-chan struct{} {
	done := make(chan struct{})
	workers.Go(func() {
		defer close(done)
		var res T
		func() {
			defer func() {
				if r := recover(); r != nil {
					res = fail(&PanicError{Where: where, Value: r, Stack: debug.Stack()})
				}
			}()
			res = fn(l.ctx)
		}()
		if to != nil {
			l.system.Root.Send(to, res)
			return
		}
		l.send(res)
	})
	return done
}

// unwrapped is ctx seen with another message (an opened fromLifetime, a
// deferred message) and its original sender.
type unwrapped struct {
	actor.Context
	msg    any
	sender *actor.PID
}

func (r unwrapped) Message() any       { return r.msg }
func (r unwrapped) Sender() *actor.PID { return r.sender }
func (r unwrapped) Respond(response any) {
	if r.sender != nil {
		r.Context.Send(r.sender, response)
	}
}

// opened returns ctx as the actor should see it: with the message of a
// fromLifetime of l, or nil if the message belongs to another lifetime.
func opened(l *lifetime, ctx actor.Context) actor.Context {
	msg, ok := l.open(ctx.Message())
	if !ok {
		return nil
	}
	if _, wrapped := ctx.Message().(*fromLifetime); wrapped {
		return unwrapped{Context: ctx, msg: msg}
	}
	return ctx
}
