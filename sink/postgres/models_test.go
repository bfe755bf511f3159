package postgres

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// keyIndexes lists the table's unique indexes as "cols|primary|nullsnotdistinct".
func keyIndexes(t *testing.T, s *Sink, name string) []string {
	t.Helper()
	rows, err := s.pool.Query(context.Background(), `SELECT string_agg(a.attname::text, ',' ORDER BY a.attname), i.indisprimary, i.indnullsnotdistinct
		FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey) AS k(attnum)
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
		WHERE i.indrelid = $1::regclass AND i.indisunique GROUP BY i.indexrelid, i.indisprimary, i.indnullsnotdistinct ORDER BY 1`, name)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var cols string
		var pk, nnd bool
		if err := rows.Scan(&cols, &pk, &nnd); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s|%v|%v", cols, pk, nnd))
	}
	return out
}

// insert writes rows (key from the values) outside a job.
func insert(t *testing.T, s *Sink, spec *api.TableSpec, rows ...[]table.Value) {
	t.Helper()
	sc, err := table.NewSchema(spec)
	if err != nil {
		t.Fatal(err)
	}
	var kvs []sink.KV
	for i, vals := range rows {
		pos := table.Pos{JobID: 1, Partition: 0, Offset: int64(i)}
		kvs = append(kvs, sink.KV{Key: table.AppendRowKey(nil, sc, pos, vals), Value: table.AppendValue(nil, sc, pos, vals)})
	}
	if err := s.InsertRows(spec.GetName(), kvs); err != nil {
		t.Fatalf("InsertRows: %v", err)
	}
}

// storedRows renders the table's rows (spec columns), by key.
func storedRows(t *testing.T, s *Sink, spec *api.TableSpec) string {
	t.Helper()
	sc, _ := table.NewSchema(spec)
	var out []string
	err := s.ScanRowsAfter(spec.GetName(), nil, math.MaxInt, func(_, v []byte) error {
		vals, _, err := table.DecodeValue(sc, v, nil)
		if err != nil {
			return err
		}
		var cells []string
		for _, x := range vals {
			switch {
			case x.Null:
				cells = append(cells, "NULL")
			case x.Str != "":
				cells = append(cells, x.Str)
			default:
				cells = append(cells, fmt.Sprint(x.Int))
			}
		}
		out = append(out, strings.Join(cells, " "))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "; ")
}

// TestKeyedTableKeys: a UNIQUE or AGGREGATE table's conflict target is its
// key columns: a primary key when the spec makes them NOT NULL, else
// UNIQUE NULLS NOT DISTINCT (a NULL key is one key); _loadnode_key stays
// unique for scans.
func TestKeyedTableKeys(t *testing.T) {
	s, _ := open(t, false)
	notNull := &api.TableSpec{Name: "u_nn", Model: api.TableModel_UNIQUE, KeyColumns: []string{"a", "b"}, Columns: []*api.Column{
		{Name: "a", Type: api.ColumnType_INT64, NotNull: true}, {Name: "b", Type: api.ColumnType_STRING, NotNull: true}, {Name: "v", Type: api.ColumnType_INT64}}}
	nullable := &api.TableSpec{Name: "u_null", Model: api.TableModel_UNIQUE, KeyColumns: []string{"a"}, Columns: []*api.Column{
		{Name: "a", Type: api.ColumnType_INT64}, {Name: "v", Type: api.ColumnType_INT64}}}
	for range 2 { // the second prepare checks the table it made
		for _, sp := range []*api.TableSpec{notNull, nullable} {
			if err := s.PrepareTable(sp); err != nil {
				t.Fatalf("PrepareTable %s: %v", sp.GetName(), err)
			}
		}
	}
	if got, want := strings.Join(keyIndexes(t, s, "u_nn"), " "), "_loadnode_key|false|false a,b|true|false"; got != want {
		t.Errorf("u_nn unique indexes %q, want %q", got, want)
	}
	if got, want := strings.Join(keyIndexes(t, s, "u_null"), " "), "_loadnode_key|false|false a|false|true"; got != want {
		t.Errorf("u_null unique indexes %q, want %q", got, want)
	}
	// A NULL key is one key: the second row replaces the first.
	insert(t, s, nullable, []table.Value{{Null: true}, {Int: 1}})
	insert(t, s, nullable, []table.Value{{Null: true}, {Int: 2}}, []table.Value{{Int: 7}, {Int: 3}})
	if got, want := storedRows(t, s, nullable), "NULL 2; 7 3"; got != want {
		t.Errorf("u_null rows %q, want %q", got, want)
	}
}

// TestKeyedTableFromEarlierRelease: a keyed table made by the release
// before (primary key _loadnode_key, nothing on the key columns) keeps
// working: preparing it adds the key columns' constraint, and merges go
// on from the rows it holds.
func TestKeyedTableFromEarlierRelease(t *testing.T) {
	s, _ := open(t, false)
	spec := &api.TableSpec{Name: "agg_old", Model: api.TableModel_AGGREGATE, KeyColumns: []string{"k"}, Columns: []*api.Column{
		{Name: "k", Type: api.ColumnType_INT64}, {Name: "n", Type: api.ColumnType_INT64, Aggregation: api.Aggregation_SUM}}}
	exec(t, s, `CREATE TABLE public.agg_old (_loadnode_key bytea NOT NULL PRIMARY KEY, _loadnode_job bigint NOT NULL,
		_loadnode_partition integer NOT NULL, _loadnode_offset bigint NOT NULL, k bigint, n bigint)`)
	sc, _ := table.NewSchema(spec)
	old := []table.Value{{Int: 1}, {Int: 40}}
	key := table.AppendRowKey(nil, sc, table.Pos{}, old)
	if _, err := s.pool.Exec(context.Background(), `INSERT INTO public.agg_old VALUES ($1, 1, 0, 0, 1, 40)`, key); err != nil {
		t.Fatal(err)
	}
	if err := s.PrepareTable(spec); err != nil {
		t.Fatalf("PrepareTable of the earlier release's table: %v", err)
	}
	if got, want := strings.Join(keyIndexes(t, s, "agg_old"), " "), "_loadnode_key|true|false k|false|true"; got != want {
		t.Errorf("unique indexes %q, want %q", got, want)
	}
	insert(t, s, spec, []table.Value{{Int: 1}, {Int: 2}}, []table.Value{{Int: 2}, {Int: 5}}, []table.Value{{Int: 1}, {Int: 1}})
	if got, want := storedRows(t, s, spec), "1 43; 2 5"; got != want {
		t.Errorf("rows %q, want %q", got, want)
	}
	// A unique index on the key columns that lets NULL keys repeat is
	// refused, naming the table and what to do.
	other := &api.TableSpec{Name: "agg_bad", Model: api.TableModel_AGGREGATE, KeyColumns: []string{"k"}, Columns: spec.Columns}
	exec(t, s, `CREATE TABLE public.agg_bad (_loadnode_key bytea NOT NULL PRIMARY KEY, _loadnode_job bigint NOT NULL,
		_loadnode_partition integer NOT NULL, _loadnode_offset bigint NOT NULL, k bigint UNIQUE, n bigint)`)
	if err := s.PrepareTable(other); err == nil || !strings.Contains(err.Error(), `"public"."agg_bad"`) || !strings.Contains(err.Error(), "NULLS NOT DISTINCT") {
		t.Errorf("PrepareTable with a NULLS DISTINCT key index: %v", err)
	}
}

// TestAggregateSQLArithmetic: SUM in SQL wraps integers at their width,
// holds a DECIMAL within its precision and sums FLOAT in float32, as
// table.Schema.Merge does; MIN and MAX of text compare bytes.
func TestAggregateSQLArithmetic(t *testing.T) {
	s, _ := open(t, false)
	spec := &api.TableSpec{Name: "agg_math", Model: api.TableModel_AGGREGATE, KeyColumns: []string{"k"}, Columns: []*api.Column{
		{Name: "k", Type: api.ColumnType_INT64},
		{Name: "i32", Type: api.ColumnType_INT32, Aggregation: api.Aggregation_SUM},
		{Name: "i64", Type: api.ColumnType_INT64, Aggregation: api.Aggregation_SUM},
		{Name: "d", Type: api.ColumnType_DECIMAL, Precision: 4, Scale: 1, Aggregation: api.Aggregation_SUM},
		{Name: "mn", Type: api.ColumnType_STRING, Aggregation: api.Aggregation_MIN},
		{Name: "mx", Type: api.ColumnType_STRING, Aggregation: api.Aggregation_MAX},
	}}
	if err := s.PrepareTable(spec); err != nil {
		t.Fatal(err)
	}
	sc, _ := table.NewSchema(spec)
	a := []table.Value{{Int: 1}, {Int: math.MaxInt32}, {Int: math.MaxInt64}, table.Value128(bigInt(9000)), {Str: "a"}, {Str: "Z"}}
	b := []table.Value{{Int: 1}, {Int: 2}, {Int: 3}, table.Value128(bigInt(2000)), {Str: "B"}, {Str: "b"}}
	insert(t, s, spec, a)
	insert(t, s, spec, b) // a second statement: merged in SQL with the stored row
	want, err := sc.Merge(&table.RowState{Vals: a}, b, table.Pos{}, false, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]table.Value
	_ = s.ScanRowsAfter(spec.GetName(), nil, math.MaxInt, func(_, v []byte) error {
		vals, _, err := table.DecodeValue(sc, v, nil)
		rows = append(rows, vals)
		return err
	})
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	for i, c := range sc.Columns() {
		g, w := rows[0][i], want.Vals[i]
		if g.Int != w.Int || g.Str != w.Str || g.Null != w.Null || table.Big128(g).Cmp(table.Big128(w)) != 0 {
			t.Errorf("%s = %+v, want %+v (as Merge)", c.GetName(), g, w)
		}
	}
}

func bigInt(n int64) *big.Int { return big.NewInt(n) }
