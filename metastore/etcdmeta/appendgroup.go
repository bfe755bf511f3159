package etcdmeta

import (
	"errors"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore"
)

// Concurrent AppendTransition calls of different jobs share one etcd
// transaction (appendChunk) through a jobgroup.Group: many jobs that
// start together each journal NEED_SCHEDULE -> RUNNING, and one
// transaction of n entries costs etcd and this process much less than n
// transactions. A group whose transaction a check refuses is written
// again one entry at a time, so that each call gets its own answer.

// appendCall is one AppendTransition waiting for its answer.
type appendCall struct {
	jt   metastore.JobTransition
	done chan error // buffered (1): the writer never blocks on it
}

// appendGrouped journals t with whatever other jobs' appends are queued.
func (s *Store) appendGrouped(id uint64, t *api.Transition) error {
	c := &appendCall{jt: metastore.JobTransition{JobID: id, T: t}, done: make(chan error, 1)}
	s.appends.Add(id, c, appendChunk, s.writeAppendBatch)
	return <-c.done
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
