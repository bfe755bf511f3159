package actors

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/persistence"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// progressHangSink blocks Progress of job hang until release is closed, as
// a database behind a dropped network does (entered hears of each read),
// and refuses every commit as stale while refuse is set.
type progressHangSink struct {
	sink.Sink
	hang    atomic.Uint64 // the job whose progress reads block; 0 none
	refuse  atomic.Bool
	entered chan uint64
	release chan struct{}
	once    sync.Once
}

func newProgressHangSink() *progressHangSink {
	return &progressHangSink{entered: make(chan uint64, 16), release: make(chan struct{})}
}

// free lets every read go on, now and after. Register it as a cleanup
// after the harness's (cleanups run last first): an actor that stops
// waits for its read.
func (s *progressHangSink) free() {
	s.once.Do(func() { close(s.release) })
}

func (s *progressHangSink) Progress(id uint64) (*sink.Progress, error) {
	if s.hang.Load() == id {
		select {
		case s.entered <- id:
		default:
		}
		<-s.release
	}
	return s.Sink.Progress(id)
}

func (s *progressHangSink) Commit(c *sink.Commit) error {
	if s.refuse.Load() {
		return fmt.Errorf("test: another writer moved the job: %w", sink.ErrStaleCommit)
	}
	return s.Sink.Commit(c)
}

// entered waits until a read of job id's progress hangs.
func (s *progressHangSink) waitEntered(t *testing.T, what string, id uint64) {
	t.Helper()
	for {
		select {
		case got := <-s.entered:
			if got == id {
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no read of the sink began", what)
		}
	}
}

// answers checks that the job actor pid and the manager answer while a
// read of the job's sink hangs: an inspection, a show (its error rows
// come from another read) and a ping; the job is still in state want.
func answers(t *testing.T, h *harness, pid *actor.PID, name string, want api.JobState) {
	t.Helper()
	if st := h.ask(pid, &InspectJob{}).(*JobRuntime).State; st != want {
		t.Fatalf("job is %s while its sink read hangs, want %s", st, want)
	}
	res, err := h.system.Root.RequestFuture(h.mgr, &api.ShowJobRequest{Name: name}, 2*showSinkWait).Result()
	if err != nil {
		t.Fatalf("show while the job's sink read hangs: no answer: %v", err)
	}
	if s := res.(*api.JobResponse).GetJob().GetSummary(); s.GetState() != want {
		t.Fatalf("show while the job's sink read hangs = %v, want %s", res, want)
	}
	h.pingManager("while a job's sink read hangs")
}

// TestResumeSinkHangs (issue 27): a resume reads where the job stands from
// its sink off the mailbox. While that read hangs, the job actor answers
// inspections and shows; a pause that arrives meanwhile waits (it could
// change the state the resume acts on) and is handled after, in order.
func TestResumeSinkHangs(t *testing.T) {
	hs := newProgressHangSink()
	h := newHarnessStore(t, vfs.NewMem(), &quietSource{parts: []int32{0}}, Settings{},
		func(st *persistence.Store) sink.Sink {
			hs.Sink = st.Sink()
			return hs
		})
	t.Cleanup(hs.free)
	id, pid := h.create("resumed")
	h.waitState(pid, api.JobState_RUNNING)
	if r := h.ask(h.mgr, &api.PauseJobRequest{Name: "resumed"}).(*api.JobResponse); r.Error != nil {
		t.Fatalf("pause: %v", r.Error)
	}
	hs.hang.Store(id)
	resume := h.system.Root.RequestFuture(h.mgr, &api.ResumeJobRequest{Name: "resumed"}, sinkReadWait)
	hs.waitEntered(t, "resume", id)
	answers(t, h, pid, "resumed", api.JobState_PAUSED)
	paused := make(chan *api.JobResponse, 1)
	go func() {
		res, _ := h.system.Root.RequestFuture(h.mgr, &api.PauseJobRequest{Name: "resumed"}, sinkReadWait).Result()
		r, _ := res.(*api.JobResponse)
		paused <- r
	}()
	holds(t, 200*time.Millisecond, func() (bool, string) {
		return len(paused) == 0, "a pause was answered while the resume's read was in flight"
	})
	hs.free()
	res, err := resume.Result()
	if err != nil || res.(*api.JobResponse).GetError() != nil {
		t.Fatalf("resume once the sink answered: %v %v", res, err)
	}
	// The pause came after the resume: handled after it (a pause before
	// the resume would have made the resume fail).
	if r := <-paused; r == nil || r.GetError() != nil {
		t.Fatalf("pause deferred behind the resume: %v", r)
	}
	h.waitState(pid, api.JobState_PAUSED)
}

// TestCommitReloadSinkHangs (issue 27): after a refused commit the job
// reloads its progress from the sink on the commit's goroutine, not in its
// mailbox: while that read hangs, the actor answers; the group stays in
// flight (the next group, and any change of state, waits for the reload),
// and once the sink answers the commit is answered with its refusal.
func TestCommitReloadSinkHangs(t *testing.T) {
	hs := newProgressHangSink()
	h := newHarnessStore(t, vfs.NewMem(), &quietSource{parts: []int32{0}}, Settings{},
		func(st *persistence.Store) sink.Sink {
			hs.Sink = st.Sink()
			return hs
		})
	t.Cleanup(hs.free)
	id, pid := h.create("reloaded")
	in := h.waitState(pid, api.JobState_RUNNING)
	schema, _ := table.NewSchema(testSpec("reloaded").Table)
	row := func(p int32, off int64) persistence.KV {
		return oneRow(t, schema, table.Pos{JobID: id, Partition: p, Offset: off}, off)
	}
	hs.refuse.Store(true)
	hs.hang.Store(id)
	commit := h.system.Root.RequestFuture(pid, commitOf(in.Generation, 0, 0, 3, row), sinkReadWait)
	hs.waitEntered(t, "reload after a refused commit", id)
	answers(t, h, pid, "reloaded", api.JobState_RUNNING)
	hs.refuse.Store(false)
	hs.free()
	if err := commitAnswer(t, commit); !errors.Is(err, sink.ErrStaleCommit) {
		t.Fatalf("commit refused as stale answered %v, want the refusal", err)
	}
	if r := showJob(t, h, "reloaded"); r.GetRefusedCommits() != 1 {
		t.Fatalf("refused commits after the reload = %d, want 1", r.GetRefusedCommits())
	}
}

// TestAutoResumeSinkHangs (issue 27): a job whose sink could not be
// opened when it started (here: after a restart) is paused and
// auto-resumed once the sink opens; the read of where it stands is made
// off the mailbox, and while it hangs the actor answers.
func TestAutoResumeSinkHangs(t *testing.T) {
	mem := vfs.NewCrashableMem()
	h1 := newHarness(t, mem)
	id, pid := h1.create("opened")
	h1.waitState(pid, api.JobState_RUNNING)

	hs := newProgressHangSink()
	var down atomic.Bool
	down.Store(true)
	h := newHarnessOpts(t, mem.CrashClone(vfs.CrashCloneCfg{}), func(*api.JobSpec) (Source, error) { return adapt(&quietSource{parts: []int32{0, 1}}), nil },
		Settings{AutoResumeBase: 100 * time.Millisecond, AutoResumeMax: 100 * time.Millisecond},
		harnessOpts{
			sink: func(st *persistence.Store) sink.Sink {
				hs.Sink = st.Sink()
				return hs
			},
			sinks: func(sk sink.Sink) SinkFactory {
				return func(*api.TableSpec) (sink.Sink, error) {
					if down.Load() {
						return nil, errors.New("test: no such database yet")
					}
					return sk, nil
				}
			},
		})
	t.Cleanup(hs.free)
	pid = h.jobPID(id)
	poll(t, 10*time.Second, func() (bool, string) {
		res, err := h.system.Root.RequestFuture(pid, &InspectJob{}, 5*time.Second).Result()
		if err != nil {
			return false, err.Error() // not respawned yet
		}
		st := res.(*JobRuntime).State
		return st == api.JobState_PAUSED, fmt.Sprintf("job is %s, want PAUSED (STORE_FAILURE)", st)
	})
	hs.hang.Store(id)
	down.Store(false)
	hs.waitEntered(t, "auto-resume", id)
	answers(t, h, pid, "opened", api.JobState_PAUSED)
	hs.free()
	h.waitState(pid, api.JobState_RUNNING)
}

// TestRebaseSinkHangs (issue 27): a move to another stream (alter
// kafka.topic) of a job whose sink is not open opens it and reads where
// the job stands off the mailbox; while that read hangs the actor
// answers, and once it answers the move is made.
func TestRebaseSinkHangs(t *testing.T) {
	mem := vfs.NewCrashableMem()
	h1 := newHarness(t, mem)
	id, pid := h1.create("moved")
	h1.waitState(pid, api.JobState_RUNNING)

	hs := newProgressHangSink()
	var down atomic.Bool
	down.Store(true)
	h := newHarnessOpts(t, mem.CrashClone(vfs.CrashCloneCfg{}), func(*api.JobSpec) (Source, error) { return adapt(&quietSource{parts: []int32{0, 1}}), nil },
		Settings{AutoResumeBase: time.Hour, AutoResumeMax: time.Hour}, // no auto-resume here
		harnessOpts{
			sink: func(st *persistence.Store) sink.Sink {
				hs.Sink = st.Sink()
				return hs
			},
			sinks: func(sk sink.Sink) SinkFactory {
				return func(*api.TableSpec) (sink.Sink, error) {
					if down.Load() {
						return nil, errors.New("test: no such database yet")
					}
					return sk, nil
				}
			},
		})
	t.Cleanup(hs.free)
	pid = h.jobPID(id)
	poll(t, 10*time.Second, func() (bool, string) {
		res, err := h.system.Root.RequestFuture(pid, &InspectJob{}, 5*time.Second).Result()
		if err != nil {
			return false, err.Error() // not respawned yet
		}
		st := res.(*JobRuntime).State
		return st == api.JobState_PAUSED, fmt.Sprintf("job is %s, want PAUSED (STORE_FAILURE)", st)
	})
	hs.hang.Store(id)
	down.Store(false)
	alter := h.system.Root.RequestFuture(h.mgr, &api.AlterJobRequest{Name: "moved",
		Spec: &api.JobSpec{Kafka: &api.KafkaSpec{Topic: "elsewhere"}}, UpdateMask: []string{"kafka.topic"}}, sinkReadWait)
	hs.waitEntered(t, "move to another stream", id)
	answers(t, h, pid, "moved", api.JobState_PAUSED)
	hs.free()
	res, err := alter.Result()
	if err != nil || res.(*api.JobResponse).GetError() != nil {
		t.Fatalf("move once the sink answered: %v %v", res, err)
	}
	if topic := showJob(t, h, "moved").GetSpec().GetKafka().GetTopic(); topic != "elsewhere" {
		t.Fatalf("after the move the job reads %q, want elsewhere", topic)
	}
}

// TestResumeSinkReadBounded (issue 27): a resume waits for its read of the
// sink at most sinkReadWait, then fails naming the sink; the read's late
// answer is dropped (the job stays PAUSED), and a later resume, the sink
// answering, resumes it.
func TestResumeSinkReadBounded(t *testing.T) {
	hs := newProgressHangSink()
	h := newHarnessOpts(t, vfs.NewMem(), func(*api.JobSpec) (Source, error) { return adapt(&quietSource{parts: []int32{0}}), nil },
		Settings{}, harnessOpts{
			sink: func(st *persistence.Store) sink.Sink {
				hs.Sink = st.Sink()
				return hs
			},
			hooks: Hooks{SinkReadWait: 200 * time.Millisecond},
		})
	t.Cleanup(hs.free)
	id, pid := h.create("bounded")
	h.waitState(pid, api.JobState_RUNNING)
	if r := h.ask(h.mgr, &api.PauseJobRequest{Name: "bounded"}).(*api.JobResponse); r.Error != nil {
		t.Fatalf("pause: %v", r.Error)
	}
	hs.hang.Store(id)
	r := h.ask(h.mgr, &api.ResumeJobRequest{Name: "bounded"}).(*api.JobResponse)
	if r.GetError().GetCode() != api.ErrorCode_FAILED_PRECONDITION || !strings.Contains(r.GetError().GetMessage(), "did not answer") {
		t.Fatalf("resume while the sink's read hangs = %v, want FAILED_PRECONDITION naming the unanswered sink", r)
	}
	hs.hang.Store(0)
	hs.free() // the late answer comes, and is dropped
	holds(t, 200*time.Millisecond, func() (bool, string) {
		st := h.ask(pid, &InspectJob{}).(*JobRuntime).State
		return st == api.JobState_PAUSED, fmt.Sprintf("the late answer of a failed resume moved the job to %s", st)
	})
	if r := h.ask(h.mgr, &api.ResumeJobRequest{Name: "bounded"}).(*api.JobResponse); r.Error != nil {
		t.Fatalf("resume once the sink answers: %v", r.Error)
	}
	h.waitState(pid, api.JobState_RUNNING)
}
