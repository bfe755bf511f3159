package actors

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore"
)

// heldHistory blocks every journal read while hold is set, until release
// is closed; entered hears each read that blocked.
type heldHistory struct {
	metastore.Store
	hold    atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (m *heldHistory) History(id uint64, n int) ([]*api.Transition, error) {
	if m.hold.Load() {
		m.entered <- struct{}{}
		<-m.release
	}
	return m.Store.History(id, n)
}

// askCommitted asks the manager for job name's committed positions; the
// answer must not be an error.
func askCommitted(t *testing.T, h *harness, req *api.JobCommittedRequest) *api.JobCommitted {
	t.Helper()
	resp := h.ask(h.mgr, req).(*api.JobCommittedResponse)
	if resp.GetError() != nil || resp.GetCommitted() == nil {
		t.Fatalf("committed %s = %v, want the positions", req.GetName(), resp.GetError())
	}
	return resp.GetCommitted()
}

// TestCommittedLightRead: the light read of a job's committed positions
// reflects each commit (a long poll answers once the job is past the
// batches it saw), and is answered while the job's actor is blocked
// reading the journal for a show: it needs neither the store nor the job
// actor's mailbox. A stopped job's positions are read from its sink.
func TestCommittedLightRead(t *testing.T) {
	src := &countSource{quietSource: quietSource{parts: []int32{0}}, n: 30, reads: make(chan int64, 1024)}
	meta := &heldHistory{entered: make(chan struct{}, 1), release: make(chan struct{})}
	open := func(*api.JobSpec) (Source, error) { return adapt(src), nil }
	h := newHarnessOpts(t, vfs.NewMem(), open, Settings{}, harnessOpts{meta: func(st metastore.Store) metastore.Store {
		meta.Store = st
		return meta
	}})
	spec := testSpec("light")
	spec.MaxBatchRows, spec.MaxBatchIntervalMs = 10, 100
	start := time.Now()
	if resp := h.ask(h.mgr, &api.CreateJobRequest{Spec: spec}).(*api.JobResponse); resp.Error != nil {
		t.Fatal(resp.Error)
	}

	// Long polls, each from the batches the last one saw, until all 30
	// records are committed: every answer is a publication after a commit
	// (or the last one again at the poll's end), never a step back.
	var c *api.JobCommitted
	seen := int64(-1)
	poll(t, 10*time.Second, func() (bool, string) {
		c = askCommitted(t, h, &api.JobCommittedRequest{Name: "light", AfterBatches: seen, WaitMs: 1000})
		if c.GetCommittedBatches() < seen {
			t.Fatalf("committed batches went from %d to %d", seen, c.GetCommittedBatches())
		}
		seen = c.GetCommittedBatches()
		return c.GetLoadedRows() == 30, fmt.Sprintf("%d rows committed in %d batches", c.GetLoadedRows(), c.GetCommittedBatches())
	})
	if c.GetCommittedBatches() != 3 || c.GetStored() || c.GetState() != api.JobState_RUNNING || c.GetName() != "light" {
		t.Errorf("committed = %v, want 3 batches of a RUNNING job, live", c)
	}
	if ps := c.GetPositions(); len(ps) != 1 || ps[0].GetPartition() != 0 || ps[0].GetCommittedOffset() != 30 {
		t.Errorf("positions = %v, want partition 0 at 30", ps)
	}
	if at := time.Unix(0, c.GetLastCommitUnixNs()); at.Before(start) || at.After(time.Now()) {
		t.Errorf("last commit at %v, want between the create (%v) and now", at, start)
	}

	// A show blocks the job actor in its journal read; the light read
	// answers meanwhile, a long poll with nothing new at its end.
	meta.hold.Store(true)
	show := h.system.Root.RequestFuture(h.mgr, &api.ShowJobRequest{Name: "light"}, 30*time.Second)
	select {
	case <-meta.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the show never read the journal")
	}
	for _, req := range []*api.JobCommittedRequest{{Name: "light"}, {Name: "light", AfterBatches: 3, WaitMs: 20}} {
		if got := askCommitted(t, h, req); got.GetLoadedRows() != 30 || got.GetCommittedBatches() != 3 {
			t.Errorf("%v while the job actor is blocked = %v, want 30 rows in 3 batches", req, got)
		}
	}
	meta.hold.Store(false)
	close(meta.release)
	if _, err := show.Result(); err != nil {
		t.Fatalf("show: %v", err)
	}

	for _, tc := range []struct {
		req  *api.JobCommittedRequest
		code api.ErrorCode
	}{
		{&api.JobCommittedRequest{Name: "nope"}, api.ErrorCode_NOT_FOUND},
		{&api.JobCommittedRequest{Name: "light", WaitMs: api.MaxCommittedWaitMs + 1}, api.ErrorCode_INVALID_ARGUMENT},
		{&api.JobCommittedRequest{Name: "light", WaitMs: -1}, api.ErrorCode_INVALID_ARGUMENT},
	} {
		if got := h.ask(h.mgr, tc.req).(*api.JobCommittedResponse).GetError().GetCode(); got != tc.code {
			t.Errorf("%v: code %v, want %v", tc.req, got, tc.code)
		}
	}

	stopJob(t, h, "light")
	poll(t, 10*time.Second, func() (bool, string) {
		c = askCommitted(t, h, &api.JobCommittedRequest{Name: "light"})
		return c.GetStored(), fmt.Sprintf("committed %v, want it read from the sink", c)
	})
	if c.GetState() != api.JobState_STOPPED || c.GetLoadedRows() != 30 || c.GetCommittedBatches() != 3 || len(c.GetPositions()) != 1 || c.GetPositions()[0].GetCommittedOffset() != 30 {
		t.Errorf("stopped job's committed = %v, want STOPPED with 30 rows in 3 batches at offset 30", c)
	}
}

// TestCommittedHistory: a request with history gets every commit after
// its after_batches that the node published, each with its own positions
// and a time not before the one of the commit before it, however late it
// asks; without history the answer has none; the board keeps at most
// api.MaxCommittedHistory commits.
func TestCommittedHistory(t *testing.T) {
	src := &countSource{quietSource: quietSource{parts: []int32{0}}, n: 50, reads: make(chan int64, 1024)}
	open := func(*api.JobSpec) (Source, error) { return adapt(src), nil }
	h := newHarnessOpts(t, vfs.NewMem(), open, Settings{}, harnessOpts{})
	spec := testSpec("hist")
	spec.MaxBatchRows, spec.MaxBatchIntervalMs = 10, 100
	if resp := h.ask(h.mgr, &api.CreateJobRequest{Spec: spec}).(*api.JobResponse); resp.Error != nil {
		t.Fatal(resp.Error)
	}
	var c *api.JobCommitted
	poll(t, 10*time.Second, func() (bool, string) {
		c = askCommitted(t, h, &api.JobCommittedRequest{Name: "hist"})
		return c.GetLoadedRows() == 50, fmt.Sprintf("%d rows committed", c.GetLoadedRows())
	})
	if len(c.GetCommits()) != 0 {
		t.Fatalf("an answer without history has commits %v", c.GetCommits())
	}
	// Asked once, after every commit: each one is there, in order.
	c = askCommitted(t, h, &api.JobCommittedRequest{Name: "hist", AfterBatches: 0, History: true})
	ms := c.GetCommits()
	if len(ms) == 0 || ms[len(ms)-1].GetCommittedBatches() != c.GetCommittedBatches() {
		t.Fatalf("commits %v, want them up to batch %d", ms, c.GetCommittedBatches())
	}
	var batches, prevNs, prevOff int64
	for _, m := range ms {
		ps := m.GetPositions()
		if m.GetCommittedBatches() <= batches || m.GetCommitUnixNs() < prevNs || len(ps) != 1 || ps[0].GetCommittedOffset() <= prevOff {
			t.Fatalf("commit %v after batch %d at %d, offset %d: not a next commit", m, batches, prevNs, prevOff)
		}
		batches, prevNs, prevOff = m.GetCommittedBatches(), m.GetCommitUnixNs(), ps[0].GetCommittedOffset()
	}
	if prevOff != 50 || batches != 5 {
		t.Fatalf("last commit at batch %d offset %d, want 5 and 50", batches, prevOff)
	}
	// after_batches cuts the older ones (a group commit may cover two
	// batches: compare with the full list).
	var want []int64
	for _, m := range ms {
		if m.GetCommittedBatches() > 3 {
			want = append(want, m.GetCommittedBatches())
		}
	}
	c = askCommitted(t, h, &api.JobCommittedRequest{Name: "hist", AfterBatches: 3, History: true})
	var got []int64
	for _, m := range c.GetCommits() {
		got = append(got, m.GetCommittedBatches())
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(got) == 0 {
		t.Fatalf("commits after batch 3 = %v, want %v", got, want)
	}

	// The board keeps the last api.MaxCommittedHistory commits.
	var cell committedCell
	for i := range api.MaxCommittedHistory + 10 {
		cell.remember(&api.CommitMark{CommittedBatches: int64(i + 1)})
	}
	cell.snap.Store(&api.JobCommitted{CommittedBatches: api.MaxCommittedHistory + 10})
	a := cell.answer(cell.snap.Load(), &api.JobCommittedRequest{History: true}).GetCommitted().GetCommits()
	if len(a) != api.MaxCommittedHistory || a[0].GetCommittedBatches() != 11 {
		t.Fatalf("kept %d commits from batch %d, want %d from 11", len(a), a[0].GetCommittedBatches(), api.MaxCommittedHistory)
	}
}
