package actors

import (
	"strings"
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

// TestAlterMappingOnlyPaused: an alter of how records become rows (Doris's
// load properties: COLUMNS, WHERE, ...; Specs.PausedOnly) is refused
// while the job is not PAUSED, naming the fields and the state (Doris:
// "Only supports modification of PAUSED jobs"), and changes nothing; on a
// PAUSED job it is journaled and outlives a restart.
func TestAlterMappingOnlyPaused(t *testing.T) {
	fs := vfs.NewMem()
	where := &api.AlterJobRequest{Name: "mapped", Spec: &api.JobSpec{Where: "v > 1", ColumnsMapping: []string{"v"}},
		UpdateMask: []string{"where", "columns_mapping"}}
	t.Run("alter", func(t *testing.T) {
		h := newHarnessWith(t, fs, &quietSource{parts: []int32{0}}, Settings{})
		id, _ := h.create("mapped")
		h.waitState(h.jobPID(id), api.JobState_RUNNING)
		resp := h.ask(h.mgr, where).(*api.JobResponse)
		if e := resp.GetError(); e.GetCode() != api.ErrorCode_FAILED_PRECONDITION || !strings.Contains(e.GetMessage(), "RUNNING") ||
			!strings.Contains(e.GetMessage(), "columns_mapping, where") {
			t.Fatalf("alter of a RUNNING job's mapping: %v; want FAILED_PRECONDITION naming RUNNING and the fields", e)
		}
		if s := showJob(t, h, "mapped").GetSpec(); s.GetWhere() != "" || count(showJob(t, h, "mapped").GetHistory(), api.Reason_USER_ALTER) != 0 {
			t.Fatalf("a refused alter changed the job: where %q", s.GetWhere())
		}
		if r := h.ask(h.mgr, &api.PauseJobRequest{Name: "mapped"}).(*api.JobResponse); r.Error != nil {
			t.Fatal(r.Error)
		}
		h.waitState(h.jobPID(id), api.JobState_PAUSED)
		if r := h.ask(h.mgr, where).(*api.JobResponse); r.Error != nil {
			t.Fatalf("alter of a PAUSED job's mapping: %v", r.Error)
		}
	})
	if t.Failed() {
		return
	}
	h := newHarnessWith(t, fs, &quietSource{parts: []int32{0}}, Settings{})
	info := showJob(t, h, "mapped")
	if s := info.GetSpec(); s.GetWhere() != "v > 1" || len(s.GetColumnsMapping()) != 1 || count(info.GetHistory(), api.Reason_USER_ALTER) != 1 {
		t.Fatalf("after a restart: where %q, columns %q, history %v", s.GetWhere(), s.GetColumnsMapping(), info.GetHistory())
	}
}
