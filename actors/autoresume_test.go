package actors

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
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
	resp := h.ask(h.mgr, &api.CreateJobRequest{Spec: testSpec("flaky")}).(*api.JobResponse)
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	id := resp.Job.Summary.Id
	h.waitJournal(id, "a second auto-resume", func(j []*api.Transition) bool {
		return count(j, api.Reason_AUTO_RESUME) >= 2
	})
	src.failing.Store(false)
	h.waitState(h.jobPID(id), api.JobState_RUNNING)

	// The journal tells the story, and the back-off doubles.
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
		in := h.ask(h.jobPID(id), &inspectJob{}).(*jobInspection)
		n := count(h.journal(id), api.Reason_AUTO_RESUME)
		return in.state == api.JobState_PAUSED && n == len(resumes),
			fmt.Sprintf("a user pause was resumed: %s, %d auto-resumes (before %d)", in.state, n, len(resumes))
	})
}

func TestTransientReasons(t *testing.T) {
	for r, want := range map[api.Reason]bool{
		api.Reason_SOURCE_UNREACHABLE: true, api.Reason_INTERNAL_ERROR: true,
		api.Reason_STORE_FAILURE: true, api.Reason_RESTART_BUDGET_EXHAUSTED: true,
		api.Reason_USER_PAUSE: false, api.Reason_ERROR_ROWS_EXCEEDED: false,
		api.Reason_OFFSET_OUT_OF_RANGE: false, api.Reason_SOURCE_CONFIG_ERROR: false,
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
	}
	for _, c := range cases {
		if got := health(c.in, now, time.Minute, 1000); got != c.want {
			t.Errorf("health(%s %s lag=%d last=%d) = %s, want %s", c.in.Summary.State, c.in.Summary.Reason, c.in.TotalLag, c.in.LastProgressUnixMs, got, c.want)
		}
	}
}
