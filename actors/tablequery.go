package actors

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/query"
	"github.com/loadnode/loadnode/table"
)

// selecter is a sink that answers a query itself (sink/postgres: the
// query runs in PostgreSQL).
type selecter interface {
	Select(ctx context.Context, name string, build func(tableSQL, keySQL string, stored []string) (string, []*api.Column, error), maxRows int) ([][]table.Value, error)
}

func (m *manager) tableQuery(ctx actor.Context, req *api.TableQueryRequest) {
	if ctx.Sender() == nil {
		return
	}
	meta, sinks := m.deps.Meta, m.deps.Sinks
	runTo(m.life, ctx.Sender(), "table query", func(c context.Context) *api.TableQueryResponse {
		return queryTable(c, meta.Table, sinks, req)
	}, func(err error) *api.TableQueryResponse {
		return &api.TableQueryResponse{Error: &api.Error{Code: api.ErrorCode_INTERNAL, Message: err.Error()}}
	})
}

// errFallback marks a translation that does not apply: the client runs
// the query over the scan.
type errFallback struct{ err error }

func (e errFallback) Error() string { return e.err.Error() }

// queryTable answers a SELECT over a table in its database when the
// table's sink answers queries (PostgreSQL) and the query translates
// (query.Postgres); else it answers with the fallback's reason.
func queryTable(ctx context.Context, lookup func(string) (*api.TableSpec, error), sinks SinkFactory, req *api.TableQueryRequest) *api.TableQueryResponse {
	q, err := query.Parse(req.GetStatement())
	if err != nil {
		return &api.TableQueryResponse{Fallback: err.Error()}
	}
	if q.Table == "" || q.Table != req.GetTable() {
		return &api.TableQueryResponse{Fallback: "the statement reads no table " + api.Quote(req.GetTable())}
	}
	spec, err := lookup(q.Table)
	if err != nil {
		return &api.TableQueryResponse{Error: tableErr(q.Table, err)}
	}
	sk, err := sinks(spec)
	if err != nil {
		return &api.TableQueryResponse{Error: storeErr(err)}
	}
	sel, ok := sk.(selecter)
	if !ok {
		return &api.TableQueryResponse{Fallback: "the table is not in PostgreSQL"}
	}
	var plan *query.PostgresQuery
	build := func(tableSQL, keySQL string, stored []string) (string, []*api.Column, error) {
		cols := spec.GetColumns()
		if len(stored) != len(cols) {
			return "", nil, errFallback{errors.New("the table has columns PostgreSQL does not store")}
		}
		for i, c := range cols {
			if stored[i] != c.GetName() {
				return "", nil, errFallback{errors.New("the table has columns PostgreSQL does not store")}
			}
		}
		p, err := query.Postgres(q, spec, tableSQL, keySQL, query.DefaultMaxRows)
		if err != nil {
			return "", nil, errFallback{err}
		}
		plan = p
		out := make([]*api.Column, len(p.Columns))
		for i, c := range p.Columns {
			out[i] = &api.Column{Name: c.Name, Type: c.Type, Precision: c.Precision, Scale: c.Scale}
		}
		return p.SQL, out, nil
	}
	rows, err := sel.Select(ctx, q.Table, build, query.DefaultMaxRows)
	var fb errFallback
	var de interface{ DataException() bool }
	switch {
	case errors.As(err, &fb):
		return &api.TableQueryResponse{Fallback: fb.Error()}
	case errors.As(err, &de) && de.DataException():
		// A value out of range (a SUM past BIGINT, ...): the scan path
		// gives the query's own error.
		return &api.TableQueryResponse{Fallback: err.Error()}
	case err == nil && len(rows) > query.DefaultMaxRows:
		// Over the result's bound: the scan path gives the query's error.
		return &api.TableQueryResponse{Fallback: fmt.Sprintf("the result has more than %d rows", query.DefaultMaxRows)}
	case err != nil:
		return &api.TableQueryResponse{Error: storeErr(err)}
	}
	res := &query.Result{Columns: plan.Columns, Rows: make([][]*api.Value, len(rows))}
	for i, row := range rows {
		res.Rows[i] = make([]*api.Value, len(row))
		for j := range row {
			res.Rows[i][j] = wireValue(plan.Columns[j], &row[j])
		}
	}
	return &api.TableQueryResponse{Result: res.ResultSet()}
}

// wireValue is a result cell as the scan puts it on the wire
// (table.ToProto).
func wireValue(c query.Column, v *table.Value) *api.Value {
	switch {
	case v.Null:
		return &api.Value{Kind: &api.Value_Null{Null: true}}
	case c.Type == api.ColumnType_DECIMAL || c.Type == api.ColumnType_INT128:
		return &api.Value{Kind: &api.Value_Decimal{Decimal: table.FormatDecimal(*v, int(c.Scale))}}
	case c.Type == api.ColumnType_FLOAT64 || c.Type == api.ColumnType_FLOAT32:
		return &api.Value{Kind: &api.Value_Float64{Float64: v.Float}}
	case c.Type == api.ColumnType_DATE:
		return &api.Value{Kind: &api.Value_Date{Date: int32(v.Int)}}
	case c.Type == api.ColumnType_DATETIME:
		return &api.Value{Kind: &api.Value_DatetimeMicros{DatetimeMicros: v.Int}}
	case c.Type == api.ColumnType_JSON:
		return &api.Value{Kind: &api.Value_Json{Json: v.Str}}
	case c.Type == api.ColumnType_STRING || c.Type == api.ColumnType_VARCHAR || c.Type == api.ColumnType_CHAR:
		str := v.Str
		if !utf8.ValidString(str) {
			str = strings.ToValidUTF8(str, "\uFFFD")
		}
		return &api.Value{Kind: &api.Value_String_{String_: str}}
	case c.Type == api.ColumnType_BOOL:
		return &api.Value{Kind: &api.Value_Bool{Bool: v.Bool}}
	case c.Type == api.ColumnType_TIMESTAMP:
		return &api.Value{Kind: &api.Value_TimestampMicros{TimestampMicros: v.Int}}
	}
	return &api.Value{Kind: &api.Value_Int64{Int64: v.Int}}
}
