package actors

import (
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
)

// alterRows alters a job's max_batch_rows through an update mask.
func alterRows(t *testing.T, h *harness, name string, rows int64) {
	t.Helper()
	resp := h.ask(h.mgr, &api.AlterJobRequest{Name: name, Spec: &api.JobSpec{MaxBatchRows: rows},
		UpdateMask: []string{"max_batch_rows"}}).(*api.JobResponse)
	if resp.Error != nil {
		t.Fatalf("alter: %v", resp.Error)
	}
}

func showJob(t *testing.T, h *harness, name string) *api.JobInfo {
	t.Helper()
	resp := h.ask(h.mgr, &api.ShowJobRequest{Name: name}).(*api.JobResponse)
	if resp.Error != nil {
		t.Fatalf("show: %v", resp.Error)
	}
	return resp.Job
}

// TestAlterKeepsPauseReason: an alter is journaled (USER_ALTER, in the
// history) but does not replace the state's reason: a user-paused job stays
// PAUSED (USER_PAUSE), in `job show` and after a restart.
func TestAlterKeepsPauseReason(t *testing.T) {
	fs := vfs.NewMem()
	check := func(t *testing.T, h *harness, when string) {
		t.Helper()
		info := showJob(t, h, "keep")
		s := info.GetSummary()
		if s.GetState() != api.JobState_PAUSED || s.GetReason() != api.Reason_USER_PAUSE {
			t.Fatalf("%s: %s (%s: %s), want PAUSED (USER_PAUSE)", when, s.GetState(), s.GetReason(), s.GetReasonMessage())
		}
		if info.GetSpec().GetMaxBatchRows() != 77 {
			t.Fatalf("%s: max_batch_rows %d, want 77", when, info.GetSpec().GetMaxBatchRows())
		}
		if n := count(info.GetHistory(), api.Reason_USER_ALTER); n != 1 {
			t.Fatalf("%s: %d USER_ALTER entries in the history, want 1", when, n)
		}
	}
	// The first node's harness is closed when its subtest ends.
	t.Run("alter", func(t *testing.T) {
		h := newHarnessWith(t, fs, &quietSource{parts: []int32{0}}, Settings{})
		id, _ := h.create("keep")
		h.waitState(h.jobPID(id), api.JobState_RUNNING)
		if r := h.ask(h.mgr, &api.PauseJobRequest{Name: "keep"}).(*api.JobResponse); r.Error != nil {
			t.Fatal(r.Error)
		}
		alterRows(t, h, "keep", 77)
		check(t, h, "after the alter")
		list := h.ask(h.mgr, &api.ListJobsRequest{}).(*api.ListJobsResponse)
		if r := list.GetJobs()[0].GetReason(); r != api.Reason_USER_PAUSE {
			t.Fatalf("listing reason %s, want USER_PAUSE", r)
		}
	})
	if t.Failed() {
		return
	}
	// Restart on the same store.
	h2 := newHarnessWith(t, fs, &quietSource{parts: []int32{0}}, Settings{})
	check(t, h2, "after a restart")
}

// TestAlterKeepsTransientPause: a job paused for a transient reason and
// then altered still auto-resumes.
func TestAlterKeepsTransientPause(t *testing.T) {
	src := &flakySource{quietSource: quietSource{parts: []int32{0}}}
	src.failing.Store(true)
	h := newHarnessWith(t, vfs.NewMem(), src, Settings{
		SourceRetryBase: 5 * time.Millisecond, SourceRetryLimit: 1,
		AutoResumeBase: 300 * time.Millisecond, AutoResumeMax: time.Second, AutoResumeQuiet: time.Minute,
	})
	_, pid := h.create("transient")
	h.waitState(pid, api.JobState_PAUSED)
	if r := showJob(t, h, "transient").GetSummary().GetReason(); r != api.Reason_SOURCE_UNREACHABLE {
		t.Fatalf("paused for %s, want SOURCE_UNREACHABLE", r)
	}
	alterRows(t, h, "transient", 55)
	if r := showJob(t, h, "transient").GetSummary().GetReason(); r != api.Reason_SOURCE_UNREACHABLE {
		t.Fatalf("after the alter: reason %s, want SOURCE_UNREACHABLE", r)
	}
	src.failing.Store(false)
	h.waitState(pid, api.JobState_RUNNING)
}
