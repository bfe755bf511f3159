package kafka

import (
	"context"
	"sync"
)

// offsetLists coalesces the offset listings of one topic: many jobs
// starting together (a burst of creates, a restart) each resolve their
// start offsets, and each used to send its own ListOffsets. A caller that
// finds a listing of the same topic and kind in flight joins the next
// one, which is sent when the one in flight ends; so every caller's answer
// comes from a request sent after it asked (an OFFSET_END start is never
// older than the create), and one request serves every caller that joined
// while the previous one was out. Safe for concurrent use.
type offsetLists struct {
	mu struct {
		sync.Mutex
		// calls holds, per key, the listing in flight and the one callers
		// join meanwhile.
		calls map[listKey]*listCalls
	}
	// onJoin, if set (tests only), runs when a caller is to be served by
	// a listing that is not sent yet (under mu).
	onJoin func()
}

// listKey names a listing: its topic and what it lists ("start", "end",
// "stable", "time <ms>").
type listKey struct{ topic, what string }

type listCalls struct {
	inflight *listCall // nil when none is out
	next     *listCall // joined while inflight is out; nil if nobody did
}

// listCall is one listing and its answer, shared by every caller that
// joined it. out is shared: callers must not modify it.
type listCall struct {
	done chan struct{} // closed when out, err and ctxDone are set
	out  map[int32]int64
	err  error
	// ctxDone: the context the listing ran under (its sender's) ended, so
	// err may be that context's error rather than the broker's answer.
	ctxDone bool
}

// do returns the answer of a listing of key sent after this call began:
// its own, or a shared one. look sends the listing under the given
// context. A caller whose shared listing failed because its sender's
// context ended retries while its own context lives.
func (l *offsetLists) do(ctx context.Context, key listKey, look func(context.Context) (map[int32]int64, error)) (map[int32]int64, error) {
	for {
		call, send, prev := l.join(key)
		if send {
			if prev != nil {
				// Wait for the listing in flight: ours is sent after it.
				<-prev.done
			}
			l.run(ctx, key, call, look)
		} else {
			select {
			case <-call.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if call.ctxDone && call.err != nil && ctx.Err() == nil {
			continue
		}
		return call.out, call.err
	}
}

// join returns the call the caller waits for and whether it sends it; a
// sender of a next call gets the call in flight to wait for first.
func (l *offsetLists) join(key listKey) (call *listCall, send bool, prev *listCall) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.calls == nil {
		l.mu.calls = map[listKey]*listCalls{}
	}
	cs := l.mu.calls[key]
	if cs == nil {
		cs = &listCalls{}
		l.mu.calls[key] = cs
	}
	if cs.inflight == nil {
		cs.inflight = &listCall{done: make(chan struct{})}
		return cs.inflight, true, nil
	}
	if l.onJoin != nil {
		l.onJoin()
	}
	if cs.next == nil {
		cs.next = &listCall{done: make(chan struct{})}
		return cs.next, true, cs.inflight
	}
	return cs.next, false, nil
}

// run sends call's listing and publishes its answer; the call joined
// meanwhile, if any, becomes the one in flight (its sender, woken by
// call.done, sends it), so later callers join a new one.
func (l *offsetLists) run(ctx context.Context, key listKey, call *listCall, look func(context.Context) (map[int32]int64, error)) {
	out, err := look(ctx)

	l.mu.Lock()
	call.out, call.err, call.ctxDone = out, err, ctx.Err() != nil
	cs := l.mu.calls[key]
	cs.inflight, cs.next = cs.next, nil
	if cs.inflight == nil {
		delete(l.mu.calls, key)
	}
	l.mu.Unlock()
	close(call.done)
}
