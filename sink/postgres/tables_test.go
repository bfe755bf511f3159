package postgres

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

func spec(name string, cols ...*api.Column) *api.TableSpec {
	return &api.TableSpec{Name: name, Model: api.TableModel_DUPLICATE, Columns: cols}
}

func col(name string, t api.ColumnType) *api.Column { return &api.Column{Name: name, Type: t} }

func exec(t *testing.T, s *Sink, sql string) {
	t.Helper()
	if _, err := s.pool.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// TestPrepareTable: a table is created with the mapped types; preparing it
// again is a no-op; an existing table is checked, and a refusal names the
// column and both types; a hostile name stays one identifier.
func TestPrepareTable(t *testing.T) {
	s, _ := open(t, false)
	all := spec("Orders", col("id", api.ColumnType_INT64), col("price", api.ColumnType_FLOAT64),
		col("note", api.ColumnType_STRING), col("paid", api.ColumnType_BOOL), col("at", api.ColumnType_TIMESTAMP))
	for range 2 {
		if err := s.PrepareTable(all); err != nil {
			t.Fatalf("PrepareTable: %v", err)
		}
	}
	rows, err := s.pool.Query(context.Background(), `SELECT column_name, data_type FROM information_schema.columns
		WHERE table_schema = 'public' AND table_name = 'Orders' ORDER BY ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var n, ty string
		_ = rows.Scan(&n, &ty)
		got = append(got, n+" "+ty)
	}
	want := "_loadnode_key bytea,_loadnode_job bigint,_loadnode_partition integer,_loadnode_offset bigint," +
		"id bigint,price double precision,note text,paid boolean,at timestamp with time zone"
	if strings.Join(got, ",") != want {
		t.Errorf("columns = %s\nwant      %s", strings.Join(got, ","), want)
	}

	exec(t, s, `CREATE TABLE public.narrow (_loadnode_key bytea PRIMARY KEY, _loadnode_job bigint NOT NULL,
		_loadnode_partition integer NOT NULL, _loadnode_offset bigint NOT NULL, id integer, extra text, must text NOT NULL)`)
	for _, c := range []struct {
		spec *api.TableSpec
		want []string
	}{
		{spec("narrow", col("id", api.ColumnType_INT64)), []string{"column id", "integer", "INT64", "bigint"}},
		{spec("narrow", col("nope", api.ColumnType_STRING)), []string{"column nope", "missing"}},
		{spec("Orders", col("id", api.ColumnType_STRING)), []string{"column id", "bigint", "STRING", "text"}},
		{spec("x", col("_loadnode_key", api.ColumnType_STRING)), []string{"_loadnode_key", "loadnode's own"}},
	} {
		err := s.PrepareTable(c.spec)
		var ie *IncompatibleError
		if !errors.As(err, &ie) {
			t.Errorf("PrepareTable(%v) = %v, want an *IncompatibleError", c.spec, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("PrepareTable(%v) = %q, want it to say %q", c.spec, err, w)
			}
		}
	}
	exec(t, s, `ALTER TABLE public.narrow ALTER COLUMN must DROP NOT NULL, ALTER COLUMN id TYPE bigint`)
	if err := s.PrepareTable(spec("narrow", col("id", api.ColumnType_INT64))); err != nil {
		t.Errorf("PrepareTable over a compatible table with an extra nullable column: %v", err)
	}

	evil := `x"; DROP TABLE "Orders"; --`
	if _, err := table.NewSchema(spec(evil, col("id", api.ColumnType_INT64))); err == nil {
		t.Fatalf("table names like %q are valid now: test PrepareTable with it", evil)
	}
	if err := s.PrepareTable(spec(evil, col("id", api.ColumnType_INT64))); err == nil {
		t.Errorf("PrepareTable(%q) succeeded", evil)
	}
	var n int
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM `+pgx.Identifier{"public", "Orders"}.Sanitize()).Scan(&n); err != nil {
		t.Errorf("table Orders after a hostile name: %v", err)
	}
}

// TestCheckRow: text PostgreSQL refuses is caught before a COPY.
func TestCheckRow(t *testing.T) {
	sc, err := table.NewSchema(spec("t", col("n", api.ColumnType_INT64), col("s", api.ColumnType_STRING)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s    string
		null bool
		bad  string
	}{
		{s: "fine"}, {s: ""}, {null: true}, {s: "ü"},
		{s: "a\x00b", bad: "NUL byte"},
		{s: "\xff", bad: "UTF-8"},
	} {
		err := checkRow(sc, []table.Value{{Int: 1}, {Str: c.s, Null: c.null}})
		switch {
		case c.bad == "" && err != nil:
			t.Errorf("checkRow(%q) = %v", c.s, err)
		case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad) || !strings.Contains(err.Error(), "column s")):
			t.Errorf("checkRow(%q) = %v, want an error naming column s and %q", c.s, err, c.bad)
		}
	}
}

// TestUnavailable: with the server stopped, calls fail with an error
// wrapping sink.ErrUnavailable; once it is back the same sink works.
func TestUnavailable(t *testing.T) {
	s, _ := open(t, false)
	sp := spec("down", col("n", api.ColumnType_INT64))
	if err := s.PrepareTable(sp); err != nil {
		t.Fatal(err)
	}
	if err := s.InitStarts(1, map[int32]int64{0: 0}, nil); err != nil {
		t.Fatal(err)
	}
	if err := server.Stop(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := server.StartAgain(); err != nil {
			t.Fatal(err)
		}
	}()
	c := &sink.Commit{JobID: 1, Table: "down", Fence: 1, Ranges: []sink.Range{{Partition: 0, From: 0, To: 1}}}
	if err := s.Commit(c); !errors.Is(err, sink.ErrUnavailable) {
		t.Errorf("Commit with the server down = %v, want an error wrapping sink.ErrUnavailable", err)
	}
	if _, err := s.Progress(1); !errors.Is(err, sink.ErrUnavailable) {
		t.Errorf("Progress with the server down = %v, want an error wrapping sink.ErrUnavailable", err)
	}
	if err := server.StartAgain(); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(c); err != nil {
		t.Errorf("Commit once the server is back: %v", err)
	}
}

// TestCopyTypes: every column type, NULLs and edge values go through the
// binary COPY and come back as written.
func TestCopyTypes(t *testing.T) {
	s, _ := open(t, false)
	sp := spec("types", col("i", api.ColumnType_INT64), col("f", api.ColumnType_FLOAT64), col("s", api.ColumnType_STRING),
		col("b", api.ColumnType_BOOL), col("ts", api.ColumnType_TIMESTAMP))
	sc, err := table.NewSchema(sp)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PrepareTable(sp); err != nil {
		t.Fatal(err)
	}
	if err := s.InitStarts(1, map[int32]int64{-3: 0}, nil); err != nil {
		t.Fatal(err)
	}
	rows := [][]table.Value{
		{{Int: math.MinInt64}, {Float: math.Inf(-1)}, {Str: ""}, {Bool: false}, {Int: -62167219200 * 1e6}},
		{{Int: math.MaxInt64}, {Float: math.Copysign(0, -1)}, {Str: "ünï\tcode"}, {Bool: true}, {Int: 253402300799*1e6 + 999999}},
		{{Null: true}, {Null: true}, {Null: true}, {Null: true}, {Null: true}},
		{{Int: 0}, {Float: 1.5e300}, {Str: "x"}, {Bool: true}, {Int: 0}},
	}
	var kvs []sink.KV
	for i, vals := range rows {
		pos := table.Pos{JobID: 1, Partition: -3, Offset: int64(i)}
		kvs = append(kvs, sink.KV{Key: table.AppendKey(nil, sp.Model, pos, vals), Value: table.AppendValue(nil, sc, pos, vals)})
	}
	c := &sink.Commit{JobID: 1, Table: "types", Fence: 1, Rows: kvs, Ranges: []sink.Range{{Partition: -3, From: 0, To: int64(len(rows))}}}
	if err := s.Commit(c); err != nil {
		t.Fatal(err)
	}
	i := 0
	err = s.ScanRowsAfter("types", nil, 100, func(k, v []byte) error {
		if !bytes.Equal(k, kvs[i].Key) || !bytes.Equal(v, kvs[i].Value) {
			t.Errorf("row %d came back as %x / %x, want %x / %x", i, k, v, kvs[i].Key, kvs[i].Value)
		}
		i++
		return nil
	})
	if err != nil || i != len(rows) {
		t.Fatalf("scan: %d rows, %v", i, err)
	}
	var ts string
	if err := s.pool.QueryRow(context.Background(), `SELECT ts::text FROM public.types WHERE i = 0`).Scan(&ts); err != nil || ts != "1970-01-01 00:00:00+00" {
		t.Errorf("timestamp 0 in PostgreSQL = %q, %v; want 1970-01-01 00:00:00+00", ts, err)
	}
	// Negative zero is stored as such, not folded into +0 on the way in.
	var f float64
	if err := s.pool.QueryRow(context.Background(), `SELECT f FROM public.types WHERE i = $1`, int64(math.MaxInt64)).Scan(&f); err != nil || f != 0 || !math.Signbit(f) {
		t.Errorf("-0 in PostgreSQL = %v (sign bit %t), %v; want -0", f, math.Signbit(f), err)
	}
}

// bytes is the batch's rows in key order, as sent.
func (e *copyBatch) bytes() []byte { return bytes.Join(e.segs, nil) }

// TestCopyBatchSeal: a sealed batch holds its rows in key order, the last
// of a key added twice, and says how many were added.
func TestCopyBatchSeal(t *testing.T) {
	sc, err := table.NewSchema(spec("seal", col("n", api.ColumnType_INT64)))
	if err != nil {
		t.Fatal(err)
	}
	ti := newTableInfo("public", sc)
	row := func(key string, n int64) []byte {
		b, err := appendCopyRow(nil, ti, []byte(key), table.Pos{}, []table.Value{{Int: n}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		keys []string
		want [][]byte
	}{
		{"in order", []string{"a", "b", "c"}, [][]byte{row("a", 0), row("b", 1), row("c", 2)}},
		{"interleaved", []string{"b", "a", "c"}, [][]byte{row("a", 1), row("b", 0), row("c", 2)}},
		{"a key twice", []string{"a", "b", "a", "c", "b", "a"}, [][]byte{row("a", 5), row("b", 4), row("c", 3)}},
		{"runs", []string{"d", "e", "a", "b", "f", "c"}, [][]byte{row("a", 2), row("b", 3), row("c", 5), row("d", 0), row("e", 1), row("f", 4)}},
		{"empty", nil, nil},
	} {
		e := newCopyBatch(ti, 0, 0)
		for i, k := range tc.keys {
			if err := e.Add([]byte(k), table.Pos{}, []table.Value{{Int: int64(i)}}); err != nil {
				t.Fatal(err)
			}
		}
		e.Seal()
		if e.Rows() != len(tc.keys) || e.rows != len(tc.want) || !bytes.Equal(e.bytes(), bytes.Join(tc.want, nil)) {
			t.Errorf("%s: added %d, %d rows %x; want %d, %d rows %x", tc.name, e.Rows(), e.rows, e.bytes(), len(tc.keys), len(tc.want), bytes.Join(tc.want, nil))
		}
		if err := e.Add([]byte("z"), table.Pos{}, []table.Value{{Int: 9}}); err == nil {
			t.Errorf("%s: Add after Seal succeeded", tc.name)
		}
	}
}

// TestTableDropped: a table dropped under a job fails its commit with
// sink.ErrTableChanged naming the table, and is not made again silently
// by PrepareTable until its loadnode.tables row is deleted.
func TestTableDropped(t *testing.T) {
	s, _ := open(t, false)
	sp := spec("dropped", col("n", api.ColumnType_INT64))
	sc, _ := table.NewSchema(sp)
	if err := s.PrepareTable(sp); err != nil {
		t.Fatal(err)
	}
	if err := s.InitStarts(1, map[int32]int64{0: 0}, nil); err != nil {
		t.Fatal(err)
	}
	row := func(o int64) sink.KV {
		pos := table.Pos{JobID: 1, Offset: o}
		vals := []table.Value{{Int: o}}
		return sink.KV{Key: table.AppendKey(nil, sp.Model, pos, vals), Value: table.AppendValue(nil, sc, pos, vals)}
	}
	exec(t, s, `DROP TABLE public.dropped`)
	c := &sink.Commit{JobID: 1, Table: "dropped", Fence: 1, Rows: []sink.KV{row(0)}, Ranges: []sink.Range{{Partition: 0, From: 0, To: 1}}}
	err := s.Commit(c)
	if !errors.Is(err, sink.ErrTableChanged) || !strings.Contains(err.Error(), `"public"."dropped"`) {
		t.Fatalf("Commit into a dropped table = %v, want sink.ErrTableChanged naming it", err)
	}
	if p, _ := s.Progress(1); p.Positions[0] != 0 {
		t.Fatalf("a failed commit moved the progress: %v", p.Positions)
	}
	if err := s.PrepareTable(sp); !errors.Is(err, sink.ErrTableChanged) || !strings.Contains(err.Error(), "DELETE FROM loadnode.tables") {
		t.Fatalf("PrepareTable of a dropped table = %v, want sink.ErrTableChanged saying how to have it made again", err)
	}
	exec(t, s, `DELETE FROM loadnode.tables WHERE table_name = 'dropped'`)
	if err := s.PrepareTable(sp); err != nil {
		t.Fatalf("PrepareTable once its catalog row is gone: %v", err)
	}
	if err := s.Commit(c); err != nil {
		t.Fatalf("Commit into the table made again: %v", err)
	}
}
