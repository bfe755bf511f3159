package actors

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/persistence"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

func TestWindowExceeded(t *testing.T) {
	for _, tt := range []struct {
		maxErrors   int64
		errs        int64
		wantExceeds bool
	}{
		{0, 0, false},
		{0, 1, true},
		{5, 5, false},
		{5, 6, true},
	} {
		spec := &api.JobSpec{MaxErrorNumber: tt.maxErrors, MaxFilterRatio: proto.Float64(0)}
		if got := windowExceeded(spec, tt.errs); got != tt.wantExceeds {
			t.Errorf("max_error_number %d: %d error rows: exceeded = %v", tt.maxErrors, tt.errs, got)
		}
	}
}

func TestOverRatio(t *testing.T) {
	for _, tt := range []struct {
		ratio        *float64
		loaded, errs int64
		want         bool
	}{
		{nil, 0, 10, false}, // unset: 1, no limit
		{proto.Float64(0), 10, 0, false},
		{proto.Float64(0), 9, 1, true},
		{proto.Float64(0.2), 7, 3, true},
		{proto.Float64(0.3), 7, 3, false},
		{proto.Float64(1), 0, 3, false},
	} {
		spec := &api.JobSpec{MaxErrorNumber: 1000, MaxFilterRatio: tt.ratio}
		got := overRatio(spec, tt.loaded, tt.errs)
		if (got != "") != tt.want || got != "" && !strings.Contains(got, "max_filter_ratio") {
			t.Errorf("ratio %v: %d error rows of %d: %q, want over = %v", tt.ratio, tt.errs, tt.loaded+tt.errs, got, tt.want)
		}
	}
}

// TestBatchOverFilterRatioNotCommitted: a batch whose error rows are over
// max_filter_ratio of its rows is one Doris transaction that aborts:
// nothing of it is committed (rows, error rows, statistics, offsets), the
// job pauses ERROR_ROWS_EXCEEDED naming the limit, and the batches queued
// behind it are refused. Within the ratio, a batch with error rows is
// committed whole.
func TestBatchOverFilterRatioNotCommitted(t *testing.T) {
	for _, tt := range []struct {
		ratio      float64
		wantCommit bool
	}{{0.2, false}, {0.3, true}} {
		h := newHarnessStore(t, vfs.NewMem(), &quietSource{parts: []int32{0}}, Settings{}, func(st *persistence.Store) sink.Sink { return st.Sink() })
		spec := testSpec("ratio")
		spec.MaxErrorNumber, spec.MaxFilterRatio = 1000, proto.Float64(tt.ratio)
		resp := h.ask(h.mgr, &api.CreateJobRequest{Spec: spec}).(*api.JobResponse)
		if resp.Error != nil {
			t.Fatal(resp.Error)
		}
		id := resp.Job.Summary.Id
		pid := h.jobPID(id)
		in := h.waitState(pid, api.JobState_RUNNING)
		schema, _ := table.NewSchema(spec.Table)
		// 10 records: 7 rows, 3 error rows.
		c := &commitBatch{generation: in.Generation, ranges: []persistence.Range{{Partition: 0, From: 0, To: 10}}, loaded: 7}
		for o := int64(0); o < 7; o++ {
			c.rows = append(c.rows, oneRow(t, schema, table.Pos{JobID: id, Partition: 0, Offset: o}, o))
		}
		for o := int64(7); o < 10; o++ {
			c.errorRows = append(c.errorRows, &api.ErrorRow{Partition: 0, Offset: o, Reason: "bad"})
		}
		err := commitAnswer(t, h.system.Root.RequestFuture(pid, c, 5*time.Second))
		st, lerr := h.store.LoadJob(id)
		if lerr != nil {
			t.Fatal(lerr)
		}
		n, cerr := h.store.CountRows("t_ratio")
		if cerr != nil {
			t.Fatal(cerr)
		}
		if tt.wantCommit {
			if err != nil || st.Progress[0] != 10 || n != 7 || st.Stats.ErrorRows != 3 {
				t.Fatalf("ratio %g: commit %v, progress %v, rows %d, error rows %d; want committed: 10, 7, 3", tt.ratio, err, st.Progress, n, st.Stats.ErrorRows)
			}
			continue
		}
		if err == nil {
			t.Fatalf("ratio %g: the batch over max_filter_ratio was committed", tt.ratio)
		}
		if st.Progress[0] != 0 || n != 0 || st.Stats.LoadedRows != 0 || st.Stats.ErrorRows != 0 || st.Stats.CommittedBatches != 0 {
			t.Fatalf("ratio %g: progress %v, rows %d, loaded %d, error rows %d, batches %d; want nothing committed",
				tt.ratio, st.Progress, n, st.Stats.LoadedRows, st.Stats.ErrorRows, st.Stats.CommittedBatches)
		}
		in = h.waitState(pid, api.JobState_PAUSED)
		sum := h.ask(h.mgr, &api.ShowJobRequest{Name: "ratio"}).(*api.JobResponse).GetJob().GetSummary()
		if sum.GetReason() != api.Reason_ERROR_ROWS_EXCEEDED || !strings.Contains(sum.GetReasonMessage(), "max_filter_ratio 0.2") {
			t.Fatalf("paused %s %q, want ERROR_ROWS_EXCEEDED naming max_filter_ratio 0.2", sum.GetReason(), sum.GetReasonMessage())
		}
		// A batch that comes after is refused: the job is paused.
		if err := commitAnswer(t, h.system.Root.RequestFuture(pid, commitOf(in.Generation, 0, 0, 1, func(p int32, off int64) persistence.KV {
			return oneRow(t, schema, table.Pos{JobID: id, Partition: p, Offset: off}, off)
		}), 5*time.Second)); !errors.Is(err, ErrStaleCommit) {
			t.Fatalf("a commit after the pause: %v, want ErrStaleCommit", err)
		}
	}
}
