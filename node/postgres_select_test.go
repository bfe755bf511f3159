package node_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/doris/exec"
	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/query"
)

// scanAnswer is a SELECT's answer over the client's scan (query.Run), the
// path a table of the embedded store takes: what the pushdown must equal.
func scanAnswer(ctx context.Context, c *client.Client, statement string) ([]string, [][]string, error) {
	q, err := query.Parse(statement)
	if err != nil {
		return nil, nil, err
	}
	res, err := query.Run(ctx, scanPages{c}, q, query.WithLocation(time.Local))
	if err != nil {
		return nil, nil, err
	}
	var cols []string
	for _, col := range res.Columns {
		cols = append(cols, col.Name)
	}
	var rows [][]string
	for _, row := range res.Text() {
		r := make([]string, len(row))
		for j, cell := range row {
			r[j] = "NULL"
			if cell != nil {
				r[j] = *cell
			}
		}
		rows = append(rows, r)
	}
	return cols, rows, nil
}

type scanPages struct{ c *client.Client }

func (s scanPages) Page(ctx context.Context, table string, cursor []byte) (*api.TableSpec, []*api.Row, []byte, error) {
	return s.c.ScanPage(ctx, table, cursor, 3) // small pages: several of them
}

func rowsOf(rs *api.ResultSet) [][]string {
	var out [][]string
	for _, r := range rs.GetRows() {
		out = append(out, r.GetValues())
	}
	return out
}

// TestPostgresSelectPushdown (issue 28): a SELECT on a PostgreSQL table is
// answered by PostgreSQL (TableQueryRequest), with the same columns and
// rows, rendered the same, as the scan path gives over the same rows, for
// each clause; a part without a PostgreSQL equivalent falls back (the node
// names it) and the scan answers.
func TestPostgresSelectPushdown(t *testing.T) {
	pg := pgtest.Start(t)
	c := startPostgresNode(t, map[string]string{"analytics": pg.CreateDatabase(t)})
	ctx := context.Background()
	if _, err := exec.Exec(ctx, c, "CREATE TABLE analytics.t (id BIGINT, k VARCHAR(16), n INT, d DECIMAL(10,2), f DOUBLE, day DATE) DUPLICATE KEY(id)"); err != nil {
		t.Fatal(err)
	}
	var vals []string
	for i := 1; i <= 23; i++ {
		k := []string{"'b'", "'a'", "'B'", "'ä'", "NULL"}[i%5]
		n := fmt.Sprint(i * 7 % 11)
		if i%6 == 0 {
			n = "NULL"
		}
		vals = append(vals, fmt.Sprintf("(%d, %s, %s, %d.%02d, %d.5, '2024-01-%02d')", i, k, n, i*3, i, i, i))
	}
	if _, err := exec.Exec(ctx, c, "INSERT INTO analytics.t VALUES "+strings.Join(vals, ", ")); err != nil {
		t.Fatal(err)
	}
	pushed := []string{
		"SELECT count(*) FROM t",
		"SELECT count(1), count(n), count(k) FROM analytics.t",
		"SELECT * FROM t",
		"SELECT id, k AS key, n FROM t",
		"SELECT * FROM t WHERE n > 3 AND k <> 'a'",
		"SELECT id FROM t WHERE n >= 4 OR n IS NULL",
		"SELECT id, k FROM t WHERE k < 'b' AND NOT (id <= 2)",
		"SELECT id FROM t WHERE k IS NOT NULL AND n != 5",
		"SELECT id FROM t WHERE n IN (1, 2, 3) OR k NOT IN ('a', 'B')",
		"SELECT id, k FROM t WHERE length(k) = 2",
		"SELECT id FROM t WHERE coalesce(n, 100) > 9",
		"SELECT id FROM t WHERE d > 20.5 AND d <= 60",
		"SELECT id FROM t WHERE n = NULL",
		"SELECT k, count(*), sum(n), min(n), max(n), avg(n) FROM t GROUP BY k",
		"SELECT n, count(*) AS c, min(k), max(k), min(d), max(day) FROM t GROUP BY n ORDER BY c DESC, 1",
		"SELECT k, sum(id) FROM t WHERE n > 2 GROUP BY 1 ORDER BY 1 DESC",
		"SELECT sum(n), avg(id), min(day), max(d) FROM t",
		"SELECT sum(n), avg(n), min(k), count(*) FROM t WHERE id > 100",
		"SELECT * FROM t ORDER BY k",
		"SELECT id, k FROM t ORDER BY k DESC, id",
		"SELECT id, n FROM t ORDER BY n NULLS LAST, id DESC",
		"SELECT id, n FROM t ORDER BY n DESC NULLS FIRST",
		"SELECT id, d FROM t ORDER BY 2 DESC LIMIT 5",
		"SELECT id FROM t LIMIT 4",
		"SELECT id, k FROM t ORDER BY k, id LIMIT 3 OFFSET 4",
		"SELECT id FROM t LIMIT 2, 3",
		"SELECT k, count(*) FROM t GROUP BY k LIMIT 2 OFFSET 1",
		"SELECT id, day FROM t WHERE id < 3",
	}
	for _, s := range pushed {
		rs, fallback, err := c.QueryTable(ctx, "t", s)
		if err != nil || fallback != "" {
			t.Errorf("%s: pushdown: %v, fallback %q", s, err, fallback)
			continue
		}
		cols, rows, err := scanAnswer(ctx, c, s)
		if err != nil {
			t.Errorf("%s: scan: %v", s, err)
			continue
		}
		if !slices.Equal(rs.GetColumns(), cols) {
			t.Errorf("%s: columns %q, the scan's %q", s, rs.GetColumns(), cols)
		}
		if got := rowsOf(rs); !slices.EqualFunc(got, rows, slices.Equal) {
			t.Errorf("%s:\n pushdown %q\n scan     %q", s, got, rows)
		}
	}
	// No PostgreSQL equivalent: the node says which part, and Exec answers
	// through the scan.
	for s, says := range map[string]string{
		"SELECT id FROM t WHERE upper(k) = 'B'":     "upper",
		"SELECT id + 1 FROM t":                      "id + 1",
		"SELECT sum(f) FROM t":                      "SUM of a FLOAT64",
		"SELECT id FROM t WHERE f > 2":              "column f",
		"SELECT id FROM t WHERE day > '2024-01-03'": "column day",
		"SELECT id FROM t WHERE n = '3'":            "different types",
	} {
		_, fallback, err := c.QueryTable(ctx, "t", s)
		if err != nil || !strings.Contains(fallback, says) {
			t.Errorf("%s: %v, fallback %q; want one naming %q", s, err, fallback, says)
		}
		got, err := exec.Exec(ctx, c, s)
		if err != nil {
			t.Errorf("Exec %s: %v", s, err)
			continue
		}
		_, rows, err := scanAnswer(ctx, c, s)
		if err != nil || !slices.EqualFunc(rowsOf(got.GetResult()), rows, slices.Equal) {
			t.Errorf("Exec %s: %q, the scan's %q (%v)", s, rowsOf(got.GetResult()), rows, err)
		}
	}
	// A SUM past BIGINT: PostgreSQL's out-of-range falls back, and the
	// scan path gives the query's own error.
	if _, err := exec.Exec(ctx, c, "CREATE TABLE analytics.big (id BIGINT) DUPLICATE KEY(id)"); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.Exec(ctx, c, "INSERT INTO analytics.big VALUES (9223372036854775807), (1)"); err != nil {
		t.Fatal(err)
	}
	if _, fallback, err := c.QueryTable(ctx, "big", "SELECT sum(id) FROM big"); err != nil || !strings.Contains(fallback, "out of range") {
		t.Errorf("SUM past BIGINT: %v, fallback %q; want a fallback", err, fallback)
	}
	_, err := exec.Exec(ctx, c, "SELECT sum(id) FROM big")
	wantCode(t, "SUM past BIGINT", err, api.ErrorCode_INVALID_ARGUMENT, "out of the range of BIGINT")
	// Exec takes the pushdown, and an unknown table is NOT_FOUND.
	got, err := exec.Exec(ctx, c, "SELECT count(*) FROM analytics.t WHERE n > 3")
	if err != nil || len(got.GetResult().GetRows()) != 1 {
		t.Fatalf("Exec count: %v %v", got, err)
	}
	_, err = exec.Exec(ctx, c, "SELECT count(*) FROM nosuch")
	wantCode(t, "SELECT from a missing table", err, api.ErrorCode_NOT_FOUND, "nosuch")
}
