package actors

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
)

// queryManager is a manager (no actor system) whose registry holds n jobs
// with seeded random names, states and figures, so that the id order
// says nothing about any other order.
func queryManager(n int, seed uint64) *manager {
	rng := rand.New(rand.NewPCG(seed, seed))
	now := time.Now()
	m := &manager{deps: &Deps{Now: func() time.Time { return now }, Settings: Settings{StallAfter: time.Minute},
		Sinks: func(*api.TableSpec) (sink.Sink, error) { return nil, errors.New("no sinks here") }},
		registry: registry{byName: map[string]*entry{}, byID: map[uint64]*entry{}}}
	states := []api.JobState{api.JobState_NEED_SCHEDULE, api.JobState_RUNNING, api.JobState_PAUSED, api.JobState_STOPPED}
	reasons := []api.Reason{api.Reason_REASON_UNSPECIFIED, api.Reason_USER_PAUSE, api.Reason_ERROR_ROWS_EXCEEDED}
	sinks := []string{"embedded", "postgres analytics public.orders", "postgres analytics public.Clicks"}
	for i, k := range rng.Perm(n) {
		id := uint64(i + 1)
		name := fmt.Sprintf("job_%06d", k)
		if k%97 == 0 {
			name = fmt.Sprintf("Orders_EU_%06d", k) // mixed case, for the filter
		}
		state := states[rng.IntN(len(states))]
		reason := api.Reason_REASON_UNSPECIFIED
		if state == api.JobState_PAUSED {
			reason = reasons[1+rng.IntN(2)]
		}
		msg := ""
		if k%89 == 0 {
			msg = "Ünreachable broker" // not ASCII
		}
		rec := &api.JobRecord{Id: id, Name: name, Spec: &api.JobSpec{Name: name, MaxBatchRows: 100,
			Table: &api.TableSpec{Name: fmt.Sprintf("t%d", k%13)}}}
		last := now.Add(-time.Duration(rng.IntN(120)) * time.Second)
		e := &entry{rec: rec,
			summary: &api.JobSummary{Id: id, Name: name, State: state, Reason: reason, ReasonMessage: msg,
				Table: rec.Spec.Table.Name, Source: fmt.Sprintf("kafka://topic%d", k%7)},
			status: &jobStatus{totalLag: int64(rng.IntN(300)) - 1, maxBehindMs: -1, lastMs: last.UnixMilli(),
				loadedRows: int64(rng.IntN(1000)), rowsPerSec: float64(rng.IntN(50)) / 4, sink: sinks[rng.IntN(len(sinks))]}}
		m.register(e)
	}
	return m
}

// sortValue is a summary's value for key, as the test reads it (not
// through listKey): lag -1 is nil (unknown).
func sortValue(s *api.JobSummary, key string) any {
	switch key {
	case "", "id":
		return float64(s.GetId())
	case "name":
		return s.GetName()
	case "state":
		return s.GetState().String()
	case "reason":
		return s.GetReason().String()
	case "health":
		return s.GetHealth()
	case "sink":
		return s.GetSink()
	case "table":
		return s.GetTable()
	case "lag":
		if s.GetTotalLag() < 0 {
			return nil
		}
		return float64(s.GetTotalLag())
	case "loaded_rows":
		return float64(s.GetLoadedRows())
	case "rows_per_sec":
		return s.GetRowsPerSecond()
	}
	panic("no key " + key)
}

// compareValues: -1, 0, 1 for a before, tied with, after b; nil (unknown)
// after everything.
func compareValues(a, b any, desc bool) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	var c int
	switch x := a.(type) {
	case string:
		c = strings.Compare(x, b.(string))
	case float64:
		c = cmp.Compare(x, b.(float64))
	}
	if desc {
		c = -c
	}
	return c
}

// readQuery pages through a query by offset and returns every job listed.
func readQuery(t *testing.T, ask func(*api.ListJobsRequest) *api.ListJobsResponse, req *api.ListJobsRequest) ([]*api.JobSummary, int64) {
	t.Helper()
	var all []*api.JobSummary
	var matched int64 = -1
	for pages := 0; ; pages++ {
		resp := ask(req)
		if resp.Error != nil {
			t.Fatalf("%v: %v", req, resp.Error)
		}
		if matched >= 0 && resp.Matched != matched {
			t.Fatalf("matched moved from %d to %d between pages", matched, resp.Matched)
		}
		matched = resp.Matched
		if resp.NextAfterId != 0 {
			t.Fatalf("a query answered next_after_id %d", resp.NextAfterId)
		}
		if lim := req.GetLimit(); lim > 0 && len(resp.Jobs) > int(lim) {
			t.Fatalf("page of %d jobs, limit %d", len(resp.Jobs), lim)
		}
		all = append(all, resp.Jobs...)
		if resp.NextOffset == 0 {
			return all, matched
		}
		if resp.NextOffset != req.Offset+int32(len(resp.Jobs)) {
			t.Fatalf("next_offset %d after %d jobs at offset %d", resp.NextOffset, len(resp.Jobs), req.Offset)
		}
		req.Offset = resp.NextOffset
		if pages > 100000 {
			t.Fatal("pages never end")
		}
	}
}

// TestListQuerySortsEveryJob: a sorted listing read page by page (limit
// and offset) is every job once, in the order of the key over all of
// them (not page by page), ties in id order, unknown lag last in either
// direction.
func TestListQuerySortsEveryJob(t *testing.T) {
	const n, page = 1500, 97
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	m := queryManager(n, seed)
	ask := func(r *api.ListJobsRequest) *api.ListJobsResponse { return m.list(r) }
	for _, key := range api.ListSortKeys {
		for _, desc := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/desc=%v", key, desc), func(t *testing.T) {
				jobs, matched := readQuery(t, ask, &api.ListJobsRequest{Sort: key, Descending: desc, Limit: page})
				if matched != n || len(jobs) != n {
					t.Fatalf("matched %d, listed %d, want %d", matched, len(jobs), n)
				}
				seen := map[uint64]bool{}
				for i, j := range jobs {
					if seen[j.Id] {
						t.Fatalf("job %s listed twice", j.Name)
					}
					seen[j.Id] = true
					if j.Health == "" || j.Sink == "" {
						t.Fatalf("job %s listed without its status: %v", j.Name, j)
					}
					if i == 0 {
						continue
					}
					p := jobs[i-1]
					switch c := compareValues(sortValue(p, key), sortValue(j, key), desc); {
					case c > 0:
						t.Fatalf("position %d (page %d): %s (%v) before %s (%v): not sorted by %s", i, i/page+1,
							p.Name, sortValue(p, key), j.Name, sortValue(j, key), key)
					case c == 0 && p.Id > j.Id:
						t.Fatalf("position %d: tie of %s (id %d) and %s (id %d) not in id order", i, p.Name, p.Id, j.Name, j.Id)
					}
				}
			})
		}
	}
}

// TestListQueryFilters: a filter is matched over every job, on name,
// state, reason, health, sink, table, source and reason message,
// case-insensitively (ASCII or not), and sorts and pages like the rest.
func TestListQueryFilters(t *testing.T) {
	const n = 1500
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	m := queryManager(n, seed)
	ask := func(r *api.ListJobsRequest) *api.ListJobsResponse { return m.list(r) }
	all, _ := readQuery(t, ask, &api.ListJobsRequest{Sort: "id", Limit: api.MaxListPage})
	for _, f := range []string{"eu_0", "ORDERS_eu", "paused", "USER_PAUSE", "ünreach", "ÜNREACH", "public.clicks", "kafka://topic3", "t1", "stalled", "lagging", "job_0012", "no such job"} {
		t.Run(f, func(t *testing.T) {
			want := map[uint64]bool{}
			lower := strings.ToLower(f)
			for _, s := range all {
				for _, v := range []string{s.Name, s.State.String(), s.Reason.String(), s.Health, s.Sink, s.Table, s.Source, s.ReasonMessage} {
					if strings.Contains(strings.ToLower(v), lower) {
						want[s.Id] = true
					}
				}
			}
			jobs, matched := readQuery(t, ask, &api.ListJobsRequest{Filter: f, Sort: "name", Limit: 31})
			if matched != int64(len(want)) || len(jobs) != len(want) {
				t.Fatalf("filter %q: matched %d, listed %d, want %d of %d", f, matched, len(jobs), len(want), n)
			}
			for i, j := range jobs {
				if !want[j.Id] {
					t.Fatalf("filter %q listed %s, which does not match", f, j.Name)
				}
				if i > 0 && jobs[i-1].Name >= j.Name {
					t.Fatalf("filter %q: %s before %s, not by name", f, jobs[i-1].Name, j.Name)
				}
			}
			if resp := m.list(&api.ListJobsRequest{Filter: f, Limit: 5}); resp.Total != n || resp.Matched != int64(len(want)) {
				t.Fatalf("filter %q: total %d matched %d, want %d and %d", f, resp.Total, resp.Matched, n, len(want))
			}
		})
	}
}

// TestListQueryRefusals: a bad sort key, a negative offset, a cursor with
// a query and a huge filter are INVALID_ARGUMENT naming the field.
func TestListQueryRefusals(t *testing.T) {
	m := queryManager(10, 1)
	for _, c := range []struct {
		req   *api.ListJobsRequest
		field string
		says  string
	}{
		{&api.ListJobsRequest{Sort: "colour"}, "sort", "name, state, reason, health, lag, rows_per_sec, loaded_rows, sink, table"},
		{&api.ListJobsRequest{Sort: "lag", Offset: -1}, "offset", ">= 0"},
		{&api.ListJobsRequest{Offset: -5}, "offset", ">= 0"},
		{&api.ListJobsRequest{Sort: "name", AfterId: 3}, "after_id", "offset"},
		{&api.ListJobsRequest{Filter: strings.Repeat("x", api.MaxListFilter+1)}, "filter", "at most"},
		{&api.ListJobsRequest{Sort: "name", Limit: -1}, "limit", ">= 0"},
	} {
		resp := m.list(c.req)
		e := resp.GetError()
		if e.GetCode() != api.ErrorCode_INVALID_ARGUMENT || e.GetField() != c.field || !strings.Contains(e.GetMessage(), c.says) {
			t.Errorf("%v: %v, want INVALID_ARGUMENT on %s saying %q", c.req, e, c.field, c.says)
		}
		if len(resp.Jobs) != 0 {
			t.Errorf("%v: refused with %d jobs", c.req, len(resp.Jobs))
		}
	}
	// The default listing still pages by after_id, and says every job
	// matches; an offset past the end is an empty last page.
	if resp := m.list(&api.ListJobsRequest{Limit: 4}); resp.Matched != 10 || resp.NextAfterId == 0 || resp.NextOffset != 0 {
		t.Errorf("default listing: matched %d, next_after_id %d, next_offset %d", resp.Matched, resp.NextAfterId, resp.NextOffset)
	}
	if resp := m.list(&api.ListJobsRequest{Sort: "name", Offset: 11}); resp.Error != nil || len(resp.Jobs) != 0 || resp.Matched != 10 || resp.NextOffset != 0 {
		t.Errorf("offset past the end: %v", resp)
	}
}

// TestListQueryThroughManager: through the manager's mailbox, with jobs
// created in an order that is not their name order, the first page sorted
// by name is the globally first names, and a filter finds a job far past
// the first page in id order.
func TestListQueryThroughManager(t *testing.T) {
	h := newHarnessWith(t, vfs.NewMem(), &quietSource{parts: []int32{0}}, Settings{})
	createMany(t, h, "b", 0, 150) // ids 1..150
	createMany(t, h, "a", 0, 150) // ids 151..300: first by name
	ask := func(r *api.ListJobsRequest) *api.ListJobsResponse {
		return h.ask(h.mgr, r).(*api.ListJobsResponse)
	}
	first := ask(&api.ListJobsRequest{Sort: "name", Limit: 50})
	if first.Error != nil || len(first.Jobs) != 50 || first.Total != 300 || first.Matched != 300 || first.NextOffset != 50 {
		t.Fatalf("first page by name: %d jobs, total %d, matched %d, next %d, %v", len(first.Jobs), first.Total, first.Matched, first.NextOffset, first.Error)
	}
	for i, j := range first.Jobs {
		if want := fmt.Sprintf("a%05d", i); j.Name != want {
			t.Fatalf("by name, position %d is %s, want %s", i, j.Name, want)
		}
	}
	last := ask(&api.ListJobsRequest{Sort: "name", Descending: true, Limit: 1})
	if len(last.Jobs) != 1 || last.Jobs[0].Name != "b00149" {
		t.Fatalf("first by name descending: %v", last.Jobs)
	}
	found := ask(&api.ListJobsRequest{Filter: "A00123", Limit: 50})
	if found.Error != nil || found.Matched != 1 || len(found.Jobs) != 1 || found.Jobs[0].Name != "a00123" || found.Jobs[0].Sink != "embedded" {
		t.Fatalf("filter a00123: matched %d, %v, %v", found.Matched, found.Jobs, found.Error)
	}
	jobs, matched := readQuery(t, ask, &api.ListJobsRequest{Filter: "b001", Sort: "name", Descending: true, Limit: 7})
	if matched != 50 || len(jobs) != 50 || jobs[0].Name != "b00149" || jobs[49].Name != "b00100" {
		t.Fatalf("filter b001 by name descending: matched %d, %d jobs", matched, len(jobs))
	}
	if e := ask(&api.ListJobsRequest{Sort: "size"}).GetError(); e.GetCode() != api.ErrorCode_INVALID_ARGUMENT || e.GetField() != "sort" {
		t.Fatalf("sort size: %v", e)
	}
}

// BenchmarkListQuery: 100,000 jobs, a page of 100 sorted by lag
// (descending) or filtered, as the console asks for them.
func BenchmarkListQuery(b *testing.B) {
	m := queryManager(100_000, 1)
	for _, req := range []*api.ListJobsRequest{
		{Sort: "lag", Descending: true, Limit: 100},
		{Sort: "name", Limit: 100, Offset: 50_000},
		{Filter: "eu_", Sort: "rows_per_sec", Limit: 100},
		{Limit: 100}, // the id order, paged by after_id: one page's summaries
	} {
		b.Run(fmt.Sprintf("sort=%s,filter=%s,offset=%d", req.Sort, req.Filter, req.Offset), func(b *testing.B) {
			for b.Loop() {
				if resp := m.list(req); resp.Error != nil || len(resp.Jobs) != 100 {
					b.Fatalf("%v: %d jobs", resp.Error, len(resp.Jobs))
				}
			}
		})
	}
}
