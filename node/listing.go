package node

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/loadnode/loadnode/api"
)

// listRequest reads /v1/jobs?limit=N&after=ID into a ListJobsRequest:
// limit defaults to api.DefaultListPage and is at most
// api.MaxListPage; after is the id of the last job of the previous page
// (the answer's nextAfterId). A sorted or filtered listing reads sort (a
// key of api.ListSortKeys), desc=true|false or order=asc|desc, q or
// filter (a case-insensitive substring) and offset (the previous page's
// nextOffset); it pages by offset, not by after.
func listRequest(r *http.Request) (*api.ListJobsRequest, error) {
	req := &api.ListJobsRequest{}
	q := r.URL.Query()
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("limit %q must be a number >= 0 (at most %d)", v, api.MaxListPage)
		}
		req.Limit = int32(min(n, api.MaxListPage))
	}
	if v := q.Get("after"); v != "" {
		id, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("after %q must be a job id (nextAfterId of the previous page)", v)
		}
		req.AfterId = id
	}
	req.Sort = q.Get("sort")
	if err := api.ValidListSort(req.Sort); err != nil {
		return nil, err
	}
	if v := q.Get("desc"); v != "" {
		d, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("desc %q must be true or false", v)
		}
		req.Descending = d
	}
	switch v := q.Get("order"); v {
	case "":
	case "asc", "desc":
		if q.Has("desc") && req.Descending != (v == "desc") {
			return nil, fmt.Errorf("order %q and desc %q disagree: give one of them", v, q.Get("desc"))
		}
		req.Descending = v == "desc"
	default:
		return nil, fmt.Errorf("order %q must be asc or desc", v)
	}
	req.Filter = q.Get("q")
	if f := q.Get("filter"); f != "" {
		if req.Filter != "" && req.Filter != f {
			return nil, fmt.Errorf("q %q and filter %q: give one of them", req.Filter, f)
		}
		req.Filter = f
	}
	if len(req.Filter) > api.MaxListFilter {
		return nil, fmt.Errorf("q (filter) of %d bytes: at most %d", len(req.Filter), api.MaxListFilter)
	}
	if v := q.Get("offset"); v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("offset %q must be a number >= 0 (nextOffset of the previous page)", v)
		}
		req.Offset = int32(n)
	}
	if req.AfterId != 0 && (req.Sort != "" || req.Descending || req.Filter != "" || req.Offset != 0) {
		return nil, fmt.Errorf("after %d pages the listing in id order only: a sorted or filtered listing pages by offset", req.AfterId)
	}
	return req, nil
}

// listAll reads every job's summary from the manager, page by page.
func (a *admin) listAll(ctx context.Context) ([]*api.JobSummary, error) {
	var all []*api.JobSummary
	var after uint64
	for {
		res, err := a.ask(ctx, &api.ListJobsRequest{Limit: api.MaxListPage, AfterId: after})
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
