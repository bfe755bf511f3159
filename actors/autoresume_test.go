package actors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore"
	"github.com/loadnode/loadnode/persistence"
)

// flakySource fails its look-ups while failing is set.
type flakySource struct {
	quietSource
	failing atomic.Bool
}

func (s *flakySource) Partitions(ctx context.Context) ([]int32, error) {
	if s.failing.Load() {
		return nil, errors.New("dial tcp 127.0.0.1:9: connection refused")
	}
	return s.quietSource.Partitions(ctx)
}

func (h *harness) journal(id uint64) []*api.Transition {
	h.t.Helper()
	j, err := h.store.Journal(id)
	if err != nil {
		h.t.Fatal(err)
	}
	return j
}

func count(hist []*api.Transition, r api.Reason) int {
	n := 0
	for _, t := range hist {
		if t.Reason == r {
			n++
		}
	}
	return n
}

// TestAutoResume: a source that stays unreachable pauses the job with
// SOURCE_UNREACHABLE; the job is resumed automatically with a doubling
// back-off, and runs once the source is back. A user pause is never
// resumed automatically.
func TestAutoResume(t *testing.T) {
	src := &flakySource{quietSource: quietSource{parts: []int32{0}}}
	src.failing.Store(true)
	h := newHarnessWith(t, vfs.NewMem(), src, Settings{
		SourceRetryBase: 5 * time.Millisecond, SourceRetryLimit: 2,
		AutoResumeBase: 100 * time.Millisecond, AutoResumeMax: 2 * time.Second, AutoResumeQuiet: time.Minute,
	})
	id, _ := h.create("flaky")
	h.waitJournal(id, "a second auto-resume", func(j []*api.Transition) bool {
		return count(j, api.Reason_AUTO_RESUME) >= 2
	})
	src.failing.Store(false)
	h.waitState(h.jobPID(id), api.JobState_RUNNING)

	// The journal tells the story, and the back-off grows (its exact
	// shape: TestDoubling, TestAutoResumePlan, TestPlanAutoResumeClock).
	var pauses, resumes []time.Time
	for _, tr := range h.journal(id) {
		switch {
		case tr.To == api.JobState_PAUSED:
			if tr.Reason != api.Reason_SOURCE_UNREACHABLE {
				t.Fatalf("pause reason %s, want SOURCE_UNREACHABLE", tr.Reason)
			}
			pauses = append(pauses, time.UnixMilli(tr.TimeUnixMs))
		case tr.Reason == api.Reason_AUTO_RESUME:
			resumes = append(resumes, time.UnixMilli(tr.TimeUnixMs))
		}
	}
	if len(pauses) < 2 || len(resumes) < 2 {
		t.Fatalf("pauses %d, resumes %d", len(pauses), len(resumes))
	}
	first, second := resumes[0].Sub(pauses[0]), resumes[1].Sub(pauses[1])
	if first < 90*time.Millisecond || second < 190*time.Millisecond {
		t.Fatalf("auto-resume delays %s then %s; want >= 100ms then >= 200ms", first, second)
	}

	// A user pause stays.
	h.ask(h.mgr, &api.PauseJobRequest{Name: "flaky"})
	// For 5x the base back-off, the job stays paused and no auto-resume is
	// journaled.
	holds(t, 500*time.Millisecond, func() (bool, string) {
		in := h.ask(h.jobPID(id), &InspectJob{}).(*JobRuntime)
		n := count(h.journal(id), api.Reason_AUTO_RESUME)
		return in.State == api.JobState_PAUSED && n == len(resumes),
			fmt.Sprintf("a user pause was resumed: %s, %d auto-resumes (before %d)", in.State, n, len(resumes))
	})
}

func TestTransientReasons(t *testing.T) {
	for r, want := range map[api.Reason]bool{
		api.Reason_SOURCE_UNREACHABLE: true, api.Reason_INTERNAL_ERROR: true,
		api.Reason_STORE_FAILURE: true, api.Reason_RESTART_BUDGET_EXHAUSTED: true,
		api.Reason_USER_PAUSE: false, api.Reason_ERROR_ROWS_EXCEEDED: false,
		api.Reason_OFFSET_OUT_OF_RANGE: false, api.Reason_SOURCE_CONFIG_ERROR: false,
		api.Reason_SINK_TABLE_CHANGED: false, api.Reason_SUPERSEDED: false,
	} {
		if transient(r) != want {
			t.Errorf("transient(%s) = %v, want %v", r, !want, want)
		}
	}
}

func TestHealth(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	info := func(state api.JobState, reason api.Reason, lag int64, lastMs int64) *api.JobInfo {
		return &api.JobInfo{Summary: &api.JobSummary{State: state, Reason: reason}, TotalLag: lag, LastProgressUnixMs: lastMs}
	}
	retrying := func(i *api.JobInfo) *api.JobInfo { i.Retries = 3; return i }
	cases := []struct {
		in   *api.JobInfo
		want string
	}{
		{info(api.JobState_RUNNING, api.Reason_SCHEDULED, 0, 0), "healthy"},
		{info(api.JobState_RUNNING, api.Reason_SCHEDULED, -1, 0), "healthy"},
		{info(api.JobState_RUNNING, api.Reason_SCHEDULED, 50, 999_000), "healthy"},
		{info(api.JobState_RUNNING, api.Reason_SCHEDULED, 5000, 999_000), "lagging"},
		{info(api.JobState_RUNNING, api.Reason_SCHEDULED, 5, 900_000), "stalled"},
		{info(api.JobState_NEED_SCHEDULE, api.Reason_RECOVERED, 5, 900_000), "stalled"},
		{info(api.JobState_PAUSED, api.Reason_USER_PAUSE, 5, 0), "paused"},
		{info(api.JobState_PAUSED, api.Reason_SOURCE_UNREACHABLE, 5, 0), "paused"},
		{info(api.JobState_PAUSED, api.Reason_USER_ALTER, 5, 0), "paused"},
		{info(api.JobState_PAUSED, api.Reason_SOURCE_CONFIG_ERROR, 5, 0), "failed"},
		{info(api.JobState_PAUSED, api.Reason_OFFSET_OUT_OF_RANGE, 5, 0), "failed"},
		{info(api.JobState_PAUSED, api.Reason_ERROR_ROWS_EXCEEDED, 5, 0), "failed"},
		{info(api.JobState_STOPPED, api.Reason_USER_STOP, 0, 0), "stopped"},
		{info(api.JobState_CANCELLED, api.Reason_INTERNAL_ERROR, 0, 0), "failed"},
		// Retrying a source error is failing, whatever the lag says.
		{retrying(info(api.JobState_NEED_SCHEDULE, api.Reason_CREATED, -1, 0)), "failing"},
		{retrying(info(api.JobState_RUNNING, api.Reason_SCHEDULED, 0, 999_000)), "failing"},
		{retrying(info(api.JobState_RUNNING, api.Reason_SCHEDULED, 5, 900_000)), "failing"},
		{retrying(info(api.JobState_PAUSED, api.Reason_SOURCE_UNREACHABLE, 5, 0)), "paused"},
		{retrying(info(api.JobState_STOPPED, api.Reason_USER_STOP, 0, 0)), "stopped"},
	}
	for _, c := range cases {
		if got := health(c.in, now, time.Minute, 1000); got != c.want {
			t.Errorf("health(%s %s lag=%d last=%d retries=%d) = %s, want %s", c.in.Summary.State, c.in.Summary.Reason, c.in.TotalLag, c.in.LastProgressUnixMs, c.in.Retries, got, c.want)
		}
	}
}

// at is a journal entry at now+off.
func at(now time.Time, off time.Duration, from, to api.JobState, r api.Reason) *api.Transition {
	return &api.Transition{TimeUnixMs: now.Add(off).UnixMilli(), From: from, To: to, Reason: r}
}

// pausedHistory is a journal of a job created at now+start that was paused
// with SOURCE_UNREACHABLE and auto-resumed at each of resumes (offsets from
// now, oldest first), then paused once more at now+pause.
func pausedHistory(now time.Time, start time.Duration, resumes []time.Duration, pause time.Duration) []*api.Transition {
	const (
		need, run, paused = api.JobState_NEED_SCHEDULE, api.JobState_RUNNING, api.JobState_PAUSED
	)
	h := []*api.Transition{at(now, start, api.JobState_JOB_STATE_UNSPECIFIED, need, api.Reason_CREATED)}
	for _, r := range resumes {
		h = append(h,
			at(now, r-2*time.Second, need, run, api.Reason_SCHEDULED),
			at(now, r-time.Second, run, paused, api.Reason_SOURCE_UNREACHABLE),
			at(now, r, paused, need, api.Reason_AUTO_RESUME))
	}
	return append(h,
		at(now, pause-time.Second, need, run, api.Reason_SCHEDULED),
		at(now, pause, run, paused, api.Reason_SOURCE_UNREACHABLE))
}

// TestAutoResumePlan: the plan counts the auto-resumes within the quiet
// period only, and dates the pause by the last change of state (an alter
// of the paused job does not move it).
func TestAutoResumePlan(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	const quiet = time.Hour
	min := func(m int) time.Duration { return time.Duration(m) * time.Minute }
	alter := func(h []*api.Transition, off time.Duration) []*api.Transition {
		a := at(now, off, api.JobState_PAUSED, api.JobState_PAUSED, api.Reason_USER_ALTER)
		a.StateReason = api.Reason_SOURCE_UNREACHABLE
		return append(h, a)
	}
	cases := []struct {
		name      string
		hist      []*api.Transition
		wantN     int
		wantPause time.Duration // from now
	}{
		{"first pause", pausedHistory(now, -min(10), nil, -min(1)), 0, -min(1)},
		{"three recent", pausedHistory(now, -min(50), []time.Duration{-min(40), -min(30), -min(20)}, -min(1)), 3, -min(1)},
		{"old ones do not count", pausedHistory(now, -min(300), []time.Duration{-min(200), -min(90), -min(61), -min(30)}, -min(1)), 1, -min(1)},
		{"one just outside the quiet period", pausedHistory(now, -min(100), []time.Duration{-quiet, -min(59)}, -min(1)), 1, -min(1)},
		{"all old", pausedHistory(now, -min(300), []time.Duration{-min(200), -min(100)}, -min(1)), 0, -min(1)},
		{"an alter after the pause", alter(pausedHistory(now, -min(50), []time.Duration{-min(20)}, -min(5)), -min(2)), 1, -min(5)},
		{"two alters after the pause", alter(alter(pausedHistory(now, -min(50), nil, -min(5)), -min(3)), -time.Second), 0, -min(5)},
	}
	for _, c := range cases {
		n, pausedAt := autoResumePlan(c.hist, now, quiet)
		if n != c.wantN || !pausedAt.Equal(now.Add(c.wantPause)) {
			t.Errorf("%s: autoResumePlan = %d, paused %s before now; want %d, %s before now",
				c.name, n, now.Sub(pausedAt), c.wantN, -c.wantPause)
		}
	}
}

// planRecorder is a slog.Handler that keeps the "auto-resume planned"
// records: the job they belong to, the attempt and the wait.
type planRecorder struct {
	attrs []slog.Attr
	mu    *sync.Mutex
	plans map[uint64][]plannedResume
}

type plannedResume struct {
	attempt int64
	in      time.Duration
}

func (p *planRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (p *planRecorder) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "auto-resume planned" {
		return nil
	}
	var job uint64
	var pr plannedResume
	visit := func(a slog.Attr) bool {
		switch a.Key {
		case "job":
			job = a.Value.Uint64()
		case "attempt":
			pr.attempt = a.Value.Int64()
		case "in":
			pr.in = a.Value.Duration()
		}
		return true
	}
	for _, a := range p.attrs {
		visit(a)
	}
	r.Attrs(visit)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.plans[job] = append(p.plans[job], pr)
	return nil
}

func (p *planRecorder) WithAttrs(as []slog.Attr) slog.Handler {
	q := *p
	q.attrs = append(slices.Clone(p.attrs), as...)
	return &q
}

func (p *planRecorder) WithGroup(string) slog.Handler { return p }

func (p *planRecorder) get(id uint64) []plannedResume {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.plans[id])
}

// TestPlanAutoResumeClock drives planAutoResume through recovered job
// actors on an injected clock: each job's journal (written beforehand, in
// the clock's time) leaves it paused for a transient reason, and the wait
// each plans is min(10s * 2^n, 300s) after its pause, where n counts the
// auto-resumes of the last hour only; an alter after the pause does not
// move it.
func TestPlanAutoResumeClock(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	min := func(m int) time.Duration { return time.Duration(m) * time.Minute }
	sec := func(s int) time.Duration { return time.Duration(s) * time.Second }
	recent := func(n int) []time.Duration {
		var r []time.Duration
		for i := range n {
			r = append(r, -min(50-i))
		}
		return r
	}
	withAlter := func(h []*api.Transition) []*api.Transition {
		a := at(now, -sec(2), api.JobState_PAUSED, api.JobState_PAUSED, api.Reason_USER_ALTER)
		a.StateReason = api.Reason_SOURCE_UNREACHABLE // the job stays paused for it
		return append(h, a)
	}
	cases := []struct {
		name    string
		hist    []*api.Transition
		attempt int64
		in      time.Duration
	}{
		{"first", pausedHistory(now, -min(55), nil, -sec(3)), 1, sec(7)},
		{"second", pausedHistory(now, -min(55), recent(1), -sec(3)), 2, sec(17)},
		{"third", pausedHistory(now, -min(55), recent(2), -sec(3)), 3, sec(37)},
		{"fourth", pausedHistory(now, -min(55), recent(3), -sec(3)), 4, sec(77)},
		{"fifth", pausedHistory(now, -min(55), recent(4), -sec(3)), 5, sec(157)},
		{"capped", pausedHistory(now, -min(55), recent(5), -sec(3)), 6, sec(297)},
		{"capped again", pausedHistory(now, -min(55), recent(9), -sec(3)), 10, sec(297)},
		{"quiet period reset", pausedHistory(now, -min(300), []time.Duration{-min(200), -min(150), -min(100), -min(61)}, -sec(3)), 1, sec(7)},
		{"partly reset", pausedHistory(now, -min(300), []time.Duration{-min(200), -min(150), -min(30)}, -sec(3)), 2, sec(17)},
		{"alter after the pause", withAlter(pausedHistory(now, -min(55), recent(2), -sec(30))), 3, sec(10)},
	}

	fs := vfs.NewMem()
	st, err := persistence.Open(persistence.Options{Dir: "db", FS: fs, OnFatal: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	meta := st.Meta()
	for i, c := range cases {
		spec := testSpec(fmt.Sprintf("plan%d", i))
		if err := (testSpecs{}).Prepare(spec); err != nil {
			t.Fatal(err)
		}
		id := uint64(i + 1)
		first := c.hist[0]
		first.Seq = 1
		errs := meta.CreateJobs([]metastore.NewJob{{Record: &api.JobRecord{Id: id, Name: spec.Name, Spec: spec, CreatedUnixMs: first.TimeUnixMs},
			First: first, NewTable: spec.Table}})
		if errs[0] != nil {
			t.Fatal(errs[0])
		}
		for s, tr := range c.hist[1:] {
			tr.Seq = uint64(s + 2)
			if err := meta.AppendTransition(id, tr); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	rec := &planRecorder{mu: &sync.Mutex{}, plans: map[uint64][]plannedResume{}}
	open := func(*api.JobSpec) (Source, error) { return adapt(&quietSource{parts: []int32{0}}), nil }
	newHarnessOpts(t, fs, open, Settings{
		AutoResumeBase: 10 * time.Second, AutoResumeMax: 300 * time.Second, AutoResumeQuiet: time.Hour,
	}, harnessOpts{now: func() time.Time { return now }, logs: rec})
	for i, c := range cases {
		id := uint64(i + 1)
		var got []plannedResume
		poll(t, 10*time.Second, func() (bool, string) {
			got = rec.get(id)
			return len(got) > 0, fmt.Sprintf("%s: job %d planned no auto-resume", c.name, id)
		})
		if want := (plannedResume{attempt: c.attempt, in: c.in}); len(got) != 1 || got[0] != want {
			t.Errorf("%s: planned %+v, want one plan %+v", c.name, got, want)
		}
	}
}
