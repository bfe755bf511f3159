package query

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/loadnode/loadnode/api"
)

// memSource pages a table held in memory, page rows at a time.
type memSource struct {
	schema *api.TableSpec
	rows   []*api.Row
	page   int
	pages  int // pages read
}

func (s *memSource) Page(_ context.Context, table string, cursor []byte) (*api.TableSpec, []*api.Row, []byte, error) {
	if !strings.EqualFold(table, s.schema.GetName()) {
		return nil, nil, nil, fmt.Errorf("no table %s", table)
	}
	s.pages++
	at := 0
	if len(cursor) == 8 {
		at = int(binary.BigEndian.Uint64(cursor))
	}
	end := min(at+s.page, len(s.rows))
	var next []byte
	if end < len(s.rows) {
		next = binary.BigEndian.AppendUint64(nil, uint64(end))
	}
	return s.schema, s.rows[at:end], next, nil
}

func i64(x int64) *api.Value  { return &api.Value{Kind: &api.Value_Int64{Int64: x}} }
func str(s string) *api.Value { return &api.Value{Kind: &api.Value_String_{String_: s}} }
func dec(s string) *api.Value { return &api.Value{Kind: &api.Value_Decimal{Decimal: s}} }
func f64(f float64) *api.Value {
	return &api.Value{Kind: &api.Value_Float64{Float64: f}}
}
func null() *api.Value { return &api.Value{Kind: &api.Value_Null{Null: true}} }

// orders is a small table: id, city, amount DECIMAL(10,2), qty INT, score DOUBLE, at DATETIME.
func orders() *memSource {
	schema := &api.TableSpec{Name: "orders", Columns: []*api.Column{
		{Name: "id", Type: api.ColumnType_INT64},
		{Name: "city", Type: api.ColumnType_STRING},
		{Name: "amount", Type: api.ColumnType_DECIMAL, Precision: 10, Scale: 2},
		{Name: "qty", Type: api.ColumnType_INT32},
		{Name: "score", Type: api.ColumnType_FLOAT64},
		{Name: "at", Type: api.ColumnType_DATETIME},
	}}
	at := func(s int64) *api.Value {
		return &api.Value{Kind: &api.Value_DatetimeMicros{DatetimeMicros: 1_700_000_000_000_000 + s*1e6}}
	}
	rows := [][]*api.Value{
		{i64(1), str("paris"), dec("10.50"), i64(2), f64(0.5), at(0)},
		{i64(2), str("rome"), dec("3.25"), i64(1), f64(1.5), at(60)},
		{i64(3), str("paris"), null(), i64(5), null(), at(120)},
		{i64(4), null(), dec("-1.00"), null(), f64(2), null()},
		{i64(5), str("rome"), dec("7.00"), i64(3), f64(1e20), at(180)},
	}
	src := &memSource{schema: schema, page: 2}
	for _, r := range rows {
		src.rows = append(src.rows, &api.Row{Values: r})
	}
	return src
}

// run parses and runs sql over src; the result as text: a header line of
// the columns, then one line per row, cells "|"-separated, NULL as NULL.
func run(t *testing.T, src Source, sql string, opts ...Option) (string, error) {
	t.Helper()
	q, err := Parse(sql)
	if err != nil {
		return "", err
	}
	res, err := Run(context.Background(), src, q, opts...)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, c := range res.Columns {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(c.Name)
	}
	for _, row := range res.Text() {
		b.WriteByte('\n')
		for j, c := range row {
			if j > 0 {
				b.WriteByte('|')
			}
			if c == nil {
				b.WriteString("NULL")
			} else {
				b.WriteString(*c)
			}
		}
	}
	return b.String(), nil
}

func TestSelect(t *testing.T) {
	checkQueries(t, []queryCase{
		{"SELECT count(*) FROM orders", "count(*)\n5"},
		{"select COUNT(1) from orders;", "COUNT(1)\n5"},
		{"SELECT count(city), count(amount) AS n FROM orders", "count(city)|n\n4|4"},
		{"SELECT id, city FROM orders WHERE qty >= 2 ORDER BY id DESC", "id|city\n5|rome\n3|paris\n1|paris"},
		{"SELECT * FROM orders WHERE id = 2", "id|city|amount|qty|score|at\n2|rome|3.25|1|1.5|2023-11-14 22:14:20"},
		{"SELECT id FROM orders WHERE city IS NULL", "id\n4"},
		{"SELECT id FROM orders WHERE city LIKE 'pa%' AND amount > 5", "id\n1"},
		{"SELECT id, upper(city) c FROM orders WHERE id IN (1, 2) ORDER BY 1", "id|c\n1|PARIS\n2|ROME"},
		{"SELECT id, qty * 10 AS q10 FROM orders ORDER BY q10 DESC LIMIT 2", "id|q10\n3|50\n5|30"},
		{"SELECT id FROM orders ORDER BY city, id", "id\n4\n1\n3\n2\n5"},              // NULL first ascending
		{"SELECT id FROM orders ORDER BY city DESC, id", "id\n2\n5\n1\n3\n4"},         // NULL last descending
		{"SELECT id FROM orders ORDER BY city NULLS LAST, id LIMIT 3", "id\n1\n3\n2"}, // explicit
		{"SELECT id FROM orders ORDER BY amount", "id\n3\n4\n2\n5\n1"},                // decimals as numbers
		{"SELECT id FROM orders LIMIT 2 OFFSET 1", "id\n2\n3"},                        // storage order
		{"SELECT id FROM orders LIMIT 3, 1", "id\n4"},                                 // LIMIT m, n
		{"SELECT id FROM orders ORDER BY id DESC LIMIT 1, 2", "id\n4\n3"},             // top-K with offset
		{"SELECT o.id FROM orders AS o WHERE o.qty = 1", "id\n2"},                     // qualifiers
		{"SELECT orders.id, id + 1 FROM test.orders WHERE orders.id = 1", ""},         // database: none here
		{"SELECT city, count(*), sum(qty), min(amount), max(at) FROM orders GROUP BY city ORDER BY city",
			"city|count(*)|sum(qty)|min(amount)|max(at)\nNULL|1|NULL|-1.00|NULL\nparis|2|7|10.50|2023-11-14 22:15:20\nrome|2|4|3.25|2023-11-14 22:16:20"},
		{"SELECT sum(amount), avg(amount), avg(qty), sum(score), avg(score) FROM orders",
			"sum(amount)|avg(amount)|avg(qty)|sum(score)|avg(score)\n19.75|4.9375|2.75|1e+20|2.5e+19"},
		{"SELECT city, sum(qty) s FROM orders WHERE city IS NOT NULL GROUP BY 1 ORDER BY s DESC", "city|s\nparis|7\nrome|4"},
		{"SELECT upper(city) u, count(*) FROM orders GROUP BY u ORDER BY 2 DESC, u LIMIT 1", "u|count(*)\nPARIS|2"},
		{"SELECT count(*), sum(qty), avg(qty), min(id) FROM orders WHERE id > 100", "count(*)|sum(qty)|avg(qty)|min(id)\n0|NULL|NULL|NULL"},
		{"SELECT 1 + 1 AS two, 'x'", "two|'x'\n2|x"},
		{"SELECT id, score FROM orders WHERE id IN (1, 5) ORDER BY id", "id|score\n1|0.5\n5|1e+20"},
		{"SELECT id, score > 1 FROM orders WHERE id = 2", "id|score > 1\n2|1"},
		{"SELECT city FROM orders GROUP BY city ORDER BY city LIMIT 1 OFFSET 1", "city\nparis"},
		{"SELECT CASE WHEN qty > 2 THEN 'big' ELSE 'small' END size, count(*) FROM orders GROUP BY size ORDER BY size", "size|count(*)\nbig|2\nsmall|3"},
	})
}

// queryCase is a statement over orders() and its result as run renders
// it ("": an error).
type queryCase struct{ sql, want string }

func checkQueries(t *testing.T, cases []queryCase) {
	t.Helper()
	for _, tc := range cases {
		got, err := run(t, orders(), tc.sql)
		if tc.want == "" {
			if err == nil {
				t.Errorf("%s: ran (%q), want an error", tc.sql, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.sql, got, tc.want)
		}
	}
}

func TestSumEmptyIsNull(t *testing.T) {
	// The case above: SUM over no rows is NULL, not 0.
	got, err := run(t, orders(), "SELECT sum(qty) FROM orders WHERE id > 100")
	if err != nil || got != "sum(qty)\nNULL" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct{ sql, want string }{
		{"SELECT a.id FROM orders a JOIN t b ON a.id = b.id", "JOIN is not supported"},
		{"SELECT id FROM orders, t", "JOIN is not supported"},
		{"SELECT id FROM orders WHERE id IN (SELECT id FROM t)", "subqueries are not supported"},
		{"SELECT * FROM (SELECT 1) x", "subqueries are not supported"},
		{"SELECT id FROM orders UNION SELECT id FROM t", "UNION is not supported"},
		{"SELECT id FROM orders WHERE count(*) > 1", "COUNT in WHERE is not supported"},
		{"SELECT sum(count(*)) FROM orders", "COUNT inside an aggregate's argument is not supported"},
		{"SELECT qty + count(*) FROM orders", "qty + count(*) reads column qty outside an aggregate: with an aggregate, that needs GROUP BY qty"},
		{"SELECT city, qty * count(*) FROM orders GROUP BY city", "reads column qty, which is neither grouped (GROUP BY) nor inside an aggregate"},
		{"SELECT city FROM orders GROUP BY city HAVING qty > 1", "HAVING reads column qty"},
		{"SELECT city FROM orders GROUP BY city HAVING sum(nosuch) > 1", "table orders has no column nosuch"},
		{"SELECT city FROM orders HAVING count(*) > 1 GROUP BY city", "GROUP BY at"},
		{"SELECT DISTINCT * FROM orders", "SELECT DISTINCT * is not supported: name the columns"},
		{"SELECT DISTINCT count(*) FROM orders", "SELECT DISTINCT with an aggregate (count(*)) is not supported"},
		{"SELECT DISTINCT city FROM orders GROUP BY city", "SELECT DISTINCT with GROUP BY is not supported"},
		{"SELECT DISTINCT city FROM orders ORDER BY qty", "ORDER BY qty: with GROUP BY or an aggregate"},
		{"SELECT sum(DISTINCT qty, id) FROM orders", "SUM takes one argument"},
		{"SELECT count(DISTINCT *) FROM orders", "COUNT(DISTINCT *) is not supported"},
		{"SELECT count(DISTINCT) FROM orders", "COUNT(DISTINCT) takes an argument"},
		{"SELECT " + strings.Repeat("count(*) + ", maxAggregates+1) + "1 FROM orders", "more than 64 aggregates in one expression"},
		{"SELECT DISTINCT 1", "need FROM a table"},
		{"SELECT count(*) + __loadnode_agg_0 FROM orders", "names beginning with __loadnode_agg_ are loadnode's own"},
		{"SELECT count(*) FROM orders HAVING `__LOADNODE_AGG_3` > 1", "names beginning with __loadnode_agg_ are loadnode's own"},
		{"SELECT row_number() OVER (ORDER BY id) FROM orders", "window functions (OVER) are not supported"},
		{"WITH x AS (SELECT 1) SELECT * FROM x", "WITH (common table expressions) is not supported"},
		{"SELECT id FROM orders WHERE nosuch > 1", "table orders has no column nosuch"},
		{"SELECT nosuchfn(id) FROM orders", "unknown function NOSUCHFN"},
		{"SELECT city, qty FROM orders GROUP BY city", "qty is neither grouped (GROUP BY) nor an aggregate"},
		{"SELECT id, count(*) FROM orders", "id is not an aggregate"},
		{"SELECT * FROM orders GROUP BY city", "SELECT * with GROUP BY"},
		{"SELECT id FROM orders ORDER BY 3", "ORDER BY 3: the SELECT list has 1 items"},
		{"SELECT city, count(*) FROM orders GROUP BY city ORDER BY qty", "ORDER BY qty: with GROUP BY or an aggregate"},
		{"SELECT id FROM orders LIMIT -1", "LIMIT takes a number of rows"},
		{"SELECT id FROM orders OFFSET 2", "OFFSET without LIMIT"},
		{"SELECT id FROM orders ORDER BY id WHERE id = 1", "WHERE at"},
		{"SELECT id FROM orders PARTITION (p1)", "FROM ... PARTITION is not supported"},
		{"SELECT sum(at) FROM orders", "SUM of a DATETIME value is not supported"},
		{"SELECT avg(*) FROM orders", "AVG(*) is not supported"},
		{"SELECT id FROM orders WHERE city = 'x", "unterminated string"},
		{"SELECT id FROM orders FOR UPDATE", "FOR UPDATE is not supported"},
		{"SELECT id FROM nosuch", "no table nosuch"},
		{"SELECT id FROM other.orders", "table orders is not in database other"},
		{"SELECT id FROM orders; SELECT 1", "one statement at a time"},
		{"SELECT count(*)", "count(*) needs FROM a table"},
		{"SELECT id FROM orders WHERE id = ?", "placeholders (?) are not supported"},
		{"SELECT at + INTERVAL 1 DAY FROM orders", "at + INTERVAL 1 DAY"}, // no alias DAY: the whole item is refused
		{"SELECT " + strings.Repeat("1+", MaxQueryBytes/2) + "1", "over the limit of 65536 bytes"},
	} {
		got, err := run(t, orders(), tc.sql)
		if err == nil {
			t.Errorf("%.60s: ran (%q), want an error with %q", tc.sql, got, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.60s: error %q, want it to contain %q", tc.sql, err, tc.want)
		}
	}
}

// TestAggregateExpressions: expressions over aggregates, HAVING, DISTINCT
// aggregates and SELECT DISTINCT, as Doris answers them.
func TestAggregateExpressions(t *testing.T) {
	checkQueries(t, []queryCase{
		{"SELECT count(*), sum(qty) > 0 FROM orders", "count(*)|sum(qty) > 0\n5|1"},
		{"SELECT sum(qty) / count(qty) FROM orders", "sum(qty) / count(qty)\n2.75"},
		{"SELECT round(avg(score), 2) a FROM orders WHERE id < 5", "a\n1.33"},
		{"SELECT city, sum(qty) * 10 AS t FROM orders WHERE city IS NOT NULL GROUP BY city ORDER BY city", "city|t\nparis|70\nrome|40"},
		{"SELECT concat(city, ':', count(*)) c FROM orders WHERE city IS NOT NULL GROUP BY city ORDER BY c DESC", "c\nrome:2\nparis:2"},
		{"SELECT city, sum(qty) / count(*) r FROM orders GROUP BY city ORDER BY r DESC", "city|r\nparis|3.5\nrome|2\nNULL|NULL"},
		{"SELECT max(id) - min(id) + 1 = count(*) FROM orders", "max(id) - min(id) + 1 = count(*)\n1"},
		// HAVING: over aggregates, a grouped column, an item's alias; without GROUP BY.
		{"SELECT city, count(*) FROM orders GROUP BY city HAVING count(*) > 1 ORDER BY city", "city|count(*)\nparis|2\nrome|2"},
		{"SELECT city, sum(qty) s FROM orders GROUP BY city HAVING s > 5", "city|s\nparis|7"},
		{"SELECT city, count(*) AS qty FROM orders GROUP BY city HAVING qty > 1 ORDER BY city", "city|qty\nparis|2\nrome|2"}, // the alias: qty is no grouped column
		{"SELECT city, max(qty) AS city2 FROM orders GROUP BY city HAVING city = 'rome'", "city|city2\nrome|3"},              // the grouped column
		{"SELECT city FROM orders GROUP BY city HAVING city = 'rome' AND max(id) > 4", "city\nrome"},
		{"SELECT city, count(*) n FROM orders GROUP BY city HAVING sum(amount) < 10.3 ORDER BY n DESC, city LIMIT 1", "city|n\nrome|2"},
		{"SELECT count(*) FROM orders HAVING count(*) > 10", "count(*)"},
		{"SELECT count(*) FROM orders HAVING count(*) = 5", "count(*)\n5"},
		// DISTINCT aggregates skip NULLs and count each value once.
		{"SELECT count(DISTINCT city), count(city), count(*) = count(DISTINCT id) FROM orders", "count(DISTINCT city)|count(city)|count(*) = count(DISTINCT id)\n2|4|1"},
		{"SELECT count(DISTINCT city, qty) FROM orders", "count(DISTINCT city, qty)\n4"},
		{"SELECT sum(DISTINCT length(city)), avg(DISTINCT length(city)) FROM orders", "sum(DISTINCT length(city))|avg(DISTINCT length(city))\n9|4.5"},
		{"SELECT city, count(DISTINCT qty) FROM orders GROUP BY city ORDER BY city", "city|count(DISTINCT qty)\nNULL|0\nparis|2\nrome|2"},
		// SELECT DISTINCT: one row per distinct item list.
		{"SELECT DISTINCT city FROM orders ORDER BY city", "city\nNULL\nparis\nrome"},
		{"SELECT DISTINCT city, qty > 1 big FROM orders WHERE qty IS NOT NULL ORDER BY city, big", "city|big\nparis|1\nrome|0\nrome|1"},
		{"SELECT DISTINCT length(city) FROM orders WHERE city IS NOT NULL", "length(city)\n5\n4"},
	})
}

// TestAggregateColumnName: a column named as the aggregates' virtual
// columns is refused by name, never read as an aggregate.
func TestAggregateColumnName(t *testing.T) {
	src := orders()
	src.schema.Columns[3].Name = AggColumn(0)
	_, err := run(t, src, "SELECT sum(id) + 1 FROM orders")
	if err == nil || !strings.Contains(err.Error(), "has a column named __loadnode_agg_0") {
		t.Fatalf("got %v; want the column named", err)
	}
}

func TestSumOverflowIsAnError(t *testing.T) {
	src := &memSource{schema: &api.TableSpec{Name: "t", Columns: []*api.Column{{Name: "v", Type: api.ColumnType_INT64}}}, page: 10}
	for _, v := range []int64{1 << 62, 1 << 62, 1 << 62} {
		src.rows = append(src.rows, &api.Row{Values: []*api.Value{i64(v)}})
	}
	if got, err := run(t, src, "SELECT sum(v) FROM t"); err == nil || !strings.Contains(err.Error(), "out of the range of BIGINT") {
		t.Errorf("sum past BIGINT: %q, %v", got, err)
	}
	// AVG of the same values is exact enough: a DOUBLE.
	if got, err := run(t, src, "SELECT avg(v) FROM t"); err != nil || got != "avg(v)\n4.611686018427388e+18" {
		t.Errorf("avg past BIGINT: %q, %v", got, err)
	}
}

func TestLargeintAndDecimalAggregates(t *testing.T) {
	src := &memSource{schema: &api.TableSpec{Name: "t", Columns: []*api.Column{
		{Name: "l", Type: api.ColumnType_INT128},
		{Name: "d", Type: api.ColumnType_DECIMAL, Precision: 10, Scale: 5},
	}}, page: 10}
	for _, r := range [][]*api.Value{{dec("170141183460469231731687303715884105727"), dec("222.22200")}, {dec("-1"), dec("444.44400")}, {null(), null()}} {
		src.rows = append(src.rows, &api.Row{Values: r})
	}
	got, err := run(t, src, "SELECT sum(l), avg(l), sum(d), avg(d) FROM t")
	want := "sum(l)|avg(l)|sum(d)|avg(d)\n170141183460469231731687303715884105726|8.507059173023462e+37|666.66600|333.33300"
	if err != nil || got != want {
		t.Errorf("got %q, %v\nwant %q", got, err, want)
	}
}

func TestBounds(t *testing.T) {
	src := &memSource{schema: &api.TableSpec{Name: "t", Columns: []*api.Column{{Name: "v", Type: api.ColumnType_INT64}}}, page: 7}
	for i := range 50 {
		src.rows = append(src.rows, &api.Row{Values: []*api.Value{i64(int64(i % 25))}})
	}
	for _, tc := range []struct{ sql, want string }{
		{"SELECT v FROM t ORDER BY v", "ORDER BY without LIMIT sorts at most 20 rows"},
		{"SELECT v FROM t ORDER BY v LIMIT 15 OFFSET 10", "keeps 25 rows, over the limit of 20"},
		{"SELECT v, count(*) FROM t GROUP BY v", "GROUP BY makes more than 20 groups"},
		{"SELECT DISTINCT v FROM t", "GROUP BY makes more than 20 groups"},
		{"SELECT v FROM t", "the result has more than 20 rows"},
	} {
		if got, err := run(t, src, tc.sql, WithMaxRows(20)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %q, %v, want an error with %q", tc.sql, got, err, tc.want)
		}
	}
	// Within the bounds: top-K keeps only offset+limit rows.
	got, err := run(t, src, "SELECT v FROM t ORDER BY v DESC LIMIT 3", WithMaxRows(20))
	if err != nil || got != "v\n24\n24\n23" {
		t.Errorf("top-K: %q, %v", got, err)
	}
	got, err = run(t, src, "SELECT count(*), sum(v) FROM t", WithMaxRows(20))
	if err != nil || got != "count(*)|sum(v)\n50|600" {
		t.Errorf("count over more rows than the bound: %q, %v", got, err)
	}
	// DISTINCT's values: bounded in bytes, over every aggregate and group
	// (here 20 integers' worth).
	twenty := WithMaxDistinctBytes(20 * intKeyBytes)
	over := fmt.Sprintf("DISTINCT keeps more than %d bytes", 20*intKeyBytes)
	for _, tc := range []struct{ sql, want string }{
		{"SELECT count(DISTINCT v) FROM t", "count(DISTINCT v): " + over + " of values (some 20 integers"},
		{"SELECT v % 2, count(DISTINCT v) FROM t GROUP BY 1", over},             // over every group
		{"SELECT count(DISTINCT concat('x', v)) FROM t", over},                  // texts: more per value
		{"SELECT count(DISTINCT v, v) FROM t", "count(DISTINCT v, v): " + over}, // keys of several
	} {
		if got, err := run(t, src, tc.sql, twenty); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %q, %v, want an error with %q", tc.sql, got, err, tc.want)
		}
	}
	got, err = run(t, src, "SELECT count(DISTINCT v % 15), count(*) - count(DISTINCT v % 5) FROM t", twenty)
	if err != nil || got != "count(DISTINCT v % 15)|count(*) - count(DISTINCT v % 5)\n15|45" {
		t.Errorf("distinct values at the bound (15 + 5 integers of 20): %q, %v", got, err)
	}
	if _, err := run(t, src, "SELECT count(DISTINCT v % 15), count(DISTINCT v % 6) FROM t", twenty); err == nil {
		t.Errorf("21 integers under a bound of 20: no error")
	}
	// LIMIT without ORDER BY stops reading.
	src.pages = 0
	if _, err := run(t, src, "SELECT v FROM t LIMIT 3"); err != nil || src.pages != 1 {
		t.Errorf("LIMIT 3 read %d pages, %v; want 1", src.pages, err)
	}
}

// genSource generates n rows (id, name) in pages, reusing one page: it
// allocates nothing per row, so what a query allocates is its own. (It
// breaks Source's contract that rows stay valid: fine for aggregates that
// keep no value, not for MIN and MAX.)
// TestDistinctMillionIDs: the check of exactly once over a million rows
// (every id once) answers within the default bound; its two
// count(DISTINCT id) are one aggregate, whose allocations (the map's
// growth included: 72 MB with Go 1.26) stay under twice the 40 MB the
// bound counts for a million integers (two maps would take some 144 MB).
func TestDistinctMillionIDs(t *testing.T) {
	const n = 1_000_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, err := run(t, newGenSource(n, 1000), "SELECT count(*) = count(DISTINCT id), count(DISTINCT id) FROM big")
	runtime.ReadMemStats(&after)
	if err != nil || got != "count(*) = count(DISTINCT id)|count(DISTINCT id)\n1|1000000" {
		t.Fatalf("%q, %v", got, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2*n*intKeyBytes {
		t.Errorf("allocated %d bytes, over twice the %d the bound counts for a million integers: the aggregate written twice kept twice?", alloc, n*intKeyBytes)
	}
}

type genSource struct {
	n, page int
	rows    []*api.Row
	ids     []*api.Value_Int64
}

func newGenSource(n, page int) *genSource {
	g := &genSource{n: n, page: page}
	for range page {
		id := &api.Value_Int64{}
		g.ids = append(g.ids, id)
		g.rows = append(g.rows, &api.Row{Values: []*api.Value{{Kind: id}, str("a row of text that takes some room")}})
	}
	return g
}

var genSchema = &api.TableSpec{Name: "big", Columns: []*api.Column{{Name: "id", Type: api.ColumnType_INT64}, {Name: "name", Type: api.ColumnType_STRING}}}

func (g *genSource) Page(_ context.Context, _ string, cursor []byte) (*api.TableSpec, []*api.Row, []byte, error) {
	at := 0
	if len(cursor) == 8 {
		at = int(binary.BigEndian.Uint64(cursor))
	}
	end := min(at+g.page, g.n)
	for i := at; i < end; i++ {
		g.ids[i-at].Int64 = int64(i)
	}
	var next []byte
	if end < g.n {
		next = binary.BigEndian.AppendUint64(nil, uint64(end))
	}
	return genSchema, g.rows[:end-at], next, nil
}

// TestHugeTableStreams: COUNT(*), a filtered COUNT and SUM over 1,000,000
// rows allocate far less than the rows (about 100 MB as wire values):
// they keep no rows.
func TestHugeTableStreams(t *testing.T) {
	const n = 1_000_000
	for _, tc := range []struct{ sql, want string }{
		{"SELECT count(*) FROM big", "count(*)\n1000000"},
		{"SELECT count(*), sum(id), avg(id) FROM big WHERE id % 2 = 0", "count(*)|sum(id)|avg(id)\n500000|249999500000|499999"},
	} {
		src := newGenSource(n, 1000)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		got, err := run(t, src, tc.sql)
		runtime.ReadMemStats(&after)
		if err != nil || got != tc.want {
			t.Fatalf("%s: %q, %v", tc.sql, got, err)
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d bytes allocated over %d rows", tc.sql, alloc, n)
		if alloc > 4<<20 {
			t.Errorf("%s allocated %d bytes over %d rows: it keeps or copies rows", tc.sql, alloc, n)
		}
	}
}

func TestRender(t *testing.T) {
	tenth := 0.1
	for _, tc := range []struct {
		c    Column
		v    *api.Value
		want string
	}{
		{Column{Type: api.ColumnType_FLOAT64}, f64(1312831962.567818), "1312831962.567818"},
		{Column{Type: api.ColumnType_FLOAT64}, f64(2), "2"},
		{Column{Type: api.ColumnType_FLOAT64}, f64(1e16), "1e+16"},
		{Column{Type: api.ColumnType_FLOAT64}, f64(0.00001), "1e-05"},
		{Column{Type: api.ColumnType_FLOAT64}, f64(tenth + 2*tenth), "0.30000000000000004"},
		{Column{Type: api.ColumnType_FLOAT32}, f64(float64(float32(-15205.859375))), "-15205.859"},
		{Column{Type: api.ColumnType_FLOAT32}, f64(float64(float32(12345678))), "1.2345678e+07"},
		{Column{Type: api.ColumnType_BOOL}, &api.Value{Kind: &api.Value_Bool{Bool: true}}, "1"},
		{Column{Type: api.ColumnType_DECIMAL, Scale: 2}, dec("-0.50"), "-0.50"},
		{Column{Type: api.ColumnType_DATE}, &api.Value{Kind: &api.Value_Date{Date: 19000}}, "2022-01-08"},
		{Column{Type: api.ColumnType_DATETIME}, &api.Value{Kind: &api.Value_DatetimeMicros{DatetimeMicros: 1_500_000}}, "1970-01-01 00:00:01"},
		{Column{Type: api.ColumnType_DATETIME, Precision: 3}, &api.Value{Kind: &api.Value_DatetimeMicros{DatetimeMicros: 1_500_000}}, "1970-01-01 00:00:01.500"},
		{Column{Type: api.ColumnType_TIMESTAMP, Precision: 6}, &api.Value{Kind: &api.Value_TimestampMicros{TimestampMicros: 1}}, "1970-01-01 00:00:00.000001"},
	} {
		if got, ok := Render(tc.c, tc.v); !ok || got != tc.want {
			t.Errorf("Render(%v, %v) = %q, %v, want %q", tc.c.Type, tc.v, got, ok, tc.want)
		}
	}
	if _, ok := Render(Column{}, null()); ok {
		t.Errorf("NULL renders")
	}
}

func TestIsSelect(t *testing.T) {
	for s, want := range map[string]bool{
		"SELECT 1": true, "  /* c */ select * from t": true, "-- c\nSELECT 1": true, "with x as (select 1) select 1": true,
		"SHOW TABLES": false, "INSERT INTO t SELECT 1": false, "": false,
	} {
		if got := IsSelect(s); got != want {
			t.Errorf("IsSelect(%q) = %v", s, got)
		}
	}
}

func TestParse(t *testing.T) {
	q, err := Parse("select `t`.id, COUNT(*) n, sum(t.qty) AS 's q', upper(name) FROM db.t WHERE t.id > 1 /* c */ GROUP BY 1, upper(name) ORDER BY n DESC NULLS FIRST, 4 LIMIT 5, 10;")
	if err != nil {
		t.Fatal(err)
	}
	var items []string
	for _, it := range q.Items {
		items = append(items, fmt.Sprintf("%s=%s:%q", it.Name, it.Agg, strings.TrimSpace(it.Expr)))
	}
	got := fmt.Sprintf("%s.%s %v where=%q group=%+v order=%+v limit=%d offset=%d", q.DB, q.Table, items, strings.TrimSpace(q.Where),
		len(q.GroupBy), len(q.OrderBy), q.Limit, q.Offset)
	want := `db.t [id=:"id" n=COUNT:"*" s q=SUM:"qty" upper(name)=:"upper(name)"] where="id > 1" group=2 order=2 limit=10 offset=5`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if k := q.OrderBy[0]; !k.Desc || !k.NullsFirst || strings.TrimSpace(k.Expr) != "n" {
		t.Errorf("ORDER BY n DESC NULLS FIRST: %+v", k)
	}
	if k := q.OrderBy[1]; k.Desc || !k.NullsFirst || k.Pos != 4 {
		t.Errorf("ORDER BY 4: %+v", k)
	}
	if q.GroupBy[0].Pos != 1 || strings.TrimSpace(q.GroupBy[1].Expr) != "upper(name)" {
		t.Errorf("GROUP BY: %+v", q.GroupBy)
	}
}

// TestTemporaryPartition: FROM t TEMPORARY PARTITION (tp) reads the
// temporary partition's rows only (its catalog table), with or without
// parentheses and before an alias; a plain FROM t reads t's; more than
// one temporary partition is refused by name.
func TestTemporaryPartition(t *testing.T) {
	temp := orders()
	temp.schema.Name = "orders#tp"
	temp.rows = temp.rows[:1]
	src := twoSources{orders(), temp}
	for sql, want := range map[string]string{
		"SELECT id FROM orders TEMPORARY PARTITION(tp) ORDER BY id":  "id\n1",
		"SELECT o.id FROM orders TEMPORARY PARTITION tp o":           "id\n1",
		"SELECT count(*) FROM orders TEMPORARY PARTITIONS (tp) AS o": "count(*)\n1",
		"SELECT count(*) FROM orders":                                "count(*)\n5",
	} {
		got, err := run(t, src, sql)
		if err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", sql, got, err, want)
		}
	}
	for sql, want := range map[string]string{
		"SELECT id FROM orders TEMPORARY PARTITION (tp, tq)": "more than one temporary partition is not supported",
		"SELECT id FROM orders TEMPORARY (tp)":               "expected PARTITION",
		"SELECT id FROM orders TEMPORARY PARTITION (tp tq)":  "expected , or )",
		"SELECT id FROM orders TEMPORARY PARTITION (nosuch)": "no table orders#nosuch",
	} {
		if _, err := run(t, src, sql); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", sql, err, want)
		}
	}
	q, err := Parse("SELECT id FROM orders TEMPORARY PARTITION (tp)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Postgres(q, orders().schema, `"orders"`, "", 10); !errors.Is(err, ErrNoPushdown) {
		t.Errorf("Postgres of a TEMPORARY PARTITION query: %v, want ErrNoPushdown", err)
	}
}

// twoSources pages whichever of its tables a query names.
type twoSources []*memSource

func (s twoSources) Page(ctx context.Context, table string, cursor []byte) (*api.TableSpec, []*api.Row, []byte, error) {
	for _, m := range s {
		if strings.EqualFold(table, m.schema.GetName()) {
			return m.Page(ctx, table, cursor)
		}
	}
	return nil, nil, nil, fmt.Errorf("no table %s", table)
}

// TestResultSet: a result on the wire: column names, cells rendered as
// Text renders them, NULL as "NULL".
func TestResultSet(t *testing.T) {
	res := &Result{
		Columns: []Column{{Name: "k", Type: api.ColumnType_INT64}, {Name: "v", Type: api.ColumnType_STRING}},
		Rows: [][]*api.Value{
			{{Kind: &api.Value_Int64{Int64: 7}}, {Kind: &api.Value_Null{}}},
		},
	}
	rs := res.ResultSet()
	if got := strings.Join(rs.GetColumns(), ","); got != "k,v" {
		t.Errorf("columns %q, want k,v", got)
	}
	if len(rs.GetRows()) != 1 || strings.Join(rs.GetRows()[0].GetValues(), ",") != "7,NULL" {
		t.Errorf("rows %v, want [7 NULL]", rs.GetRows())
	}
}
