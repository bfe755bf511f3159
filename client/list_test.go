package client_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
)

// TestListJobsQuery: a sorted, filtered listing through the client is over
// every job (the first page by name descending starts with the last name
// created first), pages by offset, and a bad key or offset is an error
// naming the field.
func TestListJobsQuery(t *testing.T) {
	n := startNode(t)
	c := dial(t, n.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// z0..z4 first (ids 1..5), then a0..a4: id order is not name order.
	for _, p := range []string{"z", "a"} {
		for i := range 5 {
			s := validSpec(fmt.Sprintf("%s%d", p, i))
			s.Table.Name = "t_" + s.Name
			if _, err := c.CreateJob(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
	}
	names := func(jobs []*api.JobSummary) string {
		var s []string
		for _, j := range jobs {
			s = append(s, j.GetName())
		}
		return strings.Join(s, ",")
	}
	jobs, matched, err := c.ListJobsQuery(ctx, client.ListQuery{Sort: "name", Limit: 3})
	if err != nil || names(jobs) != "a0,a1,a2" || matched != 10 {
		t.Fatalf("by name: %s, matched %d, %v", names(jobs), matched, err)
	}
	jobs, _, err = c.ListJobsQuery(ctx, client.ListQuery{Sort: "name", Descending: true, Limit: 3, Offset: 3})
	if err != nil || names(jobs) != "z1,z0,a4" {
		t.Fatalf("by name descending at offset 3: %s, %v", names(jobs), err)
	}
	jobs, matched, err = c.ListJobsQuery(ctx, client.ListQuery{Filter: "A3"})
	if err != nil || names(jobs) != "a3" || matched != 1 {
		t.Fatalf("filter A3: %s, matched %d, %v", names(jobs), matched, err)
	}
	// No sort nor filter: the id order, paged by offset too.
	jobs, matched, err = c.ListJobsQuery(ctx, client.ListQuery{Offset: 4, Limit: 2})
	if err != nil || names(jobs) != "z4,a0" || matched != 10 {
		t.Fatalf("id order at offset 4: %s, matched %d, %v", names(jobs), matched, err)
	}
	_, _, err = c.ListJobsQuery(ctx, client.ListQuery{Sort: "colour"})
	wantCode(t, err, api.ErrorCode_INVALID_ARGUMENT, "sort")
	if !strings.Contains(err.Error(), "rows_per_sec") {
		t.Errorf("bad sort key: %v does not name the keys", err)
	}
	_, _, err = c.ListJobsQuery(ctx, client.ListQuery{Offset: -1})
	if err == nil || !strings.Contains(err.Error(), "offset") {
		t.Errorf("offset -1: %v", err)
	}
}
