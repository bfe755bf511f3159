package actors

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
)

// createMany creates jobs prefix0000.. in bursts and fails the test on any
// refused create.
func createMany(t *testing.T, h *harness, prefix string, from, n int) {
	t.Helper()
	const burst = 200
	for i := from; i < from+n; i += burst {
		var fs []*actor.Future
		for k := i; k < min(i+burst, from+n); k++ {
			fs = append(fs, h.system.Root.RequestFuture(h.mgr, &api.CreateJobRequest{Spec: testSpec(fmt.Sprintf("%s%05d", prefix, k))}, time.Minute))
		}
		for _, f := range fs {
			res, err := f.Result()
			if err != nil {
				t.Errorf("create: %v", err)
				return
			}
			if r := res.(*api.JobResponse); r.Error != nil {
				t.Errorf("create: %v", r.Error)
				return
			}
		}
	}
}

// TestListPagesEveryJobOnce: a listing read page by page (limit and
// after_id) returns every job exactly once, in id order, with its status,
// while other jobs are being created; the default and the largest page
// sizes hold.
func TestListPagesEveryJobOnce(t *testing.T) {
	const before, during = 2000, 400
	h := newHarnessWith(t, vfs.NewMem(), &quietSource{parts: []int32{0}}, Settings{})
	createMany(t, h, "a", 0, before)

	var wg sync.WaitGroup
	wg.Go(func() { createMany(t, h, "b", 0, during) })
	seen := map[string]int{}
	var after, lastID uint64
	pages := 0
	for {
		resp := h.ask(h.mgr, &api.ListJobsRequest{Limit: 137, AfterId: after}).(*api.ListJobsResponse)
		if resp.Error != nil {
			t.Fatal(resp.Error)
		}
		if len(resp.Jobs) > 137 {
			t.Fatalf("page of %d jobs, limit 137", len(resp.Jobs))
		}
		pages++
		for _, j := range resp.Jobs {
			if j.Id <= lastID {
				t.Fatalf("job %s (id %d) after id %d: not in id order", j.Name, j.Id, lastID)
			}
			lastID = j.Id
			seen[j.Name]++
			if j.Health == "" || j.Sink != "embedded" {
				t.Fatalf("job %s listed without its status: %v", j.Name, j)
			}
		}
		if resp.NextAfterId == 0 {
			break
		}
		after = resp.NextAfterId
	}
	wg.Wait()
	for i := range before {
		if n := seen[fmt.Sprintf("a%05d", i)]; n != 1 {
			t.Fatalf("job a%05d listed %d times across %d pages", i, n, pages)
		}
	}
	for name, n := range seen {
		if n != 1 {
			t.Fatalf("job %s listed %d times", name, n)
		}
	}
	if pages < before/137 {
		t.Fatalf("%d pages for %d jobs of 137 a page: not paged", pages, len(seen))
	}
	// Once the creates are done, a listing is every job.
	all := 0
	after = 0
	for {
		resp := h.ask(h.mgr, &api.ListJobsRequest{Limit: api.MaxListPage + 1, AfterId: after}).(*api.ListJobsResponse)
		if len(resp.Jobs) > api.MaxListPage {
			t.Fatalf("page of %d jobs, above the largest page %d", len(resp.Jobs), api.MaxListPage)
		}
		if resp.Total != before+during {
			t.Fatalf("total %d, want %d", resp.Total, before+during)
		}
		all += len(resp.Jobs)
		if resp.NextAfterId == 0 {
			break
		}
		after = resp.NextAfterId
	}
	if all != before+during {
		t.Fatalf("listed %d jobs, want %d", all, before+during)
	}
	if resp := h.ask(h.mgr, &api.ListJobsRequest{}).(*api.ListJobsResponse); len(resp.Jobs) != api.DefaultListPage || resp.NextAfterId != resp.Jobs[api.DefaultListPage-1].Id {
		t.Fatalf("default page: %d jobs, next %d", len(resp.Jobs), resp.NextAfterId)
	}
	if resp := h.ask(h.mgr, &api.ListJobsRequest{Limit: -1}).(*api.ListJobsResponse); resp.Error.GetCode() != api.ErrorCode_INVALID_ARGUMENT {
		t.Fatalf("limit -1: %v", resp.Error)
	}
}

// TestListAfterTheLargestID: a page after the largest id there can be is
// empty (after_id + 1 wrapped to 0 and gave the first page; the 2026-12-02
// probe's "after=2^64-1" on /v1/jobs and /ui/api/jobs).
func TestListAfterTheLargestID(t *testing.T) {
	h := newHarnessWith(t, vfs.NewMem(), &quietSource{parts: []int32{0}}, Settings{})
	createMany(t, h, "a", 0, 3)
	for _, after := range []uint64{math.MaxUint64, math.MaxUint64 - 1} {
		resp := h.ask(h.mgr, &api.ListJobsRequest{Limit: 3, AfterId: after}).(*api.ListJobsResponse)
		if resp.Error != nil || len(resp.Jobs) != 0 || resp.NextAfterId != 0 || resp.Total != 3 {
			t.Errorf("after_id %d: %d jobs, next %d, total %d, %v; want none of the 3", after, len(resp.Jobs), resp.NextAfterId, resp.Total, resp.Error)
		}
	}
}
