package conformance

import (
	"context"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/query"
)

// A corpus case's query runs through loadnode's SELECT engine (package
// query: its subset, WHERE and items evaluated by the expression engine)
// over the loaded table, and its cells are rendered as Doris's regression
// framework prints them (renderValue), not as the MySQL protocol does, so
// they compare with expected.out as written. A query outside the subset is
// an error naming it, so a case cannot pass on a query the harness did not
// run.

// scanSource reads a whole table in one page (the corpus's tables are
// small).
type scanSource struct {
	w    *loadWorld
	spec **api.TableSpec // the table's, once read
}

func (s scanSource) Page(ctx context.Context, table string, cursor []byte) (*api.TableSpec, []*api.Row, []byte, error) {
	spec, rows, err := s.w.c.Scan(ctx, table, 0)
	*s.spec = spec
	return spec, rows, nil, err
}

// runQuery runs src on loadnode's table and returns its rows rendered as
// Doris's regression framework prints them, tab-separated.
func runQuery(w *loadWorld, src string) ([]string, error) {
	q, err := query.Parse(src)
	if err != nil {
		return nil, err
	}
	var spec *api.TableSpec
	res, err := query.Run(w.ctx, scanSource{w, &spec}, q)
	if err != nil {
		return nil, err
	}
	// A result column that is a table column renders as that column (a
	// Doris TIMESTAMP shown in the session's zone: text_in_job_zone).
	byName := map[string]*api.Column{}
	for _, c := range spec.GetColumns() {
		byName[c.GetName()] = c
	}
	out := make([]string, 0, len(res.Rows))
	for _, row := range res.Rows {
		line := ""
		for j, v := range row {
			if j > 0 {
				line += "\t"
			}
			c := res.Columns[j]
			col := &api.Column{Name: c.Name, Type: c.Type, Precision: c.Precision, Scale: c.Scale}
			if tc, ok := byName[c.Name]; ok && tc.GetType() == c.Type {
				col.TextInJobZone = tc.GetTextInJobZone()
			}
			line += renderValue(col, v)
		}
		out = append(out, line)
	}
	return out, nil
}

// hasOrderBy reports whether a query's rows come in an order Doris keeps:
// ORDER BY, or one row (an aggregate without GROUP BY).
func hasOrderBy(src string) bool {
	q, err := query.Parse(src)
	if err != nil {
		return false
	}
	if len(q.OrderBy) > 0 {
		return true
	}
	for _, it := range q.Items {
		if (it.Agg != "" || len(it.Aggs) > 0) && len(q.GroupBy) == 0 {
			return true
		}
	}
	return false
}
