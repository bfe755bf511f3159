package actors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// Creating jobs and tables.
//
// INVARIANT (durable before visible): a job actor is spawned only after its
// create snapshot is durable in the metadata store (onCreatesWritten); a
// create whose write fails spawns nothing and answers the error.

// createQueue is the manager's creates in flight: names reserved and
// tables being made by queued or writing creates; queue waits while
// the grouped writes in flight are as many as createWrites allows.
type createQueue struct {
	reserved  map[string]bool
	newTables map[string]*api.TableSpec
	queue     []*pendingCreate
	writing   int
}

// clusterCreateWrites is how many grouped create writes a cluster member
// keeps in flight: each is an etcd round trip (a single node's is a local
// synced commit, one at a time), so a member with one in flight left
// etcd mostly idle.
const clusterCreateWrites = 4

// createWrites is how many grouped create writes may be in flight.
func (m *manager) createWrites() int {
	if m.clustered() {
		return clusterCreateWrites
	}
	return 1
}

func invalid(field, msg string) *api.JobResponse {
	return &api.JobResponse{Error: &api.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: api.Clip(field, api.MaxEchoBytes), Message: api.Clip(msg, api.MaxMessageBytes)}}
}

// catalogTable returns the named table from the catalog or from a create
// queued before (nil, nil when neither has it).
func (m *manager) catalogTable(name string) (*api.TableSpec, bool, error) {
	t, err := m.deps.Meta.Table(name)
	if errors.Is(err, metastore.ErrNotFound) {
		if pending := m.newTables[name]; pending != nil {
			return pending, true, nil
		}
		return nil, false, nil
	}
	return t, false, err
}

// storedTable fills spec.Table from the catalog (CREATE ROUTINE LOAD ... ON
// t): the table must exist, and the columns spec names, if any, must be
// its columns in order.
func (m *manager) storedTable(spec *api.JobSpec) *api.JobResponse {
	name := spec.GetTable().GetName()
	stored, _, err := m.catalogTable(name)
	if err != nil {
		return &api.JobResponse{Error: storeErr(err)}
	}
	if stored == nil && table.IsTemporaryPartition(name) {
		return &api.JobResponse{Error: &api.Error{Code: api.ErrorCode_NOT_FOUND, Field: "table.name",
			Message: fmt.Sprintf("%s does not exist: add it first (ALTER TABLE ... ADD TEMPORARY PARTITION)", table.DisplayName(name))}}
	}
	if stored == nil {
		return &api.JobResponse{Error: &api.Error{Code: api.ErrorCode_NOT_FOUND, Field: "table.name",
			Message: fmt.Sprintf("table %s does not exist: create it first", api.Quote(name))}}
	}
	if db := spec.GetTable().GetDatabase(); db != "" && db != stored.GetDatabase() {
		where := "the embedded store"
		if stored.GetDatabase() != "" {
			where = fmt.Sprintf("database %q", stored.GetDatabase())
		}
		return invalid("table.database", fmt.Sprintf("table %s is in %s, not in database %q", name, where, db))
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
			return invalid("table.columns", fmt.Sprintf("columns (%v) must list the columns of table %s in order (%v): column mapping expressions are not supported", got, name, want))
		}
	}
	spec.Table = proto.Clone(stored).(*api.TableSpec)
	return nil
}

// storedTables fills a multi-table job's tables from the catalog by name
// (every one must exist), and its table with the first of them.
func (m *manager) storedTables(spec *api.JobSpec) *api.JobResponse {
	for i, t := range spec.GetTables() {
		stored, _, err := m.catalogTable(t.GetName())
		if err != nil {
			return &api.JobResponse{Error: storeErr(err)}
		}
		if stored == nil {
			return &api.JobResponse{Error: &api.Error{Code: api.ErrorCode_NOT_FOUND, Field: fmt.Sprintf("tables[%d]", i),
				Message: fmt.Sprintf("table %s does not exist: create it first (a multi-table job loads tables of the catalog)", api.Quote(t.GetName()))}}
		}
		if db := t.GetDatabase(); db != "" && db != stored.GetDatabase() {
			return invalid(fmt.Sprintf("tables[%d]", i), fmt.Sprintf("table %s is not in database %q", t.GetName(), db))
		}
		spec.Tables[i] = proto.Clone(stored).(*api.TableSpec)
	}
	spec.Table = proto.Clone(spec.Tables[0]).(*api.TableSpec)
	return nil
}

// createFor validates a create request and queues it for its durable
// write; it returns an answer only when the request is refused. The job
// actor is spawned when the write is done (onCreatesWritten).
func (m *manager) createFor(ctx actor.Context, req *api.CreateJobRequest) *api.JobResponse {
	if req.GetSpec() == nil {
		return invalid("spec", "spec: required")
	}
	// The manager applies the defaults to the spec and keeps it as the
	// job's record. A request from another actor system was decoded for
	// the manager alone: its spec is taken as it is. A local sender (the
	// HTTP API's client.Local, tests) may use its spec again: it is copied.
	spec := req.GetSpec()
	if !fromOtherSystem(ctx) {
		spec = proto.Clone(spec).(*api.JobSpec)
	}
	if len(spec.GetTables()) > 0 {
		if resp := m.storedTables(spec); resp != nil {
			return resp
		}
	} else if req.GetUseStoredTable() {
		if resp := m.storedTable(spec); resp != nil {
			return resp
		}
	}
	if err := m.deps.Specs.Prepare(spec); err != nil {
		return &api.JobResponse{Error: invalidErr("spec", err)}
	}
	if _, err := m.deps.Sinks(spec.GetTable()); err != nil {
		return &api.JobResponse{Error: invalidErr("table", err)}
	}
	if m.clustered() && spec.GetTable().GetDatabase() == "" {
		// A job's rows in one member's embedded store could not move with
		// the job: cluster mode refuses it rather than pinning it.
		return invalid("table.database", fmt.Sprintf("table %s is in the embedded store, which is one member's: in cluster mode a job must load into a database of the node config (table.database)", api.Quote(spec.GetTable().GetName())))
	}
	name := spec.GetName()
	if _, ok := m.byName[name]; ok || m.reserved[name] {
		return &api.JobResponse{Error: &api.Error{Code: api.ErrorCode_ALREADY_EXISTS, Field: "name", Message: fmt.Sprintf("job %s already exists", api.Quote(name))}}
	}
	var newTable *api.TableSpec
	existing, pending, err := m.catalogTable(spec.GetTable().GetName())
	switch {
	case err != nil:
		return &api.JobResponse{Error: storeErr(err)}
	case existing == nil && table.IsTemporaryPartition(spec.GetTable().GetName()):
		return &api.JobResponse{Error: &api.Error{Code: api.ErrorCode_NOT_FOUND, Field: "table.name",
			Message: fmt.Sprintf("%s does not exist: add it first (ALTER TABLE ... ADD TEMPORARY PARTITION)", table.DisplayName(spec.GetTable().GetName()))}}
	case existing == nil:
		newTable = spec.GetTable()
	default:
		if err := table.Compare(existing, spec.GetTable()); err != nil {
			return invalid("table", err.Error())
		}
		if pending {
			// Another queued create makes this table: ask for it too (the
			// store keeps one identical schema).
			newTable = spec.GetTable()
		}
	}
	id := m.lastID + 1
	m.lastID = id // an id whose write fails is skipped, never reused
	rec := &api.JobRecord{Id: id, Name: name, Spec: spec, CreatedUnixMs: m.deps.nowMs()}
	first := &api.Transition{Seq: 1, TimeUnixMs: rec.CreatedUnixMs, To: api.JobState_NEED_SCHEDULE, Reason: api.Reason_CREATED, Message: "created"}
	m.reserved[name] = true
	if newTable != nil {
		m.newTables[newTable.GetName()] = newTable
	}
	m.queue = append(m.queue, &pendingCreate{sender: ctx.Sender(), job: metastore.NewJob{Record: rec, First: first, NewTable: newTable}})
	m.flushCreates(ctx)
	return nil
}

// fromOtherSystem reports whether the message in ctx came from another
// actor system (through protoactor remote, decoded for this receiver).
func fromOtherSystem(ctx actor.Context) bool {
	s := ctx.Sender()
	return s != nil && s.GetAddress() != ctx.ActorSystem().Address()
}

// createTable adds a table to the catalog (CREATE TABLE).
// It returns nil when the table's sink keeps tables of its own: then
// createTableIn answers, outside the mailbox.
func (m *manager) createTable(req *api.CreateTableRequest) *api.CreateTableResponse {
	spec := req.GetSpec()
	fail := func(code api.ErrorCode, field, format string, a ...any) *api.CreateTableResponse {
		return &api.CreateTableResponse{Error: &api.Error{Code: code, Field: field, Message: fmt.Sprintf(format, a...)}}
	}
	if _, err := table.NewSchema(spec); err != nil {
		e := invalidErr("table", err)
		return &api.CreateTableResponse{Error: e}
	}
	if table.IsTemporaryPartition(spec.GetName()) {
		return m.addTemporaryPartition(req)
	}
	sk, err := m.deps.Sinks(spec)
	if err != nil {
		return &api.CreateTableResponse{Error: invalidErr("table", err)}
	}
	if _, pending := m.newTables[spec.GetName()]; pending {
		return fail(api.ErrorCode_ALREADY_EXISTS, "table", "table %s is being created by a job", api.Quote(spec.GetName()))
	}
	if _, ok := sk.(sink.TableCreator); ok {
		return nil // createTableIn, outside the mailbox
	}
	return catalogCreate(m.deps.Meta, req)
}

// addTemporaryPartition adds a temporary partition to its table (Doris
// ALTER TABLE t ADD TEMPORARY PARTITION tp): req's spec is its catalog
// table (table.TemporaryPartitionSpec), checked against the table and its
// other temporary partitions as Doris checks it. It runs in the manager,
// as dropTable does, so that the table cannot go meanwhile. Only the
// embedded store's tables have temporary partitions.
func (m *manager) addTemporaryPartition(req *api.CreateTableRequest) *api.CreateTableResponse {
	spec := req.GetSpec()
	name, part, _ := table.SplitTemporaryPartition(spec.GetName())
	parent, err := m.deps.Meta.Table(name)
	if err != nil {
		return &api.CreateTableResponse{Error: tableErr(name, err)}
	}
	if db := parent.GetDatabase(); db != "" {
		return &api.CreateTableResponse{Error: &api.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: "temporary_partition",
			Message: fmt.Sprintf("TEMPORARY PARTITION %s: table %s is in database %s; temporary partitions are not supported by loadnode for a database's tables (only the embedded store's)", part, name, db)}}
	}
	others, err := m.temporaryPartitions(name)
	if err != nil {
		return &api.CreateTableResponse{Error: storeErr(err)}
	}
	resolved, err := table.ResolveTemporaryPartition(parent, spec, others)
	if err != nil {
		return &api.CreateTableResponse{Error: invalidErr("temporary_partition", err)}
	}
	return catalogCreate(m.deps.Meta, &api.CreateTableRequest{Spec: resolved})
}

// createTableIn makes a table in its database server, then in the catalog,
// in a goroutine; the answer goes to the requester.
func (m *manager) createTableIn(ctx actor.Context, req *api.CreateTableRequest) {
	meta, sinks := m.deps.Meta, m.deps.Sinks
	runTo(m.life, ctx.Sender(), "create table", func(context.Context) *api.CreateTableResponse {
		if err := createInSink(sinks, req.GetSpec()); err != nil {
			var te *sinkTableError
			errors.As(err, &te)
			return &api.CreateTableResponse{Error: te.answer()}
		}
		return catalogCreate(meta, req)
	}, func(err error) *api.CreateTableResponse {
		return &api.CreateTableResponse{Error: &api.Error{Code: api.ErrorCode_INTERNAL, Message: err.Error()}}
	})
}

// catalogCreate records a validated table in the catalog.
func catalogCreate(meta metastore.Store, req *api.CreateTableRequest) *api.CreateTableResponse {
	spec := req.GetSpec()
	fail := func(code api.ErrorCode, field, format string, a ...any) *api.CreateTableResponse {
		return &api.CreateTableResponse{Error: &api.Error{Code: code, Field: field, Message: fmt.Sprintf(format, a...)}}
	}
	created, err := meta.CreateTable(spec)
	switch {
	case errors.Is(err, metastore.ErrTableExists) || (err == nil && !created):
		if req.GetIfNotExists() {
			return &api.CreateTableResponse{Existed: true}
		}
		return fail(api.ErrorCode_ALREADY_EXISTS, "table", "table %s already exists", api.Quote(spec.GetName()))
	case err != nil:
		return &api.CreateTableResponse{Error: storeErr(err)}
	}
	return &api.CreateTableResponse{Table: spec}
}

// pendingCreate is a validated create waiting for its durable write.
type pendingCreate struct {
	sender *actor.PID
	job    metastore.NewJob
}

// createsWritten carries the result of one grouped create write back to
// the manager.
type createsWritten struct {
	batch []*pendingCreate
	errs  []error
}

// flushCreates writes the queued creates in one durable write, in a
// goroutine, unless createWrites writes are in flight: creates that arrive
// meanwhile wait and go together in the next batch, so a burst of creates
// shares its fsyncs (group commit).
func (m *manager) flushCreates(ctx actor.Context) {
	if m.writing >= m.createWrites() || len(m.queue) == 0 {
		return
	}
	batch := m.queue
	m.queue = nil
	m.writing++
	jobs := make([]metastore.NewJob, len(batch))
	for i, pc := range batch {
		jobs[i] = pc.job
	}
	meta, sinks := m.deps.Meta, m.deps.Sinks
	// The result goes to the manager's PID unwrapped, so that a manager
	// restarted meanwhile still answers the waiting clients (its recovery
	// respawned the jobs that were written; onCreatesWritten sees them).
	runTo(m.life, m.life.self, "create write", func(context.Context) *createsWritten {
		// A table in a database server is made (or checked) there first;
		// a create it refuses is not written.
		errs := make([]error, len(jobs))
		var write []metastore.NewJob
		var at []int
		for i, j := range jobs {
			if err := createInSink(sinks, j.Record.GetSpec().GetTable()); err != nil {
				errs[i] = err
				continue
			}
			write, at = append(write, j), append(at, i)
		}
		if err := allocIDs(meta, write); err != nil {
			for _, i := range at {
				errs[i] = fmt.Errorf("actors: allocate a job id: %w", err)
			}
			write = nil
		}
		if len(write) > 0 {
			for k, err := range meta.CreateJobs(write) {
				errs[at[k]] = err
			}
		}
		return &createsWritten{batch: batch, errs: errs}
	}, func(err error) *createsWritten {
		res := &createsWritten{batch: batch}
		for range batch {
			res.errs = append(res.errs, err)
		}
		return res
	})
}

// onCreatesWritten answers every waiting client, then spawns the jobs
// whose snapshots are now durable: a client's answer does not wait for
// the spawns (nor for the starts they begin) of its batch. The jobs are
// registered before the answers and spawned in this same message, so a
// request that follows an answer finds its job and the job's actor.
func (m *manager) onCreatesWritten(ctx actor.Context, msg *createsWritten) {
	m.writing = max(m.writing-1, 0) // a restarted manager started from 0
	type made struct {
		e  *entry
		pc *pendingCreate
	}
	var spawn []made
	for i, pc := range msg.batch {
		rec := pc.job.Record
		name := rec.GetName()
		delete(m.reserved, name)
		if t := pc.job.NewTable; t != nil && m.newTables[t.GetName()] == t {
			delete(m.newTables, t.GetName())
		}
		if err := msg.errs[i]; err != nil {
			var resp *api.JobResponse
			if errors.Is(err, metastore.ErrNameTaken) {
				resp = &api.JobResponse{Error: &api.Error{Code: api.ErrorCode_ALREADY_EXISTS, Field: "name", Message: err.Error()}}
			} else if errors.Is(err, metastore.ErrTableExists) {
				resp = invalid("table", err.Error())
			} else if te := (*sinkTableError)(nil); errors.As(err, &te) {
				resp = &api.JobResponse{Error: te.answer()}
			} else {
				m.log().Error("create job: durable write failed", "name", name, "err", err)
				resp = &api.JobResponse{Error: storeErr(err)}
			}
			m.replyCreate(ctx, pc, resp)
			continue
		}
		if e := m.byName[name]; e != nil && e.rec.GetId() == rec.GetId() {
			// A restarted manager already respawned it from the store.
			m.replyCreate(ctx, pc, createdResponse(e))
			continue
		}
		// INVARIANT (durable before visible): the snapshot is synced; only
		// now is the job listed, answered and its actor spawned.
		if h := m.deps.Hooks.AfterCreateSynced; h != nil {
			h(rec.GetId())
		}
		e := &entry{rec: rec, summary: summaryOf(m.deps.Specs, rec, api.JobState_NEED_SCHEDULE, api.Reason_CREATED, "created")}
		m.register(e)
		m.replyCreate(ctx, pc, createdResponse(e))
		spawn = append(spawn, made{e, pc})
	}
	// The creates that queued meanwhile go to their write before these
	// jobs start: its fsync runs while they spawn (and covers their
	// first schedules, syncshare.go).
	m.flushCreates(ctx)
	for _, s := range spawn {
		rec := s.e.rec
		if m.clustered() {
			// The leader assigns it; its owner spawns it (OwnJob).
			m.ensureActor(ctx, s.e)
		} else {
			// The actor starts from what was just written (one record in
			// memory, not two) and asks for admission at once. A new id
			// has no progress in the metadata store: a job whose sink is
			// that store (journaledStarts) starts from none without
			// reading it back; any other sink is read (loadPositions).
			fresh := &api.SinkProgress{Positions: map[int32]int64{}, Checkpoints: map[int32][]byte{}, Stats: &api.JobStats{}}
			m.spawnFrom(ctx, s.e, &metastore.JobState{Record: rec, Last: s.pc.job.First, SinkProgress: fresh}, false)
		}
		m.deps.Logger.LogAttrs(context.Background(), slog.LevelInfo, "job created", slog.Uint64("job", rec.GetId()), slog.String("name", rec.GetName()))
	}
}

// createdResponse is the answer to a create of e: its summary (a copy: the
// answer may be encoded after the manager changed e), spec and time.
func createdResponse(e *entry) *api.JobResponse {
	rec := e.rec
	return &api.JobResponse{Job: &api.JobInfo{Summary: proto.Clone(e.summary).(*api.JobSummary), Spec: api.RedactSpec(rec.GetSpec()), CreatedUnixMs: rec.GetCreatedUnixMs()}}
}

func (m *manager) replyCreate(ctx actor.Context, pc *pendingCreate, resp *api.JobResponse) {
	if pc.sender != nil {
		ctx.Send(pc.sender, resp)
	}
}

// sinkTableError is a sink's refusal of a table at create.
type sinkTableError struct{ err error }

func (e *sinkTableError) Error() string { return e.err.Error() }
func (e *sinkTableError) Unwrap() error { return e.err }

// answer: a refusal naming a spec field is the caller's (INVALID_ARGUMENT);
// a table dropped under loadnode, or a refusal of the database that
// retrying cannot fix (sink.ErrRefused: a missing privilege, a read-only
// role, a statement timeout), is FAILED_PRECONDITION; any other (the
// database unreachable, a transient refusal) is UNAVAILABLE: retry.
func (e *sinkTableError) answer() *api.Error {
	var f fielder
	if errors.As(e.err, &f) && f.SpecField() != "" {
		return invalidErr("table", e.err)
	}
	if errors.Is(e.err, sink.ErrTableChanged) {
		return &api.Error{Code: api.ErrorCode_FAILED_PRECONDITION, Field: "table", Message: e.err.Error()}
	}
	if errors.Is(e.err, sink.ErrRefused) {
		return &api.Error{Code: api.ErrorCode_FAILED_PRECONDITION, Field: "table.database", Message: api.Clip(e.err.Error(), api.MaxMessageBytes)}
	}
	return &api.Error{Code: api.ErrorCode_UNAVAILABLE, Field: "table.database", Message: e.err.Error()}
}

// createInSink makes a table in its sink when the sink keeps tables of its
// own (sink.TableCreator). REQUIRES: outside the actor (it may block on a
// database server).
func createInSink(sinks SinkFactory, spec *api.TableSpec) error {
	sk, err := sinks(spec)
	if err != nil {
		return &sinkTableError{err: err}
	}
	if tc, ok := sk.(sink.TableCreator); ok {
		if err := tc.CreateTable(spec); err != nil {
			return &sinkTableError{err: err}
		}
	}
	return nil
}
