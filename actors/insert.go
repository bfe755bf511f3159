package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// tableInsert adds an INSERT's rows to a table through its sink, if the
// sink can. A DUPLICATE table keys them by job 0, partition -1 and the
// insert's time in nanoseconds plus the row's index, so two inserts do not
// overwrite each other.
func (m *manager) tableInsert(ctx actor.Context, req *api.TableInsertRequest) {
	if ctx.Sender() == nil {
		return
	}
	meta, sinks := m.deps.Meta, m.deps.Sinks
	runTo(m.life, ctx.Sender(), "table insert", func(context.Context) *api.TableInsertResponse {
		spec, err := meta.Table(req.GetTable())
		if err != nil {
			return &api.TableInsertResponse{Error: tableErr(req.GetTable(), err)}
		}
		schema, err := table.NewSchema(spec)
		if err != nil {
			return &api.TableInsertResponse{Error: &api.Error{Code: api.ErrorCode_INTERNAL, Message: err.Error()}}
		}
		sk, err := sinks(spec)
		if err != nil {
			return &api.TableInsertResponse{Error: storeErr(err)}
		}
		in, ok := sk.(sink.Inserter)
		if !ok {
			return &api.TableInsertResponse{Error: &api.Error{Code: api.ErrorCode_FAILED_PRECONDITION, Field: "table",
				Message: fmt.Sprintf("the database of table %q cannot insert rows", req.GetTable())}}
		}
		names := req.GetColumns()
		if len(names) == 0 {
			names = nil
		}
		now := time.Now()
		base := now.UnixNano()
		rows := make([]sink.KV, 0, len(req.GetRows()))
		for i, r := range req.GetRows() {
			vals, err := schema.RowOf(names, r.GetCells(), now.UTC())
			if err == nil && sk != nil {
				if rc, ok := sk.(sink.RowChecker); ok {
					err = rc.CheckRow(schema, vals)
				}
			}
			if err != nil {
				return &api.TableInsertResponse{Error: &api.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: "rows",
					Message: api.Clip(fmt.Sprintf("row %d: %v", i+1, err), api.MaxMessageBytes)}}
			}
			pos := table.Pos{Partition: -1, Offset: base + int64(i)}
			rows = append(rows, sink.KV{Key: table.AppendRowKey(nil, schema, pos, vals), Value: table.AppendValue(nil, schema, pos, vals)})
		}
		if len(rows) > 0 {
			if err := in.InsertRows(req.GetTable(), rows); err != nil {
				return &api.TableInsertResponse{Error: storeErr(err)}
			}
		}
		return &api.TableInsertResponse{Rows: int64(len(rows))}
	}, func(err error) *api.TableInsertResponse {
		return &api.TableInsertResponse{Error: &api.Error{Code: api.ErrorCode_INTERNAL, Message: err.Error()}}
	})
}
