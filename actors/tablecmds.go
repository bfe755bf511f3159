package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// Table management: list, describe, drop. The manager knows which jobs
// load into a table (its registry), so it answers those parts itself;
// counting rows runs in a goroutine like the other table reads.

// tableJobs returns the names of the jobs in the registry (not deleted)
// whose table is name, by name; and the first of them that is not final
// (it loads into the table), or "".
func (m *manager) tableJobs(name string) (jobs []string, loading string) {
	for n, e := range m.byName {
		if e.rec.GetSpec().GetTable().GetName() == name {
			jobs = append(jobs, n)
		}
	}
	slices.Sort(jobs)
	for _, n := range jobs {
		if !m.byName[n].summary.GetState().Final() {
			return jobs, n
		}
	}
	for _, pc := range m.queue {
		if pc.job.Record.GetSpec().GetTable().GetName() == name {
			return jobs, pc.job.Record.GetName()
		}
	}
	return jobs, ""
}

// sinkName describes where spec's rows are.
func sinkName(sk sink.Sink, spec *api.TableSpec) string {
	if d, ok := sk.(sink.Describer); ok {
		return d.Describe(spec.GetName())
	}
	return "embedded"
}

func (m *manager) listTables() *api.ListTablesResponse {
	specs, err := m.deps.Meta.Tables()
	if err != nil {
		return &api.ListTablesResponse{Error: storeErr(err)}
	}
	resp := &api.ListTablesResponse{}
	for _, spec := range specs {
		if table.IsTemporaryPartition(spec.GetName()) {
			continue // a temporary partition of its table, not a table
		}
		ti := &api.TableInfo{Spec: spec, Rows: -1, Sink: "embedded"}
		ti.Jobs, _ = m.tableJobs(spec.GetName())
		if sk, err := m.deps.Sinks(spec); err == nil {
			ti.Sink = sinkName(sk, spec)
		} else {
			ti.Sink = "unavailable: " + err.Error()
		}
		resp.Tables = append(resp.Tables, ti)
	}
	return resp
}

func (m *manager) describeTable(ctx actor.Context, req *api.DescribeTableRequest) {
	if ctx.Sender() == nil {
		return
	}
	spec, err := m.deps.Meta.Table(req.GetTable())
	if err != nil {
		ctx.Respond(&api.DescribeTableResponse{Error: tableErr(req.GetTable(), err)})
		return
	}
	jobs, _ := m.tableJobs(spec.GetName())
	sinks := m.deps.Sinks
	runTo(m.life, ctx.Sender(), "describe table", func(context.Context) *api.DescribeTableResponse {
		ti := &api.TableInfo{Spec: spec, Jobs: jobs, Rows: -1}
		sk, err := sinks(spec)
		if err != nil {
			ti.Sink, ti.CountError = "unavailable", err.Error()
			return &api.DescribeTableResponse{Table: ti}
		}
		ti.Sink = sinkName(sk, spec)
		if n, err := sk.CountRows(spec.GetName()); err != nil {
			ti.CountError = err.Error()
		} else {
			ti.Rows = n
		}
		return &api.DescribeTableResponse{Table: ti}
	}, func(err error) *api.DescribeTableResponse {
		return &api.DescribeTableResponse{Error: &api.Error{Code: api.ErrorCode_INTERNAL, Message: err.Error()}}
	})
}

// temporaryPartitions are the catalog tables of the temporary partitions
// of table name (table.TemporaryPartitionTable).
func (m *manager) temporaryPartitions(name string) ([]*api.TableSpec, error) {
	specs, err := m.deps.Meta.Tables()
	if err != nil {
		return nil, err
	}
	var out []*api.TableSpec
	for _, spec := range specs {
		if t, _, ok := table.SplitTemporaryPartition(spec.GetName()); ok && t == name {
			out = append(out, spec)
		}
	}
	return out, nil
}

// dropTable drops a table: refused while a job that is not final loads
// into it (or a create for it is queued), naming the job. It runs in the
// manager, so that no create can slip in between the check and the drop:
// first the sink drops the rows (and a database's table), then the
// catalog forgets it. Final jobs of the table stay (they can be shown and
// deleted). A table's temporary partitions go with it, first (Doris DROP
// TABLE); a temporary partition's table alone is Doris's ALTER TABLE
// DROP TEMPORARY PARTITION.
func (m *manager) dropTable(req *api.DropTableRequest) *api.DropTableResponse {
	name := req.GetTable()
	spec, err := m.deps.Meta.Table(name)
	if errors.Is(err, metastore.ErrNotFound) && req.GetIfExists() {
		return &api.DropTableResponse{}
	}
	if err != nil {
		return &api.DropTableResponse{Error: tableErr(name, err)}
	}
	temps, err := m.temporaryPartitions(name)
	if err != nil {
		return &api.DropTableResponse{Error: storeErr(err)}
	}
	for _, ts := range append([]*api.TableSpec{spec}, temps...) {
		if e := m.dropCheck(ts.GetName()); e != nil {
			return &api.DropTableResponse{Error: e}
		}
	}
	for _, ts := range append(temps, spec) {
		if e := m.dropOne(ts); e != nil {
			return &api.DropTableResponse{Error: e}
		}
	}
	return &api.DropTableResponse{Dropped: true}
}

// dropCheck refuses to drop catalog table name while a create for it is
// queued or a job that is not final loads into it.
func (m *manager) dropCheck(name string) *api.Error {
	if _, pending := m.newTables[name]; pending {
		return precondition("%s is being created by a job create in flight", table.DisplayName(name))
	}
	if _, loading := m.tableJobs(name); loading != "" {
		return &api.Error{Code: api.ErrorCode_FAILED_PRECONDITION, Field: "table",
			Message: fmt.Sprintf("%s is loaded by job %s: stop (or delete) the job first", table.DisplayName(name), api.Quote(loading))}
	}
	return nil
}

// dropOne drops the rows of catalog table spec, then the catalog's entry.
func (m *manager) dropOne(spec *api.TableSpec) *api.Error {
	name := spec.GetName()
	sk, err := m.deps.Sinks(spec)
	if err != nil {
		return storeErr(err)
	}
	if d, ok := sk.(sink.Dropper); ok {
		if err := d.DropTable(name); err != nil {
			return storeErr(err)
		}
	} else if spec.GetDatabase() != "" {
		return precondition("the database of table %s cannot drop tables", api.Quote(name))
	}
	if err := m.deps.Meta.DropTable(name); err != nil {
		return tableErr(name, err)
	}
	m.log().Info("table dropped", "table", name)
	return nil
}
