package postgres

import (
	"bytes"
	"context"
	"math/big"
	"strings"
	"testing"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

func big10(s string) table.Value {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return table.Value128(n)
}

// TestDorisTypes: DECIMAL, LARGEINT, DATE, DATETIME(p) and JSON load
// through the binary COPY, come back exactly from a scan, and are the
// PostgreSQL types and values a SQL reader expects.
func TestDorisTypes(t *testing.T) {
	s, _ := open(t, false)
	sp := spec("doris",
		&api.Column{Name: "d", Type: api.ColumnType_DECIMAL, Precision: 38, Scale: 10},
		&api.Column{Name: "d0", Type: api.ColumnType_DECIMAL, Precision: 9, Scale: 0},
		&api.Column{Name: "l", Type: api.ColumnType_INT128},
		&api.Column{Name: "dt", Type: api.ColumnType_DATE},
		&api.Column{Name: "ts", Type: api.ColumnType_DATETIME, Precision: 6},
		&api.Column{Name: "ts0", Type: api.ColumnType_DATETIME},
		&api.Column{Name: "j", Type: api.ColumnType_JSON},
	)
	sc, err := table.NewSchema(sp)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PrepareTable(sp); err != nil {
		t.Fatal(err)
	}
	if err := s.InitStarts(1, map[int32]int64{0: 0}, nil); err != nil {
		t.Fatal(err)
	}
	type want struct{ d, d0, l, dt, ts, ts0, j string }
	rows := []struct {
		vals []table.Value
		want want
	}{
		{[]table.Value{big10("99999999999999999999999999999999999999"), big10("999999999"), big10("170141183460469231731687303715884105727"),
			{Int: 2932896}, {Int: 253402300799*1e6 + 999999}, {Int: 253402300799 * 1e6}, {Str: `{"b":1,"a":[1,2.50,"x"]}`}},
			want{"9999999999999999999999999999.9999999999", "999999999", "170141183460469231731687303715884105727",
				"9999-12-31", "9999-12-31 23:59:59.999999", "9999-12-31 23:59:59", `{"b":1,"a":[1,2.50,"x"]}`}},
		{[]table.Value{big10("-99999999999999999999999999999999999999"), big10("-1"), big10("-170141183460469231731687303715884105728"),
			{Int: -719528}, {Int: -62167219200 * 1e6}, {Int: -1e6}, {Str: `{"a":1,"a":2}`}},
			want{"-9999999999999999999999999999.9999999999", "-1", "-170141183460469231731687303715884105728",
				"0001-01-01 BC", "0001-01-01 00:00:00 BC", "1969-12-31 23:59:59", `{"a":1,"a":2}`}},
		{[]table.Value{big10("1"), big10("0"), big10("0"), {Int: 0}, {Int: 1}, {Int: 0}, {Str: `null`}},
			want{"0.0000000001", "0", "0", "1970-01-01", "1970-01-01 00:00:00.000001", "1970-01-01 00:00:00", `null`}},
		{[]table.Value{big10("120000000000"), big10("10000"), big10("100000000"), {Int: 19000}, {Int: 1700000000123456}, {Int: 1700000000 * 1e6}, {Str: `[]`}},
			want{"12.0000000000", "10000", "100000000", "2022-01-08", "2023-11-14 22:13:20.123456", "2023-11-14 22:13:20", `[]`}},
		{[]table.Value{{Null: true}, {Null: true}, {Null: true}, {Null: true}, {Null: true}, {Null: true}, {Null: true}},
			want{"", "", "", "", "", "", ""}},
	}
	var kvs []sink.KV
	for i, r := range rows {
		pos := table.Pos{JobID: 1, Partition: 0, Offset: int64(i)}
		kvs = append(kvs, sink.KV{Key: table.AppendKey(nil, sp.Model, pos, r.vals), Value: table.AppendValue(nil, sc, pos, r.vals)})
	}
	if err := s.Commit(&sink.Commit{JobID: 1, Table: "doris", Fence: 1, Rows: kvs, Ranges: []sink.Range{{Partition: 0, From: 0, To: int64(len(rows))}}}); err != nil {
		t.Fatal(err)
	}
	i := 0
	err = s.ScanRowsAfter("doris", nil, 100, func(k, v []byte) error {
		if !bytes.Equal(k, kvs[i].Key) || !bytes.Equal(v, kvs[i].Value) {
			got, _, derr := table.DecodeValue(sc, v, nil)
			t.Errorf("row %d came back as %v (%v), want %v", i, got, derr, rows[i].vals)
		}
		i++
		return nil
	})
	if err != nil || i != len(rows) {
		t.Fatalf("scan: %d rows, %v", i, err)
	}
	if n, err := s.CountRows("doris"); err != nil || n != int64(len(rows)) {
		t.Fatalf("CountRows = %d, %v", n, err)
	}
	for i, r := range rows {
		var got want
		err := s.pool.QueryRow(context.Background(), `SELECT coalesce(d::text, ''), coalesce(d0::text, ''), coalesce(l::text, ''),
			coalesce(dt::text, ''), coalesce(ts::text, ''), coalesce(ts0::text, ''), coalesce(j::text, '')
			FROM public.doris WHERE _loadnode_offset = $1`, i).Scan(&got.d, &got.d0, &got.l, &got.dt, &got.ts, &got.ts0, &got.j)
		if err != nil || got != r.want {
			t.Errorf("row %d in PostgreSQL = %+v, %v\nwant %+v", i, got, err, r.want)
		}
	}
	var types string
	if err := s.pool.QueryRow(context.Background(), `SELECT string_agg(format_type(atttypid, atttypmod), ',' ORDER BY attnum)
		FROM pg_attribute WHERE attrelid = 'public.doris'::regclass AND attnum > 4`).Scan(&types); err != nil {
		t.Fatal(err)
	}
	if w := "numeric(38,10),numeric(9,0),numeric(39,0),date,timestamp(6) without time zone,timestamp(0) without time zone,json"; types != w {
		t.Errorf("column types = %s, want %s", types, w)
	}

	// An existing table with a narrower numeric or datetime is refused,
	// naming the column.
	exec(t, s, `CREATE TABLE public.narrowdec (_loadnode_key bytea PRIMARY KEY, _loadnode_job bigint NOT NULL,
		_loadnode_partition integer NOT NULL, _loadnode_offset bigint NOT NULL, d numeric(10,2), ts timestamp(3))`)
	for _, c := range []struct {
		sp   *api.TableSpec
		want string
	}{
		{spec("narrowdec", &api.Column{Name: "d", Type: api.ColumnType_DECIMAL, Precision: 20, Scale: 2}), "column d: is numeric(10,2)"},
		{spec("narrowdec", &api.Column{Name: "ts", Type: api.ColumnType_DATETIME, Precision: 6}), "column ts: is timestamp without time zone(3)"},
	} {
		if err := s.PrepareTable(c.sp); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("PrepareTable(%v) = %v, want %q", c.sp, err, c.want)
		}
	}
	if err := s.PrepareTable(spec("narrowdec", &api.Column{Name: "d", Type: api.ColumnType_DECIMAL, Precision: 10, Scale: 2},
		&api.Column{Name: "ts", Type: api.ColumnType_DATETIME, Precision: 3})); err != nil {
		t.Errorf("PrepareTable over matching numeric and timestamp: %v", err)
	}
}
