// Package jobgroup gathers concurrent calls of different jobs into groups
// that one writer runs together: many jobs that start at once each write
// a small record (an etcd journal entry, a PostgreSQL first position), and
// one transaction of n records costs the store and this process much less
// than n transactions.
//
// No timer waits for company: a call that finds no group being written
// runs at once (alone, or with whoever queued meanwhile); calls that
// arrive while a group is written queue and go together in the next. The
// caller whose call leads writes one group, then hands the rest, if any,
// to a new goroutine, so that it returns after one group however busy
// the store is.
package jobgroup

import "sync"

// Group is a queue of calls of type C. The zero value is ready.
type Group[C any] struct {
	mu sync.Mutex
	// busy: a writer is draining pending. REQUIRES: mu.
	busy bool
	// pending are the calls not yet taken by a writer, in arrival order.
	// REQUIRES: mu.
	pending []entry[C]
}

type entry[C any] struct {
	job  uint64
	call C
}

// Add queues call, a call of job, and returns once the group holding it
// has been run, or once it is queued for a writer that is running (the
// caller waits for its answer by its own means, e.g. a channel in C).
// run writes a group: at most max calls, of distinct jobs (a job's later
// call must follow its earlier one), oldest first; it must answer every
// call it is given. Every Add of a Group passes the same max and run.
func (g *Group[C]) Add(job uint64, call C, max int, run func([]C)) {
	g.mu.Lock()
	g.pending = append(g.pending, entry[C]{job, call})
	lead := !g.busy
	g.busy = true
	g.mu.Unlock()
	if lead {
		g.drain(max, run)
	}
}

// Idle reports whether no call is queued and no group is being written.
func (g *Group[C]) Idle() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return !g.busy && len(g.pending) == 0
}

// drain runs one group, then hands what queued meanwhile to a new
// goroutine.
func (g *Group[C]) drain(max int, run func([]C)) {
	g.mu.Lock()
	batch := take(&g.pending, max)
	g.mu.Unlock()
	run(batch)
	g.mu.Lock()
	more := len(g.pending) > 0
	g.busy = more
	g.mu.Unlock()
	if more {
		go g.drain(max, run)
	}
}

// take removes from *pending up to max calls of distinct jobs, oldest
// first; a job's later call stays for a later group.
func take[C any](pending *[]entry[C], max int) []C {
	var batch []C
	var rest []entry[C]
	seen := make(map[uint64]bool, min(len(*pending), max))
	for _, e := range *pending {
		if len(batch) < max && !seen[e.job] {
			seen[e.job] = true
			batch = append(batch, e.call)
		} else {
			rest = append(rest, e)
		}
	}
	*pending = rest
	return batch
}
