package actors

import (
	"context"
	"errors"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// Table reads. They run in a goroutine so that a large table does not
// block the manager's mailbox; the goroutine only reads the catalog and the
// table's sink and answers the requester.

// api.MaxScanPage bounds the rows of one scan answer; api.MaxScanPageBytes
// bounds its bytes, so that an answer stays well below the client's
// message size limit whatever the rows hold.

// errPageFull ends a scan whose page reached api.MaxScanPageBytes.
var errPageFull = errors.New("actors: scan page full")

func tableErr(name string, err error) *api.Error {
	if errors.Is(err, metastore.ErrNotFound) {
		return &api.Error{Code: api.ErrorCode_NOT_FOUND, Field: "table", Message: fmt.Sprintf("table %s not found", api.Quote(name))}
	}
	return storeErr(err)
}

func (m *manager) tableCount(ctx actor.Context, req *api.TableCountRequest) {
	if ctx.Sender() == nil {
		return
	}
	meta, sinks := m.deps.Meta, m.deps.Sinks
	runTo(m.life, ctx.Sender(), "table count", func(context.Context) *api.TableCountResponse {
		spec, err := meta.Table(req.GetTable())
		if err != nil {
			return &api.TableCountResponse{Error: tableErr(req.GetTable(), err)}
		}
		sk, err := sinks(spec)
		if err != nil {
			return &api.TableCountResponse{Error: storeErr(err)}
		}
		n, err := sk.CountRows(req.GetTable())
		if err != nil {
			return &api.TableCountResponse{Error: storeErr(err)}
		}
		return &api.TableCountResponse{Count: n}
	}, func(err error) *api.TableCountResponse {
		return &api.TableCountResponse{Error: &api.Error{Code: api.ErrorCode_INTERNAL, Message: err.Error()}}
	})
}

// tableTruncate empties a table through its sink, if the sink can. The
// table's temporary partitions go first, in the manager (as dropTable):
// Doris's TRUNCATE TABLE deletes them.
func (m *manager) tableTruncate(ctx actor.Context, req *api.TableTruncateRequest) {
	if ctx.Sender() == nil {
		return
	}
	if !table.IsTemporaryPartition(req.GetTable()) {
		temps, err := m.temporaryPartitions(req.GetTable())
		if err != nil {
			ctx.Respond(&api.TableTruncateResponse{Error: storeErr(err)})
			return
		}
		for _, ts := range temps {
			if e := m.dropCheck(ts.GetName()); e != nil {
				ctx.Respond(&api.TableTruncateResponse{Error: e})
				return
			}
		}
		for _, ts := range temps {
			if e := m.dropOne(ts); e != nil {
				ctx.Respond(&api.TableTruncateResponse{Error: e})
				return
			}
		}
	}
	meta, sinks := m.deps.Meta, m.deps.Sinks
	runTo(m.life, ctx.Sender(), "table truncate", func(context.Context) *api.TableTruncateResponse {
		spec, err := meta.Table(req.GetTable())
		if err != nil {
			return &api.TableTruncateResponse{Error: tableErr(req.GetTable(), err)}
		}
		sk, err := sinks(spec)
		if err != nil {
			return &api.TableTruncateResponse{Error: storeErr(err)}
		}
		tr, ok := sk.(sink.Truncater)
		if !ok {
			return &api.TableTruncateResponse{Error: &api.Error{Code: api.ErrorCode_FAILED_PRECONDITION, Field: "table",
				Message: fmt.Sprintf("the database of table %q cannot truncate tables", req.GetTable())}}
		}
		if err := tr.TruncateTable(req.GetTable()); err != nil {
			return &api.TableTruncateResponse{Error: storeErr(err)}
		}
		return &api.TableTruncateResponse{}
	}, func(err error) *api.TableTruncateResponse {
		return &api.TableTruncateResponse{Error: &api.Error{Code: api.ErrorCode_INTERNAL, Message: err.Error()}}
	})
}

func (m *manager) tableScan(ctx actor.Context, req *api.TableScanRequest) {
	if ctx.Sender() == nil {
		return
	}
	meta, sinks := m.deps.Meta, m.deps.Sinks
	runTo(m.life, ctx.Sender(), "table scan", func(context.Context) *api.TableScanResponse {
		return scanTable(meta, sinks, req)
	}, func(err error) *api.TableScanResponse {
		return &api.TableScanResponse{Error: &api.Error{Code: api.ErrorCode_INTERNAL, Message: err.Error()}}
	})
}

func scanTable(meta metastore.Store, sinks SinkFactory, req *api.TableScanRequest) *api.TableScanResponse {
	resp := &api.TableScanResponse{}
	spec, err := meta.Table(req.GetTable())
	if err != nil {
		resp.Error = tableErr(req.GetTable(), err)
		return resp
	}
	schema, err := table.NewSchema(spec)
	if err != nil {
		resp.Error = &api.Error{Code: api.ErrorCode_INTERNAL, Message: err.Error()}
		return resp
	}
	sk, err := sinks(spec)
	if err != nil {
		resp.Error = storeErr(err)
		return resp
	}
	limit := int(req.GetLimit())
	if limit <= 0 {
		limit = 1000
	}
	limit = min(limit, api.MaxScanPage)
	resp.Schema = spec
	vals := make([]table.Value, len(spec.GetColumns()))
	var last []byte
	size := 0
	err = sk.ScanRowsAfter(req.GetTable(), req.GetAfter(), limit, func(k, v []byte) error {
		if size >= api.MaxScanPageBytes {
			return errPageFull
		}
		var pos table.Pos
		var err error
		vals, pos, err = table.DecodeValue(schema, v, vals)
		if err != nil {
			return err
		}
		row := table.ToProto(schema, vals, pos)
		size += proto.Size(row)
		resp.Rows = append(resp.Rows, row)
		last = k
		return nil
	})
	full := errors.Is(err, errPageFull)
	if full {
		err = nil
	}
	if err != nil {
		resp.Error = storeErr(err)
		resp.Rows = nil
		return resp
	}
	if len(resp.Rows) == limit || full {
		resp.Next = last
	}
	return resp
}
