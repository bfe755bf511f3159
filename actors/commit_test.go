package actors

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/persistence"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/table"
)

// gateStore holds the first CommitBatch until release is closed, and
// reports every CommitBatch it is given.
type gateStore struct {
	sink.Sink
	held    chan *persistence.Commit // the first commit, once it is held
	release chan struct{}
	calls   chan *persistence.Commit
	first   bool
	// refuseFirst: the first commit, once released, fails as stale
	// without writing anything.
	refuseFirst bool
}

func (g *gateStore) Commit(c *persistence.Commit) error {
	if !g.first {
		g.first = true // only the job's commit goroutine calls, one at a time
		g.held <- c
		<-g.release
		if g.refuseFirst {
			g.calls <- c
			return fmt.Errorf("gate: %w", persistence.ErrStaleCommit)
		}
	}
	err := g.Sink.Commit(c)
	g.calls <- c
	return err
}

// groupHarness starts a job over partitions 0, 1 and 2 whose tasks never
// commit, with a gated store; it returns the job, its generation and a
// row maker.
func groupHarness(t *testing.T) (*harness, *gateStore, *actor.PID, *JobRuntime, func(p int32, off int64) persistence.KV) {
	gate := &gateStore{held: make(chan *persistence.Commit, 1), release: make(chan struct{}), calls: make(chan *persistence.Commit, 16)}
	h := newHarnessStore(t, vfs.NewMem(), &quietSource{parts: []int32{0, 1, 2}}, Settings{}, func(st *persistence.Store) sink.Sink {
		gate.Sink = st.Sink()
		return gate
	})
	id, pid := h.create("group")
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
	a := root.RequestFuture(pid, commitOf(in.Generation, 0, 0, 2, row), 5*time.Second)
	<-gate.held
	// While a is being synced: two other tasks' batches (b, c), and the
	// batch after a on a's partition (d), which is refused: a task sends a
	// batch only once the one before is durable, so a commit never starts
	// at a position that is not durable yet.
	b := root.RequestFuture(pid, commitOf(in.Generation, 1, 0, 3, row), 5*time.Second)
	c := root.RequestFuture(pid, commitOf(in.Generation, 2, 0, 2, row), 5*time.Second)
	if err := commitAnswer(t, root.RequestFuture(pid, commitOf(in.Generation, 0, 2, 4, row), 5*time.Second)); !errors.Is(err, ErrStaleCommit) {
		t.Fatalf("commit d, chained to a commit in flight: %v, want ErrStaleCommit", err)
	}
	// show is answered while the commit is in flight, with durable progress.
	if got := h.ask(pid, &InspectJob{}).(*JobRuntime); got.Progress[0] != 0 || got.Progress[1] != 0 {
		t.Fatalf("progress moved before the commit was durable: %v", got.Progress)
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
	a := root.RequestFuture(pid, commitOf(in.Generation, 0, 0, 2, row), 5*time.Second)
	<-gate.held
	b := root.RequestFuture(pid, commitOf(in.Generation, 1, 0, 1, row), 5*time.Second)
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
	got := <-paused
	if got.err != nil || got.res.(*api.JobResponse).Error != nil {
		t.Fatalf("pause: %v %v", got.res, got.err)
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

type answer struct {
	res any
	err error
}

// answered delivers f's answer (or time-out) once it has one. It is f's
// only reader: a Future must not be waited on twice at the same time.
func answered(f *actor.Future) <-chan answer {
	ch := make(chan answer, 1)
	go func() {
		res, err := f.Result()
		ch <- answer{res, err}
	}()
	return ch
}

func in2id(h *harness, pid *actor.PID) uint64 {
	h.t.Helper()
	resp := h.ask(pid, &api.ShowJobRequest{Name: "group"}).(*api.JobResponse)
	return resp.GetJob().GetSummary().GetId()
}

// countSource has one partition holding records 0..n-1 (csv "7"); its
// readers report the position every Read starts from.
type countSource struct {
	quietSource
	n     int64
	reads chan int64
}

func (s *countSource) NewReader(start map[int32]sources.Start) (sources.Reader, error) {
	return &countReader{src: s, next: start[0].Offset}, nil
}

type countReader struct {
	src  *countSource
	next int64
}

func (r *countReader) Read(ctx context.Context, lim sources.Limits) (*sources.Batch, error) {
	select {
	case r.src.reads <- r.next:
	default:
	}
	b := &sources.Batch{}
	for r.next < r.src.n && len(b.Records) < lim.MaxRows {
		b.Records = append(b.Records, sources.Record{Partition: 0, Offset: r.next, Value: []byte("7")})
		b.Bytes++
		r.next++
	}
	if len(b.Records) == 0 {
		t := time.NewTimer(lim.MaxWait)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	b.Next = map[int32]int64{0: r.next}
	return b, nil
}

func (r *countReader) Close() {}

// pipelineHarness runs a job reading 30 records in batches of 10 through a
// gated store.
func pipelineHarness(t *testing.T, refuseFirst bool) (*harness, *gateStore, *countSource, *actor.PID) {
	t.Helper()
	return pipelineHarnessSlots(t, refuseFirst, nil)
}

// pipelineHarnessSlots is pipelineHarness whose scheduler passes every
// message it receives through slots (nil: none).
func pipelineHarnessSlots(t *testing.T, refuseFirst bool, slots actor.ReceiverMiddleware) (*harness, *gateStore, *countSource, *actor.PID) {
	t.Helper()
	src := &countSource{quietSource: quietSource{parts: []int32{0}}, n: 30, reads: make(chan int64, 1024)}
	gate := &gateStore{held: make(chan *persistence.Commit, 1), release: make(chan struct{}),
		calls: make(chan *persistence.Commit, 1024), refuseFirst: refuseFirst}
	open := func(*api.JobSpec) (Source, error) { return adapt(src), nil }
	h := newHarnessOpts(t, vfs.NewMem(), open, Settings{}, harnessOpts{slots: slots, sink: func(st *persistence.Store) sink.Sink {
		gate.Sink = st.Sink()
		return gate
	}})
	spec := testSpec("pipe")
	spec.MaxBatchRows, spec.MaxBatchIntervalMs = 10, 100
	resp := h.ask(h.mgr, &api.CreateJobRequest{Spec: spec}).(*api.JobResponse)
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	return h, gate, src, h.jobPID(resp.Job.Summary.Id)
}

// slotReleases is a scheduler middleware that reports the sender of every
// SlotRelease on the returned channel.
func slotReleases() (actor.ReceiverMiddleware, <-chan *actor.PID) {
	ch := make(chan *actor.PID, 1024)
	return func(next actor.ReceiverFunc) actor.ReceiverFunc {
		return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
			if _, ok := env.Message.(*SlotRelease); ok && env.Sender != nil {
				ch <- env.Sender
			}
			next(c, env)
		}
	}, ch
}

// waitRead waits until a Read starts at offset want.
func waitRead(t *testing.T, src *countSource, want int64) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case got := <-src.reads:
			if got == want {
				return
			}
		case <-deadline:
			t.Fatalf("no read from offset %d", want)
		}
	}
}

// waitLoaded waits until the job's durable progress is 30 and checks that
// every record is in the table exactly once.
func waitLoaded(t *testing.T, h *harness, pid *actor.PID) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for {
		if in := h.ask(pid, &InspectJob{}).(*JobRuntime); in.Progress[0] == 30 {
			break
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal("the job did not load its 30 records")
		}
	}
	st, err := h.store.LoadJob(in2idName(h, pid, "pipe"))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := h.store.CountRows("t_pipe"); err != nil || n != 30 || st.Stats.LoadedRows != 30 {
		t.Fatalf("rows %d (%v), loaded_rows %d; want 30 and 30", n, err, st.Stats.LoadedRows)
	}
}

// TestTaskReadsAheadDuringCommit: while a batch's commit is being synced,
// its task reads the next batch from the batch's end.
func TestTaskReadsAheadDuringCommit(t *testing.T) {
	h, gate, src, pid := pipelineHarness(t, false)
	first := <-gate.held
	if r := first.Ranges[0]; r.From != 0 || r.To != 10 {
		t.Fatalf("first commit %+v", r)
	}
	waitRead(t, src, 10) // the read-ahead, while the commit is held
	close(gate.release)
	waitLoaded(t, h, pid)
}

// TestRefusedCommitDropsReadAhead: when a commit is refused, the task stops
// and drops the batch it read ahead meanwhile: that batch is never offered
// to the job, let alone committed. The next generation reads again from
// durable progress and every record is loaded exactly once.
func TestRefusedCommitDropsReadAhead(t *testing.T) {
	slots, releases := slotReleases()
	h, gate, _, pid := pipelineHarnessSlots(t, true, slots)
	refused := <-gate.held
	if r := refused.Ranges; len(r) != 1 || r[0].From != 0 || r[0].To != 10 {
		t.Fatalf("first commit %+v, want [0,10)", r)
	}
	// The task gives its slot back after each read: after [0,10), then
	// after the read-ahead [10,20), which it then holds, parsed, for after
	// the commit. The refusal below finds it there.
	var readers [2]*actor.PID
	for i := range readers {
		select {
		case readers[i] = <-releases:
		case <-time.After(5 * time.Second):
			t.Fatalf("the task did not read ahead: %d slot releases", i)
		}
	}
	if readers[0].Id != readers[1].Id {
		t.Fatalf("slots released by %s then %s, want one task", readers[0].Id, readers[1].Id)
	}
	close(gate.release)
	waitLoaded(t, h, pid) // 30 rows, each once

	// Every commit the store was given, with its generation (Fence): the
	// refused one, then only later generations' from durable progress on.
	// (Each is sent before its answer, so all are here once progress is 30.)
	calls := []*persistence.Commit{}
	for len(gate.calls) > 0 {
		calls = append(calls, <-gate.calls)
	}
	if len(calls) == 0 || calls[0] != refused {
		t.Fatalf("%d commits; want the refused one first", len(calls))
	}
	gen := refused.Fence
	for i, c := range calls[1:] {
		for _, r := range c.Ranges {
			if c.Fence == gen && r.From == 10 && r.To == 20 {
				t.Fatalf("commit %d is generation %d's read-ahead [10,20), read while its refused commit was in flight", i+1, gen)
			}
		}
	}
	next := int64(0)
	for i, c := range calls[1:] {
		if c.Fence <= gen {
			t.Fatalf("commit %d of generation %d %+v after generation %d was refused", i+1, c.Fence, c.Ranges, gen)
		}
		if len(c.Ranges) != 1 || c.Ranges[0].From != next {
			t.Fatalf("commit %d covers %+v, want one range from %d", i+1, c.Ranges, next)
		}
		next = c.Ranges[0].To
	}
	if next != 30 {
		t.Fatalf("commits after the refusal end at %d, want 30", next)
	}
	// The job refused one batch, the commit: the read-ahead was dropped by
	// the task, not offered and fenced off.
	st, err := h.store.LoadJob(in2idName(h, pid, "pipe"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Stats.AbortedBatches != 1 {
		t.Fatalf("aborted batches %d, want 1 (the refused commit only)", st.Stats.AbortedBatches)
	}
}

func in2idName(h *harness, pid *actor.PID, name string) uint64 {
	h.t.Helper()
	resp := h.ask(pid, &api.ShowJobRequest{Name: name}).(*api.JobResponse)
	return resp.GetJob().GetSummary().GetId()
}

// TestStaleCommitReloadsStats: when the store refuses a group as stale
// (durable progress moved under the job, e.g. by an earlier incarnation),
// the job reloads its statistics with its progress, so that its next
// commit does not write counts that forget the durable ones.
func TestStaleCommitReloadsStats(t *testing.T) {
	h, gate, pid, in, row := groupHarness(t)
	close(gate.release)
	id := in2id(h, pid)
	// Durable state the job's memory does not know: partition 1 at 3 with
	// its 3 rows counted.
	ahead := commitOf(in.Generation, 1, 0, 3, row)
	if err := h.store.CommitBatch(&persistence.Commit{JobID: id, Table: "t_group", Rows: ahead.rows, Ranges: ahead.ranges,
		Stats: &api.JobStats{LoadedRows: 3, CommittedBatches: 1}}); err != nil {
		t.Fatal(err)
	}
	root := h.system.Root
	if err := commitAnswer(t, root.RequestFuture(pid, commitOf(in.Generation, 1, 0, 3, row), 5*time.Second)); !errors.Is(err, ErrStaleCommit) {
		t.Fatalf("commit from 0 over durable progress 3: %v, want ErrStaleCommit", err)
	}
	if err := commitAnswer(t, root.RequestFuture(pid, commitOf(in.Generation, 1, 3, 5, row), 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	st, err := h.store.LoadJob(id)
	if err != nil {
		t.Fatal(err)
	}
	n, err := h.store.CountRows("t_group")
	if err != nil {
		t.Fatal(err)
	}
	if n != 5 || st.Stats.LoadedRows != 5 {
		t.Fatalf("%d rows stored, loaded-rows statistic %d; want 5 and 5", n, st.Stats.LoadedRows)
	}
}

// TestRefusedCommitsShown: job show counts the commits the sink refused as
// stale (another writer moved the job's progress, or stored a newer
// fence) and names the newest refusal's reason; a batch the job itself
// refuses (a stale generation) counts in aborted_batches only, and a
// commit that goes through changes neither.
func TestRefusedCommitsShown(t *testing.T) {
	h, gate, pid, in, row := groupHarness(t)
	close(gate.release)
	id := in2id(h, pid)
	root := h.system.Root
	show := func() *api.JobInfo {
		t.Helper()
		return h.ask(pid, &api.ShowJobRequest{Name: "group"}).(*api.JobResponse).GetJob()
	}
	commit := func(c *commitBatch) error {
		t.Helper()
		return commitAnswer(t, root.RequestFuture(pid, c, 5*time.Second))
	}
	other := func(c *commitBatch, fence uint64) {
		t.Helper()
		if err := h.store.CommitBatch(&persistence.Commit{JobID: id, Table: "t_group", Rows: c.rows, Ranges: c.ranges, Fence: fence}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(step string, refused, aborted int64, last string) {
		t.Helper()
		info := show()
		if info.GetRefusedCommits() != refused || info.GetStats().GetAbortedBatches() != aborted || !strings.Contains(info.GetLastRefusal(), last) {
			t.Fatalf("%s: refused_commits %d, aborted_batches %d, last_refusal %q; want %d, %d and a reason with %q",
				step, info.GetRefusedCommits(), info.GetStats().GetAbortedBatches(), info.GetLastRefusal(), refused, aborted, last)
		}
	}

	if err := commit(commitOf(in.Generation-1, 0, 0, 2, row)); !errors.Is(err, ErrStaleCommit) {
		t.Fatalf("commit of an old generation: %v, want ErrStaleCommit", err)
	}
	check("a batch the job refused", 0, 1, "")

	other(commitOf(in.Generation, 1, 0, 3, row), in.Generation)
	if err := commit(commitOf(in.Generation, 1, 0, 3, row)); !errors.Is(err, ErrStaleCommit) {
		t.Fatalf("commit from 0 over another writer's progress 3: %v, want ErrStaleCommit", err)
	}
	check("progress moved by another writer", 1, 2, "stored progress 3")

	if err := commit(commitOf(in.Generation, 1, 3, 5, row)); err != nil {
		t.Fatal(err)
	}
	check("a commit that went through", 1, 2, "stored progress 3")

	// Another writer with a newer fence (a second incarnation's tasks)
	// commits a partition the job does not touch: the job's next commit
	// starts at the stored progress but carries an older fence.
	other(commitOf(in.Generation, 2, 0, 1, row), in.Generation+1000)
	if err := commit(commitOf(in.Generation, 0, 0, 2, row)); !errors.Is(err, ErrStaleCommit) {
		t.Fatalf("commit with a fence older than the stored one: %v, want ErrStaleCommit", err)
	}
	check("a newer fence stored by another writer", 2, 3, "older than the stored")
}

// TestStatsFence: a commit whose partitions' progress matches the store but
// whose statistics were computed from counts the store has moved past (a
// second incarnation of the job, or memory behind the store) is refused;
// the job reloads and the retried commit adds to the durable counts.
func TestStatsFence(t *testing.T) {
	h, gate, pid, in, row := groupHarness(t)
	close(gate.release)
	id := in2id(h, pid)
	// Another writer moved partition 1 and the statistics; partition 0 is
	// untouched, so progress alone would let the job's next commit through.
	other := commitOf(in.Generation, 1, 0, 3, row)
	if err := h.store.CommitBatch(&persistence.Commit{JobID: id, Table: "t_group", Rows: other.rows, Ranges: other.ranges,
		Stats: &api.JobStats{LoadedRows: 3, CommittedBatches: 1}}); err != nil {
		t.Fatal(err)
	}
	root := h.system.Root
	if err := commitAnswer(t, root.RequestFuture(pid, commitOf(in.Generation, 0, 0, 2, row), 5*time.Second)); !errors.Is(err, ErrStaleCommit) {
		t.Fatalf("commit over statistics it never saw: %v, want ErrStaleCommit", err)
	}
	if err := commitAnswer(t, root.RequestFuture(pid, commitOf(in.Generation, 0, 0, 2, row), 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	st, err := h.store.LoadJob(id)
	if err != nil {
		t.Fatal(err)
	}
	n, err := h.store.CountRows("t_group")
	if err != nil {
		t.Fatal(err)
	}
	if n != 5 || st.Stats.LoadedRows != 5 || st.Stats.CommittedBatches != 2 {
		t.Fatalf("%d rows stored, loaded-rows statistic %d, %d batches; want 5, 5, 2", n, st.Stats.LoadedRows, st.Stats.CommittedBatches)
	}
}
