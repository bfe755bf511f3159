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
type scanSource struct{ w *loadWorld }

func (s scanSource) Page(ctx context.Context, table string, cursor []byte) (*api.TableSpec, []*api.Row, []byte, error) {
	spec, rows, err := s.w.c.Scan(ctx, table, 0)
	return spec, rows, nil, err
}

// runQuery runs src on loadnode's table and returns its rows rendered as
// Doris's regression framework prints them, tab-separated.
func runQuery(w *loadWorld, src string) ([]string, error) {
	q, err := query.Parse(src)
	if err != nil {
		return nil, err
	}
	res, err := query.Run(w.ctx, scanSource{w}, q)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(res.Rows))
	for _, row := range res.Rows {
		line := ""
		for j, v := range row {
			if j > 0 {
				line += "\t"
			}
			c := res.Columns[j]
			line += renderValue(&api.Column{Name: c.Name, Type: c.Type, Precision: c.Precision, Scale: c.Scale}, v)
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
		if it.Agg != "" && len(q.GroupBy) == 0 {
			return true
		}
	}
	return false
}
