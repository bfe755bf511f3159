package persistence

import (
	"fmt"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Shared syncs: a write that may wait a moment for its fsync (a job's
// first schedule: RUNNING and its initial positions) is applied without
// one and returns once a synced commit that entered Pebble after it has
// returned; that commit's fsync made it durable too, because Pebble writes
// one WAL in commit order and an fsync makes everything before it durable
// (a WAL that rotates meanwhile is synced when it is closed). When no such
// commit comes within shareSyncWait, the write syncs itself.
//
// So a first schedule no longer takes an fsync of its own while creates
// are arriving: it rides on the next create's group write, and the create
// never waits behind it. What is durable when: on return, exactly what a
// pebble.Sync commit would have made durable. Before return the write is
// readable by the store's readers but acted on by nobody: its caller
// applies the transition and hands out the positions only after the
// return. A crash before the covering fsync loses the whole batch (a
// batch is one WAL record), so a job is found either as created
// (NEED_SCHEDULE, no positions) or with RUNNING and its positions, which
// recovery journals NEED_SCHEDULE (RECOVERED).

// shareSyncWait is how long a shared-sync write waits for another synced
// commit before it syncs itself: longer than a client's create round
// trip, short next to any job's batch interval.
const shareSyncWait = 3 * time.Millisecond

// syncTickets tracks synced commits so that a write applied without an
// fsync can wait for one that covers it.
type syncTickets struct {
	mu      sync.Mutex
	entered uint64        // synced commits that have entered Pebble
	done    uint64        // the largest ticket of a synced commit that returned nil
	changed chan struct{} // closed and replaced when done grows
}

// enter gives a synced commit about to enter Pebble its ticket.
func (t *syncTickets) enter() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.entered++
	return t.entered
}

// finished records that the synced commit with ticket returned nil.
func (t *syncTickets) finished(ticket uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ticket > t.done {
		t.done = ticket
		if t.changed != nil {
			close(t.changed)
			t.changed = nil
		}
	}
}

// after returns the tickets entered so far: a synced commit with a larger
// ticket entered Pebble after this call.
func (t *syncTickets) after() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.entered
}

// covered reports whether a synced commit with a ticket above mark has
// returned nil; if not, it returns a channel closed when one more does.
func (t *syncTickets) covered(mark uint64) (bool, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done > mark {
		return true, nil
	}
	if t.changed == nil {
		t.changed = make(chan struct{})
	}
	return false, t.changed
}

// commitSharedSync commits b without an fsync of its own and returns once
// b is durable: after a later synced commit returned, or after its own
// sync when none came within shareSyncWait. It closes b.
func (s *Store) commitSharedSync(b *pebble.Batch, what string) error {
	defer func() { _ = b.Close() }()
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("persistence: %s: commit: %w", what, err)
	}
	mark := s.syncs.after()
	if h := s.afterSharedApply; h != nil {
		h()
	}
	timer := time.NewTimer(s.shareWait)
	defer timer.Stop()
	for {
		ok, changed := s.syncs.covered(mark)
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-timer.C:
			// Nothing synced meanwhile: sync the WAL, b's record included,
			// unless the store failed meanwhile (no call reaches Pebble
			// after that: persistence/doc.go).
			if err := s.Failed(); err != nil {
				return err
			}
			ticket := s.syncs.enter()
			if err := s.db.LogData(nil, pebble.Sync); err != nil {
				return fmt.Errorf("persistence: %s: sync: %w", what, err)
			}
			s.syncs.finished(ticket)
			return nil
		}
	}
}
