package actors

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/supervisor"
)

// stuckSource's first reader holds its first read past its cancellation
// until release is closed, as a fetch that does not return at once when
// its task stops (a broker under faults): that task, and so its job, then
// take that long to terminate. Other readers are quiet. open counts the
// readers not closed.
type stuckSource struct {
	quietSource
	claimed   atomic.Bool
	reading   chan struct{} // closed when the first read begins
	cancelled chan struct{} // closed when the first read's context is done
	release   chan struct{}
	open      atomic.Int32
}

func newStuckSource() *stuckSource {
	return &stuckSource{quietSource: quietSource{parts: []int32{0}},
		reading: make(chan struct{}), cancelled: make(chan struct{}), release: make(chan struct{})}
}

func (s *stuckSource) NewReader(map[int32]sources.Start) (sources.Reader, error) {
	s.open.Add(1)
	return &stuckReader{s: s}, nil
}

type stuckReader struct {
	s      *stuckSource
	closed sync.Once
}

func (r *stuckReader) Read(ctx context.Context, _ sources.Limits) (*sources.Batch, error) {
	if r.s.claimed.CompareAndSwap(false, true) {
		close(r.s.reading)
		<-ctx.Done()
		close(r.s.cancelled)
		<-r.s.release
	}
	<-ctx.Done()
	return &sources.Batch{}, ctx.Err()
}

func (r *stuckReader) Close() { r.closed.Do(func() { r.s.open.Add(-1) }) }

// restartSignal is a supervisor strategy that reports every restart it
// has sent (after sending it) on restarted.
type restartSignal struct {
	inner     actor.SupervisorStrategy
	restarted chan *actor.PID
}

func (r restartSignal) HandleFailure(system *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, rs *actor.RestartStatistics, reason, msg any) {
	r.inner.HandleFailure(system, signalingSupervisor{Supervisor: sup, restarted: r.restarted}, child, rs, reason, msg)
}

type signalingSupervisor struct {
	actor.Supervisor
	restarted chan *actor.PID
}

func (s signalingSupervisor) RestartChildren(pids ...*actor.PID) {
	s.Supervisor.RestartChildren(pids...)
	for _, pid := range pids {
		s.restarted <- pid
	}
}

// await fails the test unless ch is closed within 10 s.
func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// pingManager fails the test unless the manager answers a ping.
func (h *harness) pingManager(when string) {
	h.t.Helper()
	res, err := h.system.Root.RequestFuture(h.mgr, &api.PingRequest{}, 5*time.Second).Result()
	if err != nil {
		h.t.Fatalf("%s: the manager does not answer a ping: %v", when, err)
	}
	if _, ok := res.(*api.PingResponse); !ok {
		h.t.Fatalf("%s: the manager answered a ping with %T", when, res)
	}
}

// TestManagerRestartWithAJobRestartedWhileStopping is the chaos test's
// hang (issue 24 item 5). The manager crashes and restarts: it stops every
// job actor and waits for each one's Terminated, its mailbox suspended. A
// job actor stops its tasks and waits for theirs; meanwhile it crashes
// (a stopping actor still handles its messages), and the manager's
// supervisor restarts it after its back-off. protoactor's handleRestart
// does not look at whether the actor is stopping: the Restart turns the
// stop into a restart, the job actor comes back once its task has
// terminated instead of terminating, and the manager waited for it forever.
func TestManagerRestartWithAJobRestartedWhileStopping(t *testing.T) {
	src := newStuckSource()
	set := Settings{JobSupervision: supervisor.Policy{MaxRestarts: 10, Window: time.Minute,
		InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}}
	restarted := make(chan *actor.PID, 16)
	h := newHarnessOpts(t, vfs.NewMem(), func(*api.JobSpec) (Source, error) { return adapt(src), nil }, set, harnessOpts{
		managerProps: func(p *actor.Props) {
			p.Configure(actor.WithSupervisor(restartSignal{inner: supervisor.NewStrategy(testSettings(set).JobSupervision, nil, 1), restarted: restarted}))
		},
	})
	id, pid := h.create("stuck")
	await(t, src.reading, "the job's task to read")

	h.system.Root.Send(h.mgr, &Crash{Reason: "test"})
	// The manager's restart stopped the job actor, which stopped its task:
	// the task now waits for its read, the job for the task.
	await(t, src.cancelled, "the manager's restart to stop the job's task")
	h.system.Root.Send(pid, &Crash{Reason: "test"})
	select {
	case who := <-restarted:
		if who.Id != pid.Id {
			t.Fatalf("the supervisor restarted %s, want the job actor %s", who.Id, pid.Id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the manager's supervisor did not restart the crashed job actor")
	}
	// The Restart is in the job actor's system mailbox, ahead of its task's
	// Terminated, which the read holds back until now.
	close(src.release)

	h.pingManager("after the manager's restart")
	// The job is back under the new manager, once: its stopped actor did
	// not come back beside it.
	h.waitTasks(id, api.JobState_RUNNING, 1)
	if n := src.open.Load(); n != 1 {
		t.Fatalf("%d readers open, want 1 (the respawned job's task)", n)
	}
}

// TestRestartAfterStopLeavesTheNameAlone: a Restart that reaches a job
// actor after its stop finished (the name freed, its Terminated sent, a
// new actor of the job maybe spawned under the name) must neither run the
// job a second time nor stop again: a second stop would unregister the
// name's new owner and tell the manager a second time that the job's actor
// is gone.
func TestRestartAfterStopLeavesTheNameAlone(t *testing.T) {
	src := newStuckSource()
	close(src.release)
	h := newHarnessWith(t, vfs.NewMem(), src, Settings{AutoResumeBase: time.Millisecond, AutoResumeMax: time.Millisecond, AutoResumeQuiet: time.Minute})
	id, pid := h.create("stopped")
	h.waitTasks(id, api.JobState_RUNNING, 1)
	old, ok := h.system.ProcessRegistry.GetLocal(pid.Id)
	if !ok {
		t.Fatal("the job actor is not registered")
	}
	// Stopped from outside: the manager pauses the job and spawns a new
	// actor for it under the same name.
	h.system.Root.Stop(pid)
	poll(t, 10*time.Second, func() (bool, string) {
		cur, ok := h.system.ProcessRegistry.GetLocal(pid.Id)
		return ok && cur != old, "waiting for the job's new actor"
	})
	h.waitTasks(id, api.JobState_RUNNING, 1)
	cur, _ := h.system.ProcessRegistry.GetLocal(pid.Id)
	journaled := len(h.journal(id))

	old.SendSystemMessage(pid, &actor.Restart{})

	cond := func() (bool, string) {
		now, ok := h.system.ProcessRegistry.GetLocal(pid.Id)
		if !ok || now != cur {
			return false, "the job's new actor was unregistered"
		}
		if n := src.open.Load(); n != 1 {
			return false, fmt.Sprintf("%d readers open, want 1 (the new actor's task)", n)
		}
		if j := h.journal(id); len(j) != journaled {
			return false, fmt.Sprintf("the journal changed under the job's actor: %v", j[journaled:])
		}
		return true, ""
	}
	holds(t, 500*time.Millisecond, cond)
	h.waitTasks(id, api.JobState_RUNNING, 1)
	h.pingManager("after the restart of a stopped job actor")
}
