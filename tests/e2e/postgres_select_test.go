package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/internal/testnode"
)

// TestPostgresSelectSQL (issue 28): `loadnode sql "SELECT ..."` on a table
// of a PostgreSQL database is answered by PostgreSQL (the node's
// TableQueryRequest), in the shape and rendering of the scan path; a query
// with a part PostgreSQL has no equivalent for is answered through the
// scan, the same way.
func TestPostgresSelectSQL(t *testing.T) {
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	p := testnode.Start(t, testnode.Options{DataDir: t.TempDir(), Args: pgNode(t, dsn)})
	c := p.Client(t)
	sqlOut(t, p, "CREATE TABLE analytics.sel (id BIGINT, city VARCHAR(16), qty INT) DUPLICATE KEY(id)")
	sqlOut(t, p, "INSERT INTO analytics.sel VALUES (1, 'b', 5), (2, 'a', 7), (3, 'b', NULL), (4, NULL, 2), (5, 'a', 1)")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for stmt, want := range map[string]string{
		"SELECT count(*) FROM analytics.sel": tableText([]string{"count(*)"}, []string{"5"}),
		"SELECT city, count(*), sum(qty), avg(qty) FROM sel WHERE id > 1 GROUP BY city ORDER BY city": tableText(
			[]string{"city", "count(*)", "sum(qty)", "avg(qty)"},
			[]string{"NULL", "1", "2", "2"}, []string{"a", "2", "8", "4"}, []string{"b", "1", "NULL", "NULL"}),
		"SELECT id, city FROM sel WHERE qty IS NOT NULL ORDER BY qty DESC LIMIT 2 OFFSET 1": tableText(
			[]string{"id", "city"}, []string{"1", "b"}, []string{"4", "NULL"}),
		"SELECT id FROM sel WHERE upper(city) = 'A'":  tableText([]string{"id"}, []string{"2"}, []string{"5"}),
		"SELECT DISTINCT city FROM sel ORDER BY city": tableText([]string{"city"}, []string{"NULL"}, []string{"a"}, []string{"b"}),
		"SELECT city, sum(qty) / count(*) r FROM sel GROUP BY city HAVING count(*) > 1 ORDER BY city": tableText(
			[]string{"city", "r"}, []string{"a", "4"}, []string{"b", "2.5"}),
		"SELECT count(DISTINCT city), count(DISTINCT qty) FROM sel": tableText(
			[]string{"count(DISTINCT city)", "count(DISTINCT qty)"}, []string{"2", "4"}),
		"SELECT count(DISTINCT city), count(*) = count(DISTINCT id) FROM sel": tableText(
			[]string{"count(DISTINCT city)", "count(*) = count(DISTINCT id)"}, []string{"2", "1"}),
	} {
		if got := sqlOut(t, p, stmt); got != want {
			t.Errorf("%s:\n%s\nwant\n%s", stmt, got, want)
		}
		// What PostgreSQL has no translation for is answered over the scan.
		scanned := strings.Contains(stmt, "upper") || strings.Contains(stmt, "HAVING") || strings.Contains(stmt, "= count(DISTINCT")
		_, fallback, err := c.QueryTable(ctx, "sel", stmt)
		if err != nil || (fallback != "") != scanned {
			t.Errorf("%s: QueryTable: %v, fallback %q", stmt, err, fallback)
		}
	}
}
