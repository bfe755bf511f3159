package actors

import (
	"errors"
	"fmt"
	"slices"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/doris"
	"github.com/loadnode/loadnode/persistence"
	"github.com/loadnode/loadnode/table"
)

// execResponse turns a job answer into the answer of a statement.
func execResponse(r *api.JobResponse, message string) *api.ExecResponse {
	if r.GetError() != nil {
		return &api.ExecResponse{Error: r.GetError()}
	}
	return &api.ExecResponse{Job: r.GetJob(), Message: message}
}

func execErr(code api.ErrorCode, field, format string, a ...any) *api.ExecResponse {
	return &api.ExecResponse{Error: &api.Error{Code: code, Field: field, Message: fmt.Sprintf(format, a...)}}
}

// exec runs one Doris-compatible statement by mapping it onto the same
// operations as the YAML spec and the client's requests.
func (m *manager) exec(ctx actor.Context, req *api.ExecRequest) {
	st, err := doris.Parse(req.GetStatement())
	if err != nil {
		var de *doris.Error
		field := "statement"
		if errors.As(err, &de) && de.Clause != "" {
			field = de.Clause
		}
		ctx.Respond(execErr(api.ErrorCode_INVALID_ARGUMENT, field, "%v", err))
		return
	}
	switch {
	case st.CreateTable != nil:
		ctx.Respond(m.execCreateTable(st))
	case st.CreateRoutineLoad != nil:
		m.execCreateLoad(ctx, st.CreateRoutineLoad)
	case st.Pause != nil:
		m.execJobs(ctx, st.Pause, func(name string) any { return &api.PauseJobRequest{Name: name} })
	case st.Resume != nil:
		m.execJobs(ctx, st.Resume, func(name string) any { return &api.ResumeJobRequest{Name: name} })
	case st.Stop != nil:
		m.execJobs(ctx, st.Stop, func(name string) any { return &api.StopJobRequest{Name: name} })
	case st.Show != nil:
		if st.Show.Name != "" {
			m.routeMsg(ctx, st.Show.Name, &api.ShowJobRequest{Name: st.Show.Name})
			return
		}
		ctx.Respond(&api.ExecResponse{Jobs: m.list().GetJobs()})
	case st.Alter != nil:
		// The job actor applies it to its current spec.
		m.routeMsg(ctx, st.Alter.Name, &alterStatement{alter: st.Alter})
	default:
		ctx.Respond(execErr(api.ErrorCode_INVALID_ARGUMENT, "statement", "unsupported statement"))
	}
}

func (m *manager) execCreateTable(st *doris.Statement) *api.ExecResponse {
	spec := st.CreateTable
	if _, err := table.NewSchema(spec); err != nil {
		var fe *table.FieldError
		if errors.As(err, &fe) {
			return execErr(api.ErrorCode_INVALID_ARGUMENT, fe.Field, "%v", err)
		}
		return execErr(api.ErrorCode_INVALID_ARGUMENT, "table", "%v", err)
	}
	if _, pending := m.newTables[spec.GetName()]; pending {
		return execErr(api.ErrorCode_ALREADY_EXISTS, "table", "table %q is being created by a job", spec.GetName())
	}
	created, err := m.deps.Store.CreateTable(spec)
	switch {
	case errors.Is(err, persistence.ErrTableExists) || (err == nil && !created):
		if st.IfNotExists {
			return &api.ExecResponse{Message: fmt.Sprintf("table %s exists", spec.GetName())}
		}
		return execErr(api.ErrorCode_ALREADY_EXISTS, "table", "table %q already exists", spec.GetName())
	case err != nil:
		return &api.ExecResponse{Error: storeErr(err)}
	}
	return &api.ExecResponse{Table: spec, Message: fmt.Sprintf("table %s created", spec.GetName())}
}

// execCreateLoad creates a job from CREATE ROUTINE LOAD. Routine loads load
// into existing tables: the column types come from the stored table, and a
// COLUMNS list must name its columns in order.
func (m *manager) execCreateLoad(ctx actor.Context, spec *api.JobSpec) {
	name := spec.GetTable().GetName()
	stored, err := m.deps.Store.Table(name)
	if pending := m.newTables[name]; errors.Is(err, persistence.ErrNotFound) && pending != nil {
		stored, err = pending, nil
	}
	if errors.Is(err, persistence.ErrNotFound) {
		ctx.Respond(execErr(api.ErrorCode_NOT_FOUND, "ON", "table %q does not exist: CREATE TABLE it first", name))
		return
	}
	if err != nil {
		ctx.Respond(&api.ExecResponse{Error: storeErr(err)})
		return
	}
	if cols := spec.GetTable().GetColumns(); len(cols) > 0 {
		want := make([]string, len(stored.GetColumns()))
		for i, c := range stored.GetColumns() {
			want[i] = c.GetName()
		}
		got := make([]string, len(cols))
		for i, c := range cols {
			got[i] = c.GetName()
		}
		if !slices.Equal(got, want) {
			ctx.Respond(execErr(api.ErrorCode_INVALID_ARGUMENT, "COLUMNS",
				"COLUMNS (%v) must list the columns of table %s in order (%v): column mapping expressions are not supported", got, name, want))
			return
		}
	}
	spec.Table = proto.Clone(stored).(*api.TableSpec)
	if resp := m.createFor(ctx, &api.CreateJobRequest{Spec: spec}, true); resp != nil {
		ctx.Respond(execResponse(resp, ""))
	}
}

// execJobs sends a job command for one job (answered by the job with a
// JobResponse) or for ALL jobs (answered here with how many were asked).
func (m *manager) execJobs(ctx actor.Context, ref *doris.JobRef, msg func(name string) any) {
	if !ref.All {
		m.routeMsg(ctx, ref.Name, msg(ref.Name))
		return
	}
	n := 0
	for name, e := range m.byName {
		if e.pid != nil && !isFinal(e.summary.GetState()) {
			ctx.Send(e.pid, msg(name))
			n++
		}
	}
	ctx.Respond(&api.ExecResponse{Message: fmt.Sprintf("sent to %d jobs", n)})
}

// alterStatement carries a parsed ALTER ROUTINE LOAD to its job actor, which
// applies it to the job's current spec (in-process only).
type alterStatement struct{ alter *doris.Alter }

// onAlterStatement turns ALTER ROUTINE LOAD into an AlterJobRequest: the
// changed properties make the new spec, and new kafka_offsets become an
// offset reset (which needs the job PAUSED).
func (j *job) onAlterStatement(ctx actor.Context, msg *alterStatement) {
	next, err := msg.alter.Spec(j.rec.GetSpec())
	if err != nil {
		ctx.Respond(j.reply(&api.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: "ALTER ROUTINE LOAD", Message: err.Error()}))
		return
	}
	req := &api.AlterJobRequest{Name: j.rec.GetName(), Spec: next}
	if slices.Contains(msg.alter.Changed, "kafka.offsets") {
		req.ResetOffsets = msg.alter.Kafka.GetOffsets()
	}
	j.userAlter(ctx, req)
}
