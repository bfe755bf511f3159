package actors

import "github.com/asynkron/protoactor-go/actor"

// A stop is final.
//
// protoactor's handleRestart (actor/actor_context.go:593) sets the actor's
// state to restarting without looking at whether it is stopping: a Restart
// that reaches an actor after *actor.Stopping, while it waits for its
// children's Terminated (tryRestartOrTerminate, :654), turns the stop into
// a restart. Once its children are gone the actor is incarnated again
// instead of terminating, and its parent never hears Terminated: a parent
// that is itself restarting or stopping waits for it forever, its mailbox
// suspended (the manager, which stops every job actor when it restarts,
// then answers nothing). A Restart that arrives after the stop finished
// (finalizeStop, :682) incarnates an actor nobody knows any more.
//
// Such a Restart comes from the manager's supervisor: supervisor.Strategy
// restarts a failed job actor after a back-off, from a timer, and nothing
// stops it from reaching the actor after the manager (or anyone) stopped
// it; and a stopping actor still handles its user messages, so it can fail
// while it stops (protoactor's own strategies have the same race, a
// Failure handled after the supervisor's Stop went out).
//
// INVARIANT: a job actor that has handled *actor.Stopping never runs the
// job again. An incarnation started after it does nothing: if the stop
// had not finished, it stops at once (its parent then hears Terminated); if
// it had, it stays silent, since stopping again would unregister whichever
// actor holds the name now (ProcessRegistry.Remove goes by name) and tell
// the manager a second time that the job's actor is gone.

// stopLatch is shared by the incarnations of one actor (the props of a job
// actor serve one spawn). REQUIRES: used from the actor's Receive only; its
// mailbox runs one incarnation at a time.
type stopLatch struct {
	// self is the actor's process as registered under its name when it
	// started.
	self actor.Process
	// stopping: an incarnation has handled *actor.Stopping.
	stopping bool
	// revived: this incarnation was started after the stop; it handles
	// nothing.
	revived bool
}

// admit reports whether the actor's current incarnation may handle ctx's
// message, and turns an incarnation started after a stop into a stop.
func (l *stopLatch) admit(ctx actor.Context) bool {
	switch ctx.Message().(type) {
	case *actor.Started:
		reg, _ := ctx.ActorSystem().ProcessRegistry.GetLocal(ctx.Self().Id)
		if !l.stopping {
			l.self = reg
			return true
		}
		if !l.revived && reg == l.self {
			// The stop had not finished: finish it.
			ctx.Stop(ctx.Self())
		}
		l.revived = true
		return false
	case *actor.Stopping:
		l.stopping = true
	}
	return !l.revived
}
