// Package metastoretest is the conformance suite of metastore.Store. Run
// checks, through the interface alone, what every implementation must do:
// a create acknowledged is durable and a refused one leaves nothing, names
// are unique, the journal never forks, alters and deletes are atomic, and
// replaying the store twice gives the same state.
//
// An implementation's own tests call Run with a Harness that opens it on
// fresh storage (the embedded store: persistence/seams_test.go).
//
// Concurrency: Run runs its subtests one after the other; a few subtests
// call the store from several goroutines, as the interface allows.
package metastoretest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore"
)

// Harness opens the implementation under test.
type Harness struct {
	// Open returns a store over new, empty storage, and reopen, which
	// returns the store as a restart of the process would find it. Where
	// the implementation can simulate power loss (the embedded store on a
	// crashable in-memory filesystem) reopen crashes it: only writes that
	// were acknowledged durable survive. A server's store (etcd)
	// reconnects. reopen may be called repeatedly; each call ends the
	// store returned before it, which the suite then no longer uses. The
	// harness closes what it opened (t.Cleanup). Required.
	Open func(t *testing.T) (s metastore.Store, reopen func(t *testing.T) metastore.Store)
}

// Run runs the conformance suite against h, one subtest per property.
func Run(t *testing.T, h Harness) {
	if h.Open == nil {
		t.Fatal("metastoretest: Harness.Open is nil")
	}
	for _, c := range []struct {
		name string
		run  func(t *testing.T, e *env)
	}{
		{"CreateJobsDurable", testCreateDurable},
		{"CreateJobsRefusedLeaveNothing", testCreateRefused},
		{"NameTakenWithinOneCall", testNameTakenInCall},
		{"IdenticalTableAccepted", testIdenticalTable},
		{"ConcurrentCreatesOfOneNameOneWins", testConcurrentCreates},
		{"LastJobID", testLastJobID},
		{"LoadJobAndLoadAllJobs", testLoad},
		{"LoadConsistentUnderAlters", testLoadConsistent},
		{"AppendTransitionRefusesFork", testAppendFork},
		{"ConcurrentAppendsOneWins", testConcurrentAppends},
		{"AppendTransitionsBatch", testAppendBatch},
		{"HistoryNewestOldestFirst", testHistory},
		{"JournalFull", testJournal},
		{"AlterJobAtomic", testAlter},
		{"DeleteJob", testDelete},
		{"TableCatalog", testTables},
		{"ReplayTwiceSameState", testReplayTwice},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, reopen := h.Open(t)
			c.run(t, &env{s: s, reopen: reopen})
		})
	}
}

// env is one subtest's store.
type env struct {
	s      metastore.Store
	reopen func(t *testing.T) metastore.Store
}

// restart replaces the store by what a restart finds.
func (e *env) restart(t *testing.T) {
	t.Helper()
	e.s = e.reopen(t)
}

func newTable(name string, typ api.ColumnType) *api.TableSpec {
	return &api.TableSpec{Name: name, Model: api.TableModel_DUPLICATE, Columns: []*api.Column{
		{Name: "n", Type: api.ColumnType_INT64},
		{Name: "v", Type: typ},
	}}
}

func record(id uint64, name string, table *api.TableSpec) *api.JobRecord {
	return &api.JobRecord{
		Id:            id,
		Name:          name,
		CreatedUnixMs: 1700000000000 + int64(id),
		Spec: &api.JobSpec{
			Name:   name,
			Format: "csv",
			Table:  table,
			Kafka:  &api.KafkaSpec{Brokers: []string{"127.0.0.1:9092"}, Topic: "topic_" + name},
		},
	}
}

func transition(seq uint64, from, to api.JobState, reason api.Reason) *api.Transition {
	return &api.Transition{Seq: seq, TimeUnixMs: 1700000000000 + int64(seq), From: from, To: to, Reason: reason,
		Message: fmt.Sprintf("entry %d", seq)}
}

func created() *api.Transition {
	return transition(1, api.JobState_JOB_STATE_UNSPECIFIED, api.JobState_NEED_SCHEDULE, api.Reason_CREATED)
}

// newJob is job id named name, creating its own table t_<name>.
func newJob(id uint64, name string) metastore.NewJob {
	tbl := newTable("t_"+name, api.ColumnType_STRING)
	return metastore.NewJob{Record: record(id, name, tbl), First: created(), NewTable: tbl}
}

// mustCreate creates jobs, each of which must succeed.
func (e *env) mustCreate(t *testing.T, jobs ...metastore.NewJob) {
	t.Helper()
	for i, err := range e.s.CreateJobs(jobs) {
		if err != nil {
			t.Fatalf("CreateJobs: job %q: %v", jobs[i].Record.GetName(), err)
		}
	}
}

func (e *env) mustAppend(t *testing.T, id uint64, tr *api.Transition) {
	t.Helper()
	if err := e.s.AppendTransition(id, tr); err != nil {
		t.Fatalf("AppendTransition(job %d, seq %d): %v", id, tr.GetSeq(), err)
	}
}

// grow appends transitions to job id until its journal has n entries
// (it has at least one) and returns them.
func (e *env) grow(t *testing.T, id uint64, n int) []*api.Transition {
	t.Helper()
	st := e.load(t, id)
	states := []api.JobState{api.JobState_RUNNING, api.JobState_PAUSED, api.JobState_NEED_SCHEDULE}
	var added []*api.Transition
	for seq := st.Last.GetSeq() + 1; seq <= uint64(n); seq++ {
		tr := transition(seq, states[(seq+1)%3], states[seq%3], api.Reason_USER_PAUSE)
		e.mustAppend(t, id, tr)
		added = append(added, tr)
	}
	return added
}

func (e *env) load(t *testing.T, id uint64) *metastore.JobState {
	t.Helper()
	st, err := e.s.LoadJob(id)
	if err != nil {
		t.Fatalf("LoadJob(%d): %v", id, err)
	}
	if st == nil || st.Record == nil || st.Last == nil {
		t.Fatalf("LoadJob(%d) = %+v: a nil part", id, st)
	}
	return st
}

func (e *env) journal(t *testing.T, id uint64) []*api.Transition {
	t.Helper()
	j, err := e.s.Journal(id)
	if err != nil {
		t.Fatalf("Journal(%d): %v", id, err)
	}
	return j
}

func (e *env) loadAll(t *testing.T) []*metastore.JobState {
	t.Helper()
	var all []*metastore.JobState
	if err := e.s.LoadAllJobs(func(st *metastore.JobState) error {
		all = append(all, st)
		return nil
	}); err != nil {
		t.Fatalf("LoadAllJobs: %v", err)
	}
	return all
}

func (e *env) lastJobID(t *testing.T) uint64 {
	t.Helper()
	id, err := e.s.LastJobID()
	if err != nil {
		t.Fatalf("LastJobID: %v", err)
	}
	return id
}

func (e *env) assertAbsent(t *testing.T, id uint64, what string) {
	t.Helper()
	if st, err := e.s.LoadJob(id); !errors.Is(err, metastore.ErrNotFound) {
		t.Errorf("%s: LoadJob(%d) = %+v, %v; want an error wrapping metastore.ErrNotFound", what, id, st, err)
	}
	for _, st := range e.loadAll(t) {
		if st.Record.GetId() == id {
			t.Errorf("%s: LoadAllJobs has job %d", what, id)
		}
	}
}

func (e *env) assertJob(t *testing.T, rec *api.JobRecord, last *api.Transition, what string) {
	t.Helper()
	st := e.load(t, rec.GetId())
	if !proto.Equal(st.Record, rec) {
		t.Errorf("%s: job %d's record = {%v}, want {%v}", what, rec.GetId(), st.Record, rec)
	}
	if !proto.Equal(st.Last, last) {
		t.Errorf("%s: job %d's newest transition = {%v}, want {%v}", what, rec.GetId(), st.Last, last)
	}
}

func (e *env) assertJournal(t *testing.T, id uint64, want []*api.Transition, what string) {
	t.Helper()
	if got := e.journal(t, id); !transitionsEqual(got, want) {
		t.Errorf("%s: job %d's journal = %v, want %v", what, id, seqs(got), seqs(want))
	}
}

func (e *env) assertTable(t *testing.T, want *api.TableSpec, what string) {
	t.Helper()
	got, err := e.s.Table(want.GetName())
	if err != nil {
		t.Fatalf("%s: Table(%s): %v", what, want.GetName(), err)
	}
	if !proto.Equal(got, want) {
		t.Errorf("%s: table %s = {%v}, want {%v}", what, want.GetName(), got, want)
	}
}

func transitionsEqual(a, b []*api.Transition) bool {
	return slices.EqualFunc(a, b, func(x, y *api.Transition) bool { return proto.Equal(x, y) })
}

func seqs(ts []*api.Transition) []uint64 {
	s := make([]uint64, len(ts))
	for i, t := range ts {
		s[i] = t.GetSeq()
	}
	return s
}

// snapshot is everything LoadAllJobs and the journals return.
type snapshot struct {
	jobs     []*metastore.JobState
	journals map[uint64][]*api.Transition
	lastID   uint64
}

func (e *env) snapshot(t *testing.T) snapshot {
	t.Helper()
	s := snapshot{jobs: e.loadAll(t), journals: map[uint64][]*api.Transition{}, lastID: e.lastJobID(t)}
	for _, st := range s.jobs {
		s.journals[st.Record.GetId()] = e.journal(t, st.Record.GetId())
	}
	return s
}

func assertSameSnapshot(t *testing.T, a, b snapshot, what string) {
	t.Helper()
	ids := func(s snapshot) []uint64 {
		var out []uint64
		for _, st := range s.jobs {
			out = append(out, st.Record.GetId())
		}
		return out
	}
	if !slices.Equal(ids(a), ids(b)) {
		t.Errorf("%s: jobs %v, then %v", what, ids(a), ids(b))
		return
	}
	for i := range a.jobs {
		id := a.jobs[i].Record.GetId()
		if !proto.Equal(a.jobs[i].Record, b.jobs[i].Record) || !proto.Equal(a.jobs[i].Last, b.jobs[i].Last) {
			t.Errorf("%s: job %d: {%v} {%v}, then {%v} {%v}", what, id, a.jobs[i].Record, a.jobs[i].Last, b.jobs[i].Record, b.jobs[i].Last)
		}
		if !transitionsEqual(a.journals[id], b.journals[id]) {
			t.Errorf("%s: job %d's journal %v, then %v", what, id, seqs(a.journals[id]), seqs(b.journals[id]))
		}
	}
	if a.lastID != b.lastID {
		t.Errorf("%s: LastJobID %d, then %d", what, a.lastID, b.lastID)
	}
}
