package query

import (
	"context"
	"testing"
)

// FuzzQuery: any statement is parsed and run over a small table to an
// answer or an error, never a panic; a result's rows have its columns'
// width.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{
		"SELECT count(*), sum(qty) > 0 FROM orders",
		"SELECT city, sum(qty) / count(*) r FROM orders GROUP BY city HAVING count(*) > 1 ORDER BY r DESC",
		"SELECT count(DISTINCT city, qty), avg(DISTINCT length(city)) FROM orders",
		"SELECT DISTINCT city, qty > 1 FROM orders ORDER BY 1 LIMIT 2",
		"SELECT concat(city, ':', max(at)) FROM orders WHERE id > 1 GROUP BY city",
		"SELECT id, upper(city) u FROM orders WHERE amount IS NOT NULL ORDER BY u DESC NULLS LAST LIMIT 1, 2",
		"SELECT sum(sum(qty)) FROM orders",
		"SELECT city FROM orders GROUP BY city HAVING s > 1",
		"SELECT count(*) + __loadnode_agg_9, sum(qty) FROM orders HAVING __loadnode_agg_1 > 0",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stmt string) {
		q, err := Parse(stmt)
		if err != nil {
			return
		}
		if q.Table != "" && q.Table != "orders" {
			q.Table = "orders"
		}
		res, err := Run(context.Background(), orders(), q, WithMaxRows(50))
		if err != nil {
			return
		}
		for _, r := range res.Rows {
			if len(r) != len(res.Columns) {
				t.Fatalf("%q: a row of %d cells, %d columns", stmt, len(r), len(res.Columns))
			}
		}
	})
}
