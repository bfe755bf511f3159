package actors

import (
	"errors"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/persistence"
	"github.com/loadnode/loadnode/table"
)

// gateStore holds the first CommitBatch until release is closed, and
// reports every CommitBatch it is given.
type gateStore struct {
	*persistence.Store
	held    chan *persistence.Commit // the first commit, once it is held
	release chan struct{}
	calls   chan *persistence.Commit
	first   bool
}

func (g *gateStore) CommitBatch(c *persistence.Commit) error {
	if !g.first {
		g.first = true // only the job's commit goroutine calls, one at a time
		g.held <- c
		<-g.release
	}
	err := g.Store.CommitBatch(c)
	g.calls <- c
	return err
}

// groupHarness starts a job over partitions 0, 1 and 2 whose tasks never
// commit, with a gated store; it returns the job, its generation and a
// row maker.
func groupHarness(t *testing.T) (*harness, *gateStore, *actor.PID, *jobInspection, func(p int32, off int64) persistence.KV) {
	gate := &gateStore{held: make(chan *persistence.Commit, 1), release: make(chan struct{}), calls: make(chan *persistence.Commit, 16)}
	h := newHarnessStore(t, vfs.NewMem(), &quietSource{parts: []int32{0, 1, 2}}, Settings{}, func(st *persistence.Store) Store {
		gate.Store = st
		return gate
	})
	resp := h.ask(h.mgr, &api.CreateJobRequest{Spec: testSpec("group")}).(*api.JobResponse)
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	id := resp.Job.Summary.Id
	pid := h.jobPID(id)
	in := h.waitState(pid, api.JobState_RUNNING)
	schema, _ := table.NewSchema(testSpec("group").Table)
	row := func(p int32, off int64) persistence.KV {
		return oneRow(t, schema, table.Pos{JobID: id, Partition: p, Offset: off}, off)
	}
	return h, gate, pid, in, row
}

func commitOf(gen uint64, p int32, from, to int64, row func(int32, int64) persistence.KV) *commitBatch {
	c := &commitBatch{generation: gen, ranges: []persistence.Range{{Partition: p, From: from, To: to}}}
	for o := from; o < to; o++ {
		c.rows = append(c.rows, row(p, o))
	}
	c.loaded = to - from
	return c
}

func commitAnswer(t *testing.T, f *actor.Future) error {
	t.Helper()
	res, err := f.Result()
	if err != nil {
		t.Fatalf("commit answer: %v", err)
	}
	return res.(*commitResult).err
}

// TestGroupCommit: batches that arrive while a commit is being synced go
// together in the next one (one CommitBatch, one synced batch), each is
// acknowledged only after it, and the statistics count every batch once.
func TestGroupCommit(t *testing.T) {
	h, gate, pid, in, row := groupHarness(t)
	root := h.system.Root
	a := root.RequestFuture(pid, commitOf(in.generation, 0, 0, 2, row), 5*time.Second)
	<-gate.held
	// While a is being synced: two other tasks' batches (b, c), and the
	// batch after a on a's partition (d), which is refused: a task sends a
	// batch only once the one before is durable, so a commit never starts
	// at a position that is not durable yet.
	b := root.RequestFuture(pid, commitOf(in.generation, 1, 0, 3, row), 5*time.Second)
	c := root.RequestFuture(pid, commitOf(in.generation, 2, 0, 2, row), 5*time.Second)
	if err := commitAnswer(t, root.RequestFuture(pid, commitOf(in.generation, 0, 2, 4, row), 5*time.Second)); !errors.Is(err, ErrStaleCommit) {
		t.Fatalf("commit d, chained to a commit in flight: %v, want ErrStaleCommit", err)
	}
	// show is answered while the commit is in flight, with durable progress.
	if got := h.ask(pid, &inspectJob{}).(*jobInspection); got.progress[0] != 0 || got.progress[1] != 0 {
		t.Fatalf("progress moved before the commit was durable: %v", got.progress)
	}
	close(gate.release)
	for name, f := range map[string]*actor.Future{"a": a, "b": b, "c": c} {
		if err := commitAnswer(t, f); err != nil {
			t.Fatalf("commit %s: %v", name, err)
		}
	}
	first, second := <-gate.calls, <-gate.calls
	if len(first.Ranges) != 1 || len(second.Ranges) != 2 || len(second.Rows) != 5 {
		t.Fatalf("groups: first %d ranges, second %d ranges and %d rows; want 1, then 2 and 5", len(first.Ranges), len(second.Ranges), len(second.Rows))
	}
	st, err := h.store.LoadJob(in2id(h, pid))
	if err != nil {
		t.Fatal(err)
	}
	if st.Progress[0] != 2 || st.Progress[1] != 3 || st.Progress[2] != 2 || st.Stats.LoadedRows != 7 ||
		st.Stats.CommittedBatches != 3 || st.Stats.AbortedBatches != 1 {
		t.Fatalf("stored progress %v, loaded %d, batches %d, aborted %d; want {0:2 1:3 2:2}, 7, 3, 1",
			st.Progress, st.Stats.LoadedRows, st.Stats.CommittedBatches, st.Stats.AbortedBatches)
	}
	if n, err := h.store.CountRows("t_group"); err != nil || n != 7 {
		t.Fatalf("rows %d, %v; want 7", n, err)
	}
}

// TestGroupCommitDefersStateChanges: a pause that arrives while a commit is
// being synced is handled after it; the batches queued behind the commit
// are then refused as stale and nothing else is written.
func TestGroupCommitDefersStateChanges(t *testing.T) {
	h, gate, pid, in, row := groupHarness(t)
	root := h.system.Root
	a := root.RequestFuture(pid, commitOf(in.generation, 0, 0, 2, row), 5*time.Second)
	<-gate.held
	b := root.RequestFuture(pid, commitOf(in.generation, 1, 0, 1, row), 5*time.Second)
	pause := root.RequestFuture(h.mgr, &api.PauseJobRequest{Name: "group"}, 5*time.Second)
	paused := answered(pause)
	// The pause is not answered while the commit is held (checked over the
	// whole window).
	early := root.RequestFuture(h.mgr, &api.ShowJobRequest{Name: "group"}, 5*time.Second)
	if _, err := early.Result(); err != nil {
		t.Fatal(err)
	}
	if _, err := actor.NewFuture(h.system, 100*time.Millisecond).Result(); !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("window: %v", err)
	}
	select {
	case <-paused:
		t.Fatal("pause answered while a commit was in flight")
	default:
	}
	close(gate.release)
	if err := commitAnswer(t, a); err != nil {
		t.Fatalf("commit a: %v", err)
	}
	if res, err := pause.Result(); err != nil || res.(*api.JobResponse).Error != nil {
		t.Fatalf("pause: %v %v", res, err)
	}
	if err := commitAnswer(t, b); !errors.Is(err, ErrStaleCommit) {
		t.Fatalf("commit b after the pause: %v, want ErrStaleCommit", err)
	}
	<-gate.calls
	st, err := h.store.LoadJob(in2id(h, pid))
	if err != nil {
		t.Fatal(err)
	}
	if st.Progress[0] != 2 || st.Progress[1] != 0 || st.Stats.LoadedRows != 2 {
		t.Fatalf("stored progress %v, loaded %d; want {0:2 1:0}, 2", st.Progress, st.Stats.LoadedRows)
	}
	if st.Last.To != api.JobState_PAUSED {
		t.Fatalf("last transition to %s, want PAUSED", st.Last.To)
	}
}

// answered is closed once f has an answer or times out.
func answered(f *actor.Future) <-chan struct{} {
	ch := make(chan struct{})
	go func() { _, _ = f.Result(); close(ch) }()
	return ch
}

func in2id(h *harness, pid *actor.PID) uint64 {
	h.t.Helper()
	resp := h.ask(pid, &api.ShowJobRequest{Name: "group"}).(*api.JobResponse)
	return resp.GetJob().GetSummary().GetId()
}
