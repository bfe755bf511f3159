package client

import (
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

// replyBox is the address one request's reply comes back to: a process in
// the client's actor system that hands the first message it gets to the
// waiting caller through a channel. It does what protoactor's Future does
// for a request, without the future's goroutine hand-off: the endpoint
// that decodes the reply puts it straight into the caller's select.
type replyBox struct {
	ch   chan any // capacity 1: the one reply
	done atomic.Bool
}

// SendUserMessage takes the reply (the first message; any later one, as
// after a time-out, is dropped).
func (b *replyBox) SendUserMessage(_ *actor.PID, message any) {
	_, msg, _ := actor.UnwrapEnvelope(message)
	b.put(msg)
}

// SendSystemMessage: nothing but the reply is expected; a system message
// (a Stop) ends the wait as a dead letter would.
func (b *replyBox) SendSystemMessage(_ *actor.PID, _ any) {
	b.put(&actor.DeadLetterResponse{})
}

// Stop ends the wait as a dead letter would.
func (b *replyBox) Stop(_ *actor.PID) { b.put(&actor.DeadLetterResponse{}) }

func (b *replyBox) put(msg any) {
	if b.done.CompareAndSwap(false, true) {
		b.ch <- msg
	}
}

// newReplyBox registers a reply box in system; the caller removes it
// (actor.ProcessRegistryValue.Remove) when it stops waiting.
func newReplyBox(system *actor.ActorSystem) (*replyBox, *actor.PID) {
	b := &replyBox{ch: make(chan any, 1)}
	reg := system.ProcessRegistry
	pid, _ := reg.Add(b, "reply"+reg.NextId())
	return b, pid
}
