package actors

import (
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

// workers runs the actors' goroutines: every loadnode mailbox's message
// processing (mailboxes) and the work actors hand to goroutines (runTo).
//
// protoactor's default dispatcher starts a new goroutine each time a
// mailbox gets work, and runTo did for each commit, read and request. A new
// goroutine starts on a small stack, and this work (a synced store write,
// parsing, protobuf, slog) is deep: the create profile spent about 8% of
// its CPU growing and copying new stacks. workers runs work on a goroutine
// that has finished earlier work and waits for more (its stack already
// grown); only when none waits does it start one.
var workers = newGoPool(128)

// mailboxes is the dispatcher of every loadnode actor's mailbox: the
// workers, with protoactor's default throughput (300 messages before a
// mailbox yields). A mailbox's messages are still processed by one
// goroutine at a time: the mailbox's own scheduling status decides that.
var mailboxes actor.Dispatcher = poolDispatcher{pool: workers, throughput: 300}

type poolDispatcher struct {
	pool       *goPool
	throughput int
}

func (d poolDispatcher) Schedule(fn func()) { d.pool.Go(fn) }
func (d poolDispatcher) Throughput() int    { return d.throughput }

// goPool runs functions on reused goroutines. At most maxIdle of them wait
// for work; the others end once their work is done. Go never blocks.
type goPool struct {
	maxIdle int32
	idle    atomic.Int32
	work    chan func() // unbuffered: a send succeeds only into a waiting worker
}

func newGoPool(maxIdle int) *goPool {
	return &goPool{maxIdle: int32(maxIdle), work: make(chan func())}
}

// Go runs fn on a waiting worker, else on a new goroutine.
func (p *goPool) Go(fn func()) {
	select {
	case p.work <- fn:
	default:
		go p.worker(fn)
	}
}

// worker runs fn, then waits for more work while fewer than maxIdle
// workers wait. The count never exceeds maxIdle, not even for a moment.
func (p *goPool) worker(fn func()) {
	for {
		fn()
		for {
			n := p.idle.Load()
			if n >= p.maxIdle {
				return
			}
			if p.idle.CompareAndSwap(n, n+1) {
				break
			}
		}
		fn = <-p.work
		p.idle.Add(-1)
	}
}
