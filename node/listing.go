package node

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/loadnode/loadnode/actors"
	"github.com/loadnode/loadnode/api"
)

// listRequest reads /v1/jobs?limit=N&after=ID into a ListJobsRequest:
// limit defaults to actors.DefaultListPage and is at most
// actors.MaxListPage; after is the id of the last job of the previous page
// (the answer's nextAfterId).
func listRequest(r *http.Request) (*api.ListJobsRequest, error) {
	req := &api.ListJobsRequest{}
	q := r.URL.Query()
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("limit %q must be a number >= 0 (at most %d)", v, actors.MaxListPage)
		}
		req.Limit = int32(min(n, actors.MaxListPage))
	}
	if v := q.Get("after"); v != "" {
		id, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("after %q must be a job id (nextAfterId of the previous page)", v)
		}
		req.AfterId = id
	}
	return req, nil
}

// listAll reads every job's summary from the manager, page by page.
func (a *admin) listAll(ctx context.Context) ([]*api.JobSummary, error) {
	var all []*api.JobSummary
	var after uint64
	for {
		res, err := a.ask(ctx, &api.ListJobsRequest{Limit: actors.MaxListPage, AfterId: after})
		if err != nil {
			return nil, err
		}
		resp, ok := res.(*api.ListJobsResponse)
		if !ok {
			return nil, fmt.Errorf("unexpected answer %T", res)
		}
		all = append(all, resp.GetJobs()...)
		if resp.GetNextAfterId() <= after {
			return all, nil
		}
		after = resp.GetNextAfterId()
	}
}
