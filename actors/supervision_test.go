package actors

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/supervisor"
)

func (h *harness) waitJournal(id uint64, what string, cond func([]*api.Transition) bool) []*api.Transition {
	h.t.Helper()
	var j []*api.Transition
	poll(h.t, 20*time.Second, func() (bool, string) {
		j = h.journal(id)
		return cond(j), fmt.Sprintf("waiting for %s; journal: %v", what, j)
	})
	return j
}

func last(j []*api.Transition) *api.Transition { return j[len(j)-1] }

// TestRestartBudget: a job actor that keeps crashing is restarted (each time
// reloading from the store) until its budget is spent; it then does not
// vanish: the manager durably pauses the job with RESTART_BUDGET_EXHAUSTED,
// and the job is auto-resumed and runs again.
func TestRestartBudget(t *testing.T) {
	h := newHarnessWith(t, vfs.NewMem(), &quietSource{parts: []int32{0}}, Settings{
		JobSupervision: supervisor.Policy{MaxRestarts: 3, Window: time.Minute, InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond},
		AutoResumeBase: 200 * time.Millisecond, AutoResumeMax: time.Second, AutoResumeQuiet: time.Minute,
	})
	id, pid := h.create("crashy")
	h.waitState(pid, api.JobState_RUNNING)
	for range 4 {
		h.system.Root.Send(pid, &Crash{Reason: "test"})
	}
	h.waitJournal(id, "pause with RESTART_BUDGET_EXHAUSTED", func(j []*api.Transition) bool {
		return count(j, api.Reason_RESTART_BUDGET_EXHAUSTED) == 1
	})
	j := h.waitJournal(id, "auto-resume and RUNNING", func(j []*api.Transition) bool {
		return count(j, api.Reason_AUTO_RESUME) == 1 && last(j).To == api.JobState_RUNNING
	})
	// Restarts of the actor reloaded RUNNING from the store and turned it
	// into NEED_SCHEDULE each time: never RUNNING without tasks.
	if n := count(j, api.Reason_RECOVERED); n < 1 {
		t.Fatalf("%d RECOVERED transitions, want the restart that found RUNNING to journal it: %v", n, j)
	}
	// Running again means reading again: exactly one task (one partition,
	// one wanted), and it stays the only one.
	h.waitTasks(id, api.JobState_RUNNING, 1)
	// A pause stops them all.
	h.ask(h.mgr, &api.PauseJobRequest{Name: "crashy"})
	h.waitTasks(id, api.JobState_PAUSED, 0)
}

// runtime asks job id's actor for its runtime view.
func (h *harness) runtime(id uint64) *JobRuntime {
	h.t.Helper()
	return h.ask(h.jobPID(id), &InspectJob{}).(*JobRuntime)
}

// waitTasks waits until job id is in state with n task children, then
// checks that it stays so for 200ms (no late task, no leftover of an old
// generation still stopping).
func (h *harness) waitTasks(id uint64, state api.JobState, n int) {
	h.t.Helper()
	cond := func() (bool, string) {
		rt := h.runtime(id)
		return rt.State == state && len(rt.Tasks) == n,
			fmt.Sprintf("job %s with %d tasks, want %s with %d", rt.State, len(rt.Tasks), state, n)
	}
	poll(h.t, 10*time.Second, cond)
	holds(h.t, 200*time.Millisecond, cond)
}

// panicSource's readers panic while panicking is set.
type panicSource struct {
	quietSource
	panicking atomic.Bool
	reads     atomic.Int32
}

func (s *panicSource) NewReader(start map[int32]sources.Start) (sources.Reader, error) {
	return &panicReader{s: s}, nil
}

type panicReader struct{ s *panicSource }

func (r *panicReader) Read(ctx context.Context, lim sources.Limits) (*sources.Batch, error) {
	r.s.reads.Add(1)
	if r.s.panicking.Load() {
		panic("decoder bug")
	}
	<-ctx.Done()
	return &sources.Batch{}, ctx.Err()
}
func (r *panicReader) Close() {}

// TestReadPanicIsAFailure: a panic in a task's read goroutine is recovered
// and reported to the job as a failure; the node survives, the job retries,
// pauses with INTERNAL_ERROR when it keeps happening, and auto-resumes.
func TestReadPanicIsAFailure(t *testing.T) {
	src := &panicSource{quietSource: quietSource{parts: []int32{0}}}
	src.panicking.Store(true)
	h := newHarnessWith(t, vfs.NewMem(), src, Settings{
		SourceRetryBase: time.Millisecond, SourceRetryLimit: 2,
		AutoResumeBase: 100 * time.Millisecond, AutoResumeMax: time.Second, AutoResumeQuiet: time.Minute,
	})
	id, _ := h.create("panicky")
	j := h.waitJournal(id, "pause with INTERNAL_ERROR", func(j []*api.Transition) bool {
		return last(j).To == api.JobState_PAUSED
	})
	if r := last(j).Reason; r != api.Reason_INTERNAL_ERROR {
		t.Fatalf("paused with %s, want INTERNAL_ERROR: %v", r, j)
	}
	if src.reads.Load() < 3 {
		t.Fatalf("%d reads, want >= 3 (retries)", src.reads.Load())
	}
	src.panicking.Store(false)
	h.waitJournal(id, "auto-resume and RUNNING", func(j []*api.Transition) bool {
		return count(j, api.Reason_AUTO_RESUME) >= 1 && last(j).To == api.JobState_RUNNING
	})
}
