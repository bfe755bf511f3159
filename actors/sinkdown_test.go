package actors

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/persistence"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// downSink fails every commit with sink.ErrUnavailable while down is set,
// writing nothing.
type downSink struct {
	sink.Sink
	down  atomic.Bool
	fails atomic.Int64
}

func (d *downSink) Commit(c *sink.Commit) error {
	if d.down.Load() {
		d.fails.Add(1)
		return fmt.Errorf("test: connection refused: %w", sink.ErrUnavailable)
	}
	return d.Sink.Commit(c)
}

// prepareDownSink refuses PrepareTable with sink.ErrUnavailable while down
// is set, as a PostgreSQL sink does while its server starts up.
type prepareDownSink struct {
	sink.Sink
	down atomic.Bool
}

func (d *prepareDownSink) PrepareTable(spec *api.TableSpec) error {
	if d.down.Load() {
		return fmt.Errorf("test: the database system is starting up: %w", sink.ErrUnavailable)
	}
	return d.Sink.PrepareTable(spec)
}

// TestPrepareUnreachableAutoResumes: a database that cannot be reached when
// the job starts its tasks (it prepares its tables then) pauses the job
// with SINK_UNREACHABLE, which auto-resumes, not with a configuration
// error, which waits for an operator; once the database answers the job
// runs.
func TestPrepareUnreachableAutoResumes(t *testing.T) {
	ds := &prepareDownSink{}
	ds.down.Store(true)
	h := newHarnessStore(t, vfs.NewMem(), &quietSource{parts: []int32{0}},
		Settings{AutoResumeBase: 100 * time.Millisecond, AutoResumeMax: 100 * time.Millisecond},
		func(st *persistence.Store) sink.Sink {
			ds.Sink = st.Sink()
			return ds
		})
	_, pid := h.create("prep")
	poll(t, 10*time.Second, func() (bool, string) {
		info := showJob(t, h, "prep")
		for _, tr := range info.GetHistory() {
			if tr.GetTo() == api.JobState_PAUSED {
				return tr.GetReason() == api.Reason_SINK_UNREACHABLE, fmt.Sprintf("paused with %s: %s", tr.GetReason(), tr.GetMessage())
			}
		}
		return false, fmt.Sprintf("not paused yet: %v", info.GetHistory())
	})
	ds.down.Store(false)
	h.waitState(pid, api.JobState_RUNNING)
}

// TestSinkUnreachable: a database that does not answer is retried with
// back-off, the job staying RUNNING, up to the retry limit; then the job
// pauses with SINK_UNREACHABLE, which auto-resumes; once the database
// answers the job commits from where it stood.
func TestSinkUnreachable(t *testing.T) {
	ds := &downSink{}
	ds.down.Store(true)
	const limit = 2
	h := newHarnessStore(t, vfs.NewMem(), &quietSource{parts: []int32{0}},
		Settings{SourceRetryLimit: limit, SourceRetryBase: 10 * time.Millisecond, AutoResumeBase: 200 * time.Millisecond, AutoResumeMax: 200 * time.Millisecond},
		func(st *persistence.Store) sink.Sink {
			ds.Sink = st.Sink()
			return ds
		})
	id, pid := h.create("down")
	schema, _ := table.NewSchema(testSpec("down").Table)
	row := func(p int32, off int64) persistence.KV {
		return oneRow(t, schema, table.Pos{JobID: id, Partition: p, Offset: off}, off)
	}
	commit := func() error {
		t.Helper()
		in := h.waitState(pid, api.JobState_RUNNING)
		return commitAnswer(t, h.system.Root.RequestFuture(pid, commitOf(in.Generation, 0, 0, 3, row), 5*time.Second))
	}
	for i := range limit {
		if err := commit(); err == nil {
			t.Fatalf("commit %d succeeded while the sink is down", i)
		}
		if s := showJob(t, h, "down").GetSummary(); s.GetState() != api.JobState_RUNNING {
			t.Fatalf("after %d failures (limit %d): %s (%s), want RUNNING, retrying", i+1, limit, s.GetState(), s.GetReason())
		}
	}
	if err := commit(); err == nil {
		t.Fatal("commit succeeded while the sink is down")
	}
	poll(t, 5*time.Second, func() (bool, string) {
		info := showJob(t, h, "down")
		hist := info.GetHistory()
		paused := false
		for _, tr := range hist {
			paused = paused || (tr.GetTo() == api.JobState_PAUSED && tr.GetReason() == api.Reason_SINK_UNREACHABLE)
		}
		// Paused for SINK_UNREACHABLE, then auto-resumed.
		return paused && info.GetSummary().GetState() == api.JobState_RUNNING,
			fmt.Sprintf("job did not pause with SINK_UNREACHABLE and auto-resume: %v", hist)
	})
	ds.down.Store(false)
	if err := commit(); err != nil {
		t.Fatalf("commit once the sink answers: %v", err)
	}
	if p, _ := ds.Progress(id); p.Positions[0] != 3 || p.Stats.GetLoadedRows() != 3 {
		t.Fatalf("progress after the sink came back: %v, loaded %d", p.Positions, p.Stats.GetLoadedRows())
	}
}

// supersededSink refuses every commit as the PostgreSQL sink refuses a
// former incarnation's (sink.ErrSuperseded, which wraps ErrStaleCommit).
type supersededSink struct{ sink.Sink }

func (supersededSink) Commit(c *sink.Commit) error {
	return fmt.Errorf("test: owner claimed by a later process: %w: %w", sink.ErrSuperseded, sink.ErrStaleCommit)
}

// TestSupersededPauses (issue 25): a commit refused because another process
// with this node's id claimed the job's database pauses the job with
// SUPERSEDED, its tasks stopped, naming the refusal; it is not retried as
// a stale commit is, nor auto-resumed. The node started again (a new
// process, which claims the database anew) resumes it: RECOVERED.
func TestSupersededPauses(t *testing.T) {
	mem := vfs.NewCrashableMem()
	h := newHarnessStore(t, mem, &quietSource{parts: []int32{0}},
		Settings{AutoResumeBase: 50 * time.Millisecond, AutoResumeMax: 50 * time.Millisecond},
		func(st *persistence.Store) sink.Sink { return supersededSink{st.Sink()} })
	id, pid := h.create("zombie")
	schema, _ := table.NewSchema(testSpec("zombie").Table)
	in := h.waitState(pid, api.JobState_RUNNING)
	err := commitAnswer(t, h.system.Root.RequestFuture(pid, commitOf(in.Generation, 0, 0, 3, func(p int32, off int64) persistence.KV {
		return oneRow(t, schema, table.Pos{JobID: id, Partition: p, Offset: off}, off)
	}), 5*time.Second))
	if err == nil {
		t.Fatal("a superseded commit succeeded")
	}
	h.waitState(pid, api.JobState_PAUSED)
	info := showJob(t, h, "zombie")
	s := info.GetSummary()
	if s.GetReason() != api.Reason_SUPERSEDED || !strings.Contains(s.GetReasonMessage(), "claimed by a later process") || info.GetRunningTasks() != 0 {
		t.Fatalf("after a superseded commit: %s %s (%q), %d tasks; want PAUSED SUPERSEDED with the refusal, no tasks",
			s.GetState(), s.GetReason(), s.GetReasonMessage(), info.GetRunningTasks())
	}
	// For 5x the auto-resume back-off, it stays paused.
	holds(t, 250*time.Millisecond, func() (bool, string) {
		st := h.ask(pid, &InspectJob{}).(*JobRuntime).State
		return st == api.JobState_PAUSED, fmt.Sprintf("a superseded job left PAUSED: %s", st)
	})
	// The node started again on its disk: the job loads.
	h2 := newHarnessStore(t, mem.CrashClone(vfs.CrashCloneCfg{}), &quietSource{parts: []int32{0}},
		Settings{AutoResumeBase: 50 * time.Millisecond, AutoResumeMax: 50 * time.Millisecond}, nil)
	poll(t, 10*time.Second, func() (bool, string) {
		// Dead letters until recovery has respawned the job.
		res, err := h2.system.Root.RequestFuture(h2.jobPID(id), &InspectJob{}, 5*time.Second).Result()
		if err != nil {
			return false, err.Error()
		}
		st := res.(*JobRuntime).State
		return st == api.JobState_RUNNING, fmt.Sprintf("after the restart: %s", st)
	})
	hist := h2.journal(id)
	var back *api.Transition
	for _, tr := range hist {
		if tr.GetFrom() == api.JobState_PAUSED && tr.GetReason() == api.Reason_RECOVERED {
			back = tr
		}
	}
	if back == nil || back.GetTo() != api.JobState_NEED_SCHEDULE || !strings.Contains(back.GetMessage(), "claimed the job's database") {
		t.Fatalf("journal after the restart %v: want PAUSED -> NEED_SCHEDULE (RECOVERED, claimed the job's database)", hist)
	}
}
