package actors

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/loadnode/loadnode/api"
)

// Listing queries: a ListJobsRequest with a sort, a filter or an offset is
// answered over every job the node knows, not over one page of them. The
// manager builds the summary of each job (listSummary, the same one a page
// in id order shows), keeps those the filter matches, sorts them (ties in
// id order, so the order is total and the same for the same figures), and
// answers the page at the offset. Such a listing pages by offset: figures
// that move between two pages can move a job in the order.
//
// Cost: one summary per job and one sort per request, in the manager's
// mailbox (BenchmarkListQuery: 100,000 jobs sorted by lag).

// listQueried reports whether req asks for a sorted or filtered listing
// (paged by offset) rather than the id order paged by after_id.
func listQueried(req *api.ListJobsRequest) bool {
	return req.GetSort() != "" || req.GetDescending() || req.GetFilter() != "" || req.GetOffset() != 0
}

// listRow is a job's summary with its sort key, read once per query.
type listRow struct {
	s       *api.JobSummary
	text    string  // text keys
	n       int64   // integer keys
	f       float64 // rows_per_sec
	unknown bool    // lag, loaded_rows, rows_per_sec: -1, sorts last in either direction
}

// listQuery answers a sorted or filtered page (req valid, limit bounded).
func (m *manager) listQuery(req *api.ListJobsRequest, limit int, figs ownerFigures) *api.ListJobsResponse {
	key := req.GetSort()
	filter := strings.ToLower(req.GetFilter())

	m.sortOrder()
	now := m.deps.Now()
	rows := make([]listRow, 0, len(m.order))
	for _, e := range m.order {
		if !m.listed(req, e) {
			continue
		}
		s := m.listSummary(e, now, figs)
		if filter != "" && !listMatches(s, filter) {
			continue
		}
		rows = append(rows, listKey(s, key))
	}
	byKey := listCompare(key)
	desc := req.GetDescending()
	slices.SortFunc(rows, func(a, b listRow) int {
		c := byKey(a, b)
		if desc && !a.unknown && !b.unknown {
			c = -c
		}
		if c != 0 {
			return c
		}
		return cmp.Compare(a.s.GetId(), b.s.GetId())
	})

	resp := &api.ListJobsResponse{Total: int64(len(m.byName)), Matched: int64(len(rows))}
	from := min(int(req.GetOffset()), len(rows))
	to := min(from+limit, len(rows))
	resp.Jobs = make([]*api.JobSummary, 0, to-from)
	for _, r := range rows[from:to] {
		resp.Jobs = append(resp.Jobs, r.s)
	}
	if to < len(rows) {
		resp.NextOffset = int32(to)
	}
	return resp
}

// listKey reads s's sort key.
func listKey(s *api.JobSummary, key string) listRow {
	r := listRow{s: s}
	switch key {
	case "name":
		r.text = s.GetName()
	case "state":
		r.text = stateName(s.GetState())
	case "reason":
		r.text = reasonName(s.GetReason())
	case "health":
		r.text = s.GetHealth()
	case "sink":
		r.text = s.GetSink()
	case "table":
		r.text = s.GetTable()
	case "lag":
		r.n, r.unknown = s.GetTotalLag(), s.GetTotalLag() < 0
	case "loaded_rows":
		r.n, r.unknown = s.GetLoadedRows(), s.GetLoadedRows() < 0
	case "rows_per_sec":
		r.f, r.unknown = s.GetRowsPerSecond(), s.GetRowsPerSecond() < 0
	}
	return r
}

// listCompare orders two rows by key, without the tie on id.
func listCompare(key string) func(a, b listRow) int {
	switch key {
	case "", "id":
		return func(a, b listRow) int { return cmp.Compare(a.s.GetId(), b.s.GetId()) }
	case "lag", "loaded_rows", "rows_per_sec":
		// An unknown figure (-1: a lag not known yet, another member's
		// figures its owner did not give) sorts after every known one, in
		// either direction: list does not reverse a comparison with an
		// unknown.
		return func(a, b listRow) int {
			if a.unknown != b.unknown {
				if a.unknown {
					return 1
				}
				return -1
			}
			return cmp.Or(cmp.Compare(a.n, b.n), cmp.Compare(a.f, b.f))
		}
	}
	return func(a, b listRow) int { return strings.Compare(a.text, b.text) }
}

func stateName(v api.JobState) string {
	if n, ok := api.JobState_name[int32(v)]; ok {
		return n
	}
	return v.String()
}

func reasonName(v api.Reason) string {
	if n, ok := api.Reason_name[int32(v)]; ok {
		return n
	}
	return v.String()
}

// listMatches reports whether one of s's fields a listing filters on holds
// lower (a lower-case filter), case-insensitively: name, state, reason,
// health, sink, table, source, reason message.
func listMatches(s *api.JobSummary, lower string) bool {
	for _, v := range [...]string{s.GetName(), stateName(s.GetState()), reasonName(s.GetReason()), s.GetHealth(),
		s.GetSink(), s.GetTable(), s.GetSource(), s.GetReasonMessage()} {
		if containsFold(v, lower) {
			return true
		}
	}
	return false
}

// containsFold reports whether s holds lower (lower-cased) with case
// folded, without allocating for ASCII s.
func containsFold(s, lower string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strings.Contains(strings.ToLower(s), lower)
		}
	}
	n := len(lower)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for ; j < n; j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != lower[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}
