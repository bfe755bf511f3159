package actors

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
)

// slowSource has one partition holding records 0..n-1 (csv "7"); each of its
// readers returns nothing for its first slow Reads, as a reader whose first
// fetch takes longer than max_batch_interval on a busy broker.
type slowSource struct {
	quietSource
	n      int64
	slow   int
	opened atomic.Int32
}

func (s *slowSource) NewReader(start map[int32]sources.Start) (sources.Reader, error) {
	s.opened.Add(1)
	return &slowReader{countReader: countReader{src: &countSource{n: s.n}, next: start[0].Offset}, slow: s.slow}, nil
}

type slowReader struct {
	countReader
	slow int
}

func (r *slowReader) Read(ctx context.Context, lim sources.Limits) (*sources.Batch, error) {
	if r.slow > 0 {
		r.slow--
		t := time.NewTimer(lim.MaxWait)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		return &sources.Batch{Next: map[int32]int64{0: r.next}}, nil
	}
	return r.countReader.Read(ctx, lim)
}

// TestSlowFirstFetchKeepsReader: a task does not close a reader that has
// returned nothing yet after dormantAfter empty reads (its first fetch may
// just be slow); closing it would throw the fetch away and start over, and
// a reader that needs more than dormantAfter reads for its first records
// would never deliver any (json at 64 partitions loaded 6 k records/s so).
func TestSlowFirstFetchKeepsReader(t *testing.T) {
	src := &slowSource{quietSource: quietSource{parts: []int32{0}}, n: 30, slow: dormantAfter + 2}
	h := newHarnessWith(t, vfs.NewMem(), src, Settings{})
	spec := testSpec("pipe")
	spec.MaxBatchRows, spec.MaxBatchIntervalMs = 10, 100
	resp := h.ask(h.mgr, &api.CreateJobRequest{Spec: spec}).(*api.JobResponse)
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	waitLoaded(t, h, h.jobPID(resp.Job.Summary.Id))
	if n := src.opened.Load(); n != 1 {
		t.Fatalf("%d readers opened; want 1 (a reader kept until it delivered)", n)
	}
}
