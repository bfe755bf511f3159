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
)

// readsDownSink fails the reads a show or a listing makes of the sink
// (ErrorRows, Progress) with sink.ErrUnavailable while down is set, as a
// PostgreSQL sink does while its server is stopped.
type readsDownSink struct {
	sink.Sink
	down atomic.Bool
}

func (d *readsDownSink) ErrorRows(id uint64, n int) ([]*api.ErrorRow, error) {
	if d.down.Load() {
		return nil, fmt.Errorf("test: error rows of job %d: connection refused: %w", id, sink.ErrUnavailable)
	}
	return d.Sink.ErrorRows(id, n)
}

func (d *readsDownSink) Progress(id uint64) (*sink.Progress, error) {
	if d.down.Load() {
		return nil, fmt.Errorf("test: progress of job %d: connection refused: %w", id, sink.ErrUnavailable)
	}
	return d.Sink.Progress(id)
}

// stopJob stops a job and waits until the manager lists it STOPPED.
func stopJob(t *testing.T, h *harness, name string) {
	t.Helper()
	if resp := h.ask(h.mgr, &api.StopJobRequest{Name: name}).(*api.JobResponse); resp.Error != nil {
		t.Fatalf("stop %s: %v", name, resp.Error)
	}
	poll(t, 10*time.Second, func() (bool, string) {
		for _, s := range h.ask(h.mgr, &api.ListJobsRequest{}).(*api.ListJobsResponse).GetJobs() {
			if s.GetName() == name {
				return s.GetState() == api.JobState_STOPPED, fmt.Sprintf("%s is %s", name, s.GetState())
			}
		}
		return false, name + " not listed"
	})
}

// showAnswer asks the manager to show a job and returns its answer, which
// must not be an error.
func showAnswer(t *testing.T, h *harness, name string) *api.JobInfo {
	t.Helper()
	res, err := h.system.Root.RequestFuture(h.mgr, &api.ShowJobRequest{Name: name}, 4*showSinkWait).Result()
	if err != nil {
		t.Fatalf("show %s: no answer: %v", name, err)
	}
	resp := res.(*api.JobResponse)
	if resp.GetError() != nil || resp.GetJob() == nil {
		t.Fatalf("show %s = %v, want the job shown", name, resp.GetError())
	}
	return resp.GetJob()
}

// TestShowWhileDatabaseDown (issue 25, D7): while a job's database refuses
// connections, showing the job answers with what is known (state, spec,
// history, positions and statistics of a live job) and says why the error
// rows, and for a stopped job the progress, could not be read; listings
// answer, after a restart too (a stopped job's loaded rows are read from
// its sink); once the database answers, the show is whole again.
func TestShowWhileDatabaseDown(t *testing.T) {
	mem := vfs.NewCrashableMem()
	ds := &readsDownSink{}
	wrap := func(st *persistence.Store) sink.Sink {
		ds.Sink = st.Sink()
		return ds
	}
	h := newHarnessStore(t, mem, &quietSource{parts: []int32{0}}, Settings{}, wrap)
	liveID, live := h.create("live")
	h.create("ended")
	h.waitState(live, api.JobState_RUNNING)
	stopJob(t, h, "ended")

	check := func(h *harness, when string) {
		t.Helper()
		info := showAnswer(t, h, "live")
		if s := info.GetSummary(); s.GetState() == api.JobState_STOPPED || info.GetSpec() == nil || len(info.GetHistory()) == 0 ||
			len(info.GetPartitions()) != 1 || info.GetStats() == nil {
			t.Errorf("%s: live job shown as %v: want its state, spec, history, partitions and statistics", when, info)
		}
		if u := info.GetErrorRowsUnavailable(); !strings.Contains(u, "connection refused") || info.GetProgressUnavailable() != "" {
			t.Errorf("%s: live job: error rows unavailable %q, progress unavailable %q; want the refusal, and the progress (memory) shown",
				when, u, info.GetProgressUnavailable())
		}
		info = showAnswer(t, h, "ended")
		if s := info.GetSummary(); s.GetState() != api.JobState_STOPPED || info.GetSpec() == nil || len(info.GetHistory()) == 0 {
			t.Errorf("%s: stopped job shown as %v: want its state, spec and history", when, info)
		}
		if !strings.Contains(info.GetProgressUnavailable(), "connection refused") || !strings.Contains(info.GetErrorRowsUnavailable(), "connection refused") {
			t.Errorf("%s: stopped job: progress unavailable %q, error rows unavailable %q; want the refusal in both",
				when, info.GetProgressUnavailable(), info.GetErrorRowsUnavailable())
		}
		list := h.ask(h.mgr, &api.ListJobsRequest{}).(*api.ListJobsResponse)
		if list.GetError() != nil || len(list.GetJobs()) != 2 {
			t.Errorf("%s: listing = %v (%d jobs), want both jobs", when, list.GetError(), len(list.GetJobs()))
		}
	}
	ds.down.Store(true)
	check(h, "database down")

	// The node restarted while the database is down: the stopped job's
	// loaded rows, which listings read from its sink, cannot be read.
	ds.down.Store(false) // the live job loads its progress as it starts
	h2 := newHarnessStore(t, mem.CrashClone(vfs.CrashCloneCfg{}), &quietSource{parts: []int32{0}}, Settings{}, wrap)
	poll(t, 10*time.Second, func() (bool, string) {
		// Dead letters until recovery has respawned the job.
		res, err := h2.system.Root.RequestFuture(h2.jobPID(liveID), &InspectJob{}, 5*time.Second).Result()
		if err != nil {
			return false, err.Error()
		}
		return res.(*JobRuntime).State == api.JobState_RUNNING, fmt.Sprintf("after the restart: %s", res.(*JobRuntime).State)
	})
	ds.down.Store(true)
	check(h2, "restarted, database down")

	ds.down.Store(false)
	for _, name := range []string{"live", "ended"} {
		if info := showAnswer(t, h2, name); info.GetErrorRowsUnavailable() != "" || info.GetProgressUnavailable() != "" || info.GetStats() == nil {
			t.Errorf("database back: %s shown with error rows unavailable %q, progress unavailable %q, stats %v",
				name, info.GetErrorRowsUnavailable(), info.GetProgressUnavailable(), info.GetStats())
		}
	}
}

// hangSink blocks the reads a show or a listing makes of one job's sink
// (ErrorRows, Progress of job hang) until release is closed, as a
// database behind a dropped network does; entered hears of each.
type hangSink struct {
	sink.Sink
	hang    atomic.Uint64 // the job whose reads block; 0 none
	entered chan string
	release chan struct{}
}

func (s *hangSink) block(id uint64, what string) {
	if s.hang.Load() != id {
		return
	}
	select {
	case s.entered <- what:
	default:
	}
	<-s.release
}

func (s *hangSink) ErrorRows(id uint64, n int) ([]*api.ErrorRow, error) {
	s.block(id, "error rows")
	return s.Sink.ErrorRows(id, n)
}

func (s *hangSink) Progress(id uint64) (*sink.Progress, error) {
	s.block(id, "progress")
	return s.Sink.Progress(id)
}

// TestShowSinkHangs (issue 25, D7): a sink that does not answer blocks no
// mailbox. While a read of a live job's error rows hangs, its actor
// answers; the show answers with the error rows marked unavailable (the
// read is still hanging: the wait is bounded, not the read). The same for
// a stopped job, which the manager shows, and for a listing after a
// restart, which reads a stopped job's loaded rows: the manager answers
// meanwhile.
func TestShowSinkHangs(t *testing.T) {
	mem := vfs.NewCrashableMem()
	hs := &hangSink{entered: make(chan string, 64), release: make(chan struct{})}
	wrap := func(st *persistence.Store) sink.Sink {
		hs.Sink = st.Sink()
		return hs
	}
	h := newHarnessStore(t, mem, &quietSource{parts: []int32{0}}, Settings{}, wrap)
	liveID, live := h.create("live")
	endedID, _ := h.create("ended")
	h.waitState(live, api.JobState_RUNNING)
	stopJob(t, h, "ended")
	var released atomic.Bool
	release := func() {
		if released.CompareAndSwap(false, true) {
			close(hs.release)
		}
	}
	t.Cleanup(release) // before the harnesses stop (cleanups run last first)
	entered := func(what string) {
		t.Helper()
		select {
		case got := <-hs.entered:
			t.Logf("%s: the read of %s hangs", what, got)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no read of the sink began", what)
		}
	}

	hs.hang.Store(liveID)
	show := h.system.Root.RequestFuture(h.mgr, &api.ShowJobRequest{Name: "live"}, 4*showSinkWait)
	entered("show live")
	if st := h.ask(live, &InspectJob{}).(*JobRuntime).State; st != api.JobState_RUNNING {
		t.Fatalf("live job is %s while its show waits", st)
	}
	res, err := show.Result()
	if err != nil {
		t.Fatalf("show of a job whose sink hangs: no answer: %v", err)
	}
	info := res.(*api.JobResponse).GetJob()
	if u := info.GetErrorRowsUnavailable(); !strings.Contains(u, "did not answer") || info.GetSummary().GetState() != api.JobState_RUNNING {
		t.Fatalf("show of a job whose sink hangs = %v (error rows unavailable %q), want RUNNING with the error rows marked unanswered",
			res, u)
	}

	hs.hang.Store(endedID)
	show = h.system.Root.RequestFuture(h.mgr, &api.ShowJobRequest{Name: "ended"}, 4*showSinkWait)
	entered("show ended")
	if n := h.ask(h.mgr, &api.PingRequest{}).(*api.PingResponse).GetJobs(); n != 2 {
		t.Fatalf("manager answers %d jobs while a show waits, want 2", n)
	}
	if res, err = show.Result(); err != nil {
		t.Fatalf("show of a stopped job whose sink hangs: no answer: %v", err)
	}
	info = res.(*api.JobResponse).GetJob()
	if !strings.Contains(info.GetProgressUnavailable(), "did not answer") || info.GetSummary().GetState() != api.JobState_STOPPED {
		t.Fatalf("show of a stopped job whose sink hangs = %v, want STOPPED with its progress marked unanswered", res)
	}

	// Restarted: a listing reads the stopped job's loaded rows.
	h2 := newHarnessStore(t, mem.CrashClone(vfs.CrashCloneCfg{}), &quietSource{parts: []int32{0}}, Settings{}, wrap)
	list := h2.system.Root.RequestFuture(h2.mgr, &api.ListJobsRequest{}, 4*showSinkWait)
	entered("listing")
	if _, err := h2.system.Root.RequestFuture(h2.mgr, &api.PingRequest{}, 5*time.Second).Result(); err != nil {
		t.Fatalf("manager does not answer while a listing waits on the sink: %v", err)
	}
	res, err = list.Result()
	if err != nil {
		t.Fatalf("listing while a stopped job's sink hangs: no answer: %v", err)
	}
	if jobs := res.(*api.ListJobsResponse).GetJobs(); len(jobs) != 2 {
		t.Fatalf("listing while a stopped job's sink hangs = %v, want both jobs", res)
	}
	// Every answer above came while the reads hung: released only now.
	release()
}
