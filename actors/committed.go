package actors

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

// A light read of a job's committed positions (JobCommittedRequest). A job
// actor publishes its committed positions, statistics and state into the
// node's committedBoard after each commit and at each change of state (its
// listing report, listing.go, and notify); the manager answers a read from
// the board, without a store or sink read and without a trip through the
// job actor's mailbox, so that polling it does not slow the job (`job
// show` reads the journal and waits for the sink's error rows). A read
// with wait_ms is a long poll: it waits, off every mailbox, for the next
// publication that moves the job past after_batches.
//
// Concurrency: a cell's snapshot is written by its job actor only and
// read by anyone (an atomic pointer to a message never changed once
// stored); waiters take the cell's changed channel under its mutex.

// committedBoard holds the published committed positions of the jobs with
// a live actor on this node, by job id. Its zero value is ready.
type committedBoard struct {
	cells sync.Map // uint64 -> *committedCell
}

// committedCell is one job's publication.
type committedCell struct {
	snap atomic.Pointer[api.JobCommitted] // nil before the first publication
	// hist is the job's last commits (at most api.MaxCommittedHistory),
	// oldest first; stored before the snapshot that follows them, never
	// changed once stored (a commit makes a new slice).
	hist atomic.Pointer[[]*api.CommitMark]
	mu   struct {
		sync.Mutex
		changed chan struct{} // closed at the next publication; nil while no one waits
	}
}

// cell returns job id's cell, made if missing.
func (b *committedBoard) cell(id uint64) *committedCell {
	if c, ok := b.cells.Load(id); ok {
		return c.(*committedCell)
	}
	c, _ := b.cells.LoadOrStore(id, &committedCell{})
	return c.(*committedCell)
}

// published is job id's newest publication, or nil.
func (b *committedBoard) published(id uint64) (*committedCell, *api.JobCommitted) {
	c, ok := b.cells.Load(id)
	if !ok {
		return nil, nil
	}
	cell := c.(*committedCell)
	return cell, cell.snap.Load()
}

// drop forgets job id (its actor stopped, or the job was deleted); a
// waiter on its cell answers with the last publication at its time-out.
func (b *committedBoard) drop(id uint64) { b.cells.Delete(id) }

// publish stores s (never changed after) and wakes the waiters.
func (c *committedCell) publish(s *api.JobCommitted) {
	c.snap.Store(s)
	c.mu.Lock()
	ch := c.mu.changed
	c.mu.changed = nil
	c.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}

// remember adds m to c's commits (REQUIRES: in the job actor, before the
// publication that follows m). m and its positions are never changed
// after: they are shared with that publication.
func (c *committedCell) remember(m *api.CommitMark) {
	var old []*api.CommitMark
	if h := c.hist.Load(); h != nil {
		old = *h
	}
	if len(old) >= api.MaxCommittedHistory {
		old = old[len(old)-api.MaxCommittedHistory+1:]
	}
	h := append(append(make([]*api.CommitMark, 0, len(old)+1), old...), m)
	c.hist.Store(&h)
}

// answer is the answer to req from publication s of c: a copy of s, with
// the commits after req.after_batches up to s when req asks for history.
func (c *committedCell) answer(s *api.JobCommitted, req *api.JobCommittedRequest) *api.JobCommittedResponse {
	a := proto.Clone(s).(*api.JobCommitted)
	if req.GetHistory() {
		if h := c.hist.Load(); h != nil {
			for _, m := range *h {
				if m.GetCommittedBatches() > req.GetAfterBatches() && m.GetCommittedBatches() <= s.GetCommittedBatches() {
					a.Commits = append(a.Commits, proto.Clone(m).(*api.CommitMark))
				}
			}
		}
	}
	return &api.JobCommittedResponse{Committed: a}
}

// next is a channel closed at the next publication.
func (c *committedCell) next() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.changed == nil {
		c.mu.changed = make(chan struct{})
	}
	return c.mu.changed
}

// publishCommitted publishes the job's committed positions, statistics
// and state if any moved since its last publication (REQUIRES: in the job
// actor). A publication with more committed batches than the last is
// dated now: the group commit it follows has just returned.
func (j *job) publishCommitted() {
	c := j.deps.committed.cell(j.id)
	prev := c.snap.Load()
	if prev != nil && j.samePublished(prev) {
		return
	}
	s := &api.JobCommitted{Id: j.id, Name: j.rec.GetName(), State: j.state, Reason: j.reason,
		LoadedRows: j.stats.GetLoadedRows(), ErrorRows: j.stats.GetErrorRows(), CommittedBatches: j.stats.GetCommittedBatches(),
		Positions: make([]*api.CommittedPosition, 0, len(j.progress))}
	for _, p := range slices.Sorted(maps.Keys(j.progress)) {
		s.Positions = append(s.Positions, &api.CommittedPosition{Partition: p, CommittedOffset: j.progress[p]})
	}
	switch {
	case prev != nil && prev.GetCommittedBatches() == s.CommittedBatches:
		s.LastCommitUnixNs = prev.GetLastCommitUnixNs()
	case prev != nil && prev.GetCommittedBatches() < s.CommittedBatches:
		s.LastCommitUnixNs = j.deps.Now().UnixNano()
		c.remember(&api.CommitMark{CommittedBatches: s.CommittedBatches, CommitUnixNs: s.LastCommitUnixNs, Positions: s.Positions})
	default: // this node's first look at the job: the stored statistics
		s.LastCommitUnixNs = j.stats.GetLastCommitUnixMs() * int64(time.Millisecond)
	}
	c.publish(s)
}

// samePublished reports whether s is what the job would publish now.
func (j *job) samePublished(s *api.JobCommitted) bool {
	if s.GetState() != j.state || s.GetReason() != j.reason || s.GetCommittedBatches() != j.stats.GetCommittedBatches() ||
		s.GetLoadedRows() != j.stats.GetLoadedRows() || s.GetErrorRows() != j.stats.GetErrorRows() || len(s.GetPositions()) != len(j.progress) {
		return false
	}
	for _, p := range s.GetPositions() {
		if o, ok := j.progress[p.GetPartition()]; !ok || o != p.GetCommittedOffset() {
			return false
		}
	}
	return true
}

// checkCommittedRequest checks a request's bounds.
func checkCommittedRequest(req *api.JobCommittedRequest) *api.Error {
	if w := req.GetWaitMs(); w < 0 || w > api.MaxCommittedWaitMs {
		return &api.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: "wait_ms",
			Message: fmt.Sprintf("wait_ms %d must be within 0 and %d", w, api.MaxCommittedWaitMs)}
	}
	return nil
}

// committed answers a JobCommittedRequest (REQUIRES: in the manager): from
// the board when the job's actor has published; else from its live actor
// (which publishes first), or, for a job without an actor here, from its
// sink, read off the mailbox; a job another member owns is asked there.
func (m *manager) committed(ctx actor.Context, req *api.JobCommittedRequest) {
	if err := checkCommittedRequest(req); err != nil {
		ctx.Respond(&api.JobCommittedResponse{Error: err})
		return
	}
	e := m.byName[req.GetName()]
	if e == nil {
		ctx.Respond(&api.JobCommittedResponse{Error: &api.Error{Code: api.ErrorCode_NOT_FOUND, Field: "name",
			Message: fmt.Sprintf("job %s not found", api.Quote(req.GetName()))}})
		return
	}
	id := e.rec.GetId()
	if m.clustered() && e.pid == nil {
		if _, mine := m.owned[id]; !mine && !e.summary.GetState().Final() {
			m.forward(ctx, e, req)
			return
		}
	}
	if c, s := m.deps.committed.published(id); s != nil {
		answerCommitted(m.life, ctx.Sender(), c, req)
		return
	}
	if e.pid != nil && !e.summary.GetState().Final() {
		ctx.RequestWithCustomSender(e.pid, req, ctx.Sender())
		return
	}
	m.committedStored(ctx, e)
}

// onCommittedRequest answers a JobCommittedRequest the manager routed to
// the job actor (it had published nothing yet): it publishes and answers
// as the manager would (REQUIRES: in the job actor).
func (j *job) onCommittedRequest(ctx actor.Context, req *api.JobCommittedRequest) {
	j.publishCommitted()
	answerCommitted(j.life, ctx.Sender(), j.deps.committed.cell(j.id), req)
}

// answerCommitted answers req to `to` from c (published): at once, or, for
// a long poll, once a publication moves the job past req.after_batches or
// changes its state, or at req.wait_ms, on a goroutine of l.
func answerCommitted(l *lifetime, to *actor.PID, c *committedCell, req *api.JobCommittedRequest) {
	if to == nil {
		return
	}
	first := c.snap.Load()
	moved := func(s *api.JobCommitted) bool {
		return s.GetCommittedBatches() > req.GetAfterBatches() || s.GetState() != first.GetState()
	}
	if req.GetWaitMs() <= 0 || moved(first) {
		l.system.Root.Send(to, c.answer(first, req))
		return
	}
	go func() {
		t := time.NewTimer(time.Duration(req.GetWaitMs()) * time.Millisecond)
		defer t.Stop()
		var s *api.JobCommitted
	wait:
		for {
			ch := c.next() // before the load: a publication in between closes it
			if s = c.snap.Load(); moved(s) {
				break
			}
			select {
			case <-ch:
			case <-t.C:
				break wait
			case <-l.ctx.Done():
				return
			}
		}
		l.system.Root.Send(to, c.answer(s, req))
	}()
}

// committedStored answers a JobCommittedRequest for a job without a live
// actor here from its sink, read off the mailbox (as showStored).
func (m *manager) committedStored(ctx actor.Context, e *entry) {
	to := ctx.Sender()
	if to == nil {
		return
	}
	s := &api.JobCommitted{Id: e.rec.GetId(), Name: e.rec.GetName(), State: e.summary.GetState(), Reason: e.summary.GetReason(), Stored: true}
	sk, err := m.deps.Sinks(e.rec.GetSpec().GetTable())
	if err != nil {
		ctx.Respond(&api.JobCommittedResponse{Error: &api.Error{Code: api.ErrorCode_UNAVAILABLE, Message: api.Clip(err.Error(), api.MaxMessageBytes)}})
		return
	}
	if !e.look.serves(lookKey{}, false, true) {
		e.look = startLook(sk, e.rec.GetId(), lookKey{}, false, true)
	}
	lk, l := e.look, m.life
	go func() {
		t := time.NewTimer(showSinkWait)
		defer t.Stop()
		answered := lk.wait(l.ctx, t.C)
		if why := lk.unavailable(answered, lk.progErr); why != "" {
			l.system.Root.Send(to, &api.JobCommittedResponse{Error: &api.Error{Code: api.ErrorCode_UNAVAILABLE, Message: why}})
			return
		}
		st := lk.prog.Stats
		s.LoadedRows, s.ErrorRows, s.CommittedBatches = st.GetLoadedRows(), st.GetErrorRows(), st.GetCommittedBatches()
		s.LastCommitUnixNs = st.GetLastCommitUnixMs() * int64(time.Millisecond)
		for _, p := range slices.Sorted(maps.Keys(lk.prog.Positions)) {
			s.Positions = append(s.Positions, &api.CommittedPosition{Partition: p, CommittedOffset: lk.prog.Positions[p]})
		}
		l.system.Root.Send(to, &api.JobCommittedResponse{Committed: s})
	}()
}
