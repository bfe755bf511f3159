package etcdmeta

import (
	"errors"
	"sync"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore"
)

// appendGroup gathers concurrent AppendTransition calls of different jobs
// into one etcd transaction (appendChunk): many jobs that start together
// each journal NEED_SCHEDULE -> RUNNING, and one transaction of n entries
// costs etcd and this process much less than n transactions.
//
// No timer waits for company: a call that finds no transaction in flight
// writes at once (alone, or with whoever queued meanwhile); calls that
// arrive while one is in flight queue and go together in the next. A
// group whose transaction a check refuses is written again one entry at
// a time, so that each call gets its own answer.
type appendGroup struct {
	mu sync.Mutex
	// busy: a writer is draining pending. REQUIRES: mu.
	busy bool
	// pending are the calls not yet taken by a writer, in arrival order.
	// REQUIRES: mu.
	pending []*appendCall
}

// appendCall is one AppendTransition waiting for its answer.
type appendCall struct {
	jt   metastore.JobTransition
	done chan error // buffered (1): the writer never blocks on it
}

// appendGrouped journals t with whatever other jobs' appends are queued.
func (s *Store) appendGrouped(id uint64, t *api.Transition) error {
	c := &appendCall{jt: metastore.JobTransition{JobID: id, T: t}, done: make(chan error, 1)}
	g := &s.appends
	g.mu.Lock()
	g.pending = append(g.pending, c)
	lead := !g.busy
	g.busy = true
	g.mu.Unlock()
	if lead {
		s.writeAppends()
	}
	return <-c.done
}

// writeAppends writes one group of pending calls, then hands the rest, if
// any, to a new goroutine, so that its own caller (whose call is in the
// group) returns after one transaction however busy the store is.
func (s *Store) writeAppends() {
	g := &s.appends
	g.mu.Lock()
	batch := takeAppends(&g.pending, appendChunk)
	g.mu.Unlock()
	s.writeAppendBatch(batch)
	g.mu.Lock()
	more := len(g.pending) > 0
	g.busy = more
	g.mu.Unlock()
	if more {
		go s.writeAppends()
	}
}

// takeAppends removes from *pending up to max calls of distinct jobs,
// oldest first; a job's later call stays for a later group (its entry
// must follow the earlier one's).
func takeAppends(pending *[]*appendCall, max int) []*appendCall {
	var batch, rest []*appendCall
	seen := make(map[uint64]bool, min(len(*pending), max))
	for _, c := range *pending {
		if len(batch) < max && !seen[c.jt.JobID] {
			seen[c.jt.JobID] = true
			batch = append(batch, c)
		} else {
			rest = append(rest, c)
		}
	}
	*pending = rest
	return batch
}

// writeAppendBatch writes the calls' entries in one transaction and
// answers each call.
func (s *Store) writeAppendBatch(batch []*appendCall) {
	if len(batch) == 1 {
		batch[0].done <- s.appendChunk([]metastore.JobTransition{batch[0].jt}, nil)
		return
	}
	ts := make([]metastore.JobTransition, len(batch))
	for i, c := range batch {
		ts[i] = c.jt
	}
	err := s.appendChunk(ts, nil)
	if err == nil || errors.Is(err, ErrUnavailable) {
		// Written, or not known to be: each call's own transaction would
		// have been as ambiguous.
		for _, c := range batch {
			c.done <- err
		}
		return
	}
	// A check refused the group (one job's entry does not follow its
	// head): nothing was written; each entry alone says which.
	for _, c := range batch {
		c.done <- s.appendChunk([]metastore.JobTransition{c.jt}, nil)
	}
}
