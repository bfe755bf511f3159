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
