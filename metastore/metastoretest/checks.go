package metastoretest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore"
)

func testCreateDurable(t *testing.T, e *env) {
	a := newJob(1, "a")
	// b loads into a's table and creates none.
	b := metastore.NewJob{Record: record(2, "b", a.NewTable), First: created()}
	e.mustCreate(t, a, b)
	e.restart(t)
	for _, j := range []metastore.NewJob{a, b} {
		e.assertJob(t, j.Record, created(), "after a restart")
		e.assertJournal(t, j.Record.GetId(), []*api.Transition{created()}, "after a restart")
	}
	e.assertTable(t, a.NewTable, "after a restart")
	if id := e.lastJobID(t); id != 2 {
		t.Errorf("LastJobID after a restart = %d, want 2", id)
	}
}

func testCreateRefused(t *testing.T, e *env) {
	a := newJob(1, "a")
	e.mustCreate(t, a)
	other := newTable(a.NewTable.GetName(), api.ColumnType_INT64)
	errs := e.s.CreateJobs([]metastore.NewJob{
		newJob(6, "a"), // name taken
		{Record: record(7, "y", other), First: created(), NewTable: other}, // table exists, another schema
		newJob(4, "z"),
	})
	if len(errs) != 3 {
		t.Fatalf("CreateJobs of 3 jobs returned %d errors", len(errs))
	}
	if !errors.Is(errs[0], metastore.ErrNameTaken) {
		t.Errorf("CreateJobs of a taken name = %v, want an error wrapping metastore.ErrNameTaken", errs[0])
	}
	if !errors.Is(errs[1], metastore.ErrTableExists) {
		t.Errorf("CreateJobs of a table of another schema = %v, want an error wrapping metastore.ErrTableExists", errs[1])
	}
	if errs[2] != nil {
		t.Errorf("CreateJobs of a fine job beside refused ones = %v", errs[2])
	}
	for _, when := range []string{"before a restart", "after a restart"} {
		e.assertAbsent(t, 6, "a job refused for its name, "+when)
		e.assertAbsent(t, 7, "a job refused for its table, "+when)
		e.assertJob(t, a.Record, created(), "the job whose name was taken, "+when)
		e.assertJob(t, record(4, "z", newTable("t_z", api.ColumnType_STRING)), created(), when)
		e.assertTable(t, a.NewTable, "a table whose re-creation was refused, "+when)
		if id := e.lastJobID(t); id != 4 {
			t.Errorf("LastJobID %s = %d, want 4 (the refused 6 and 7 were not written)", when, id)
		}
		e.restart(t)
	}
	// The refused job's name was not taken.
	e.mustCreate(t, metastore.NewJob{Record: record(8, "y", a.NewTable), First: created()})
}

func testNameTakenInCall(t *testing.T, e *env) {
	str, num := newTable("tt", api.ColumnType_STRING), newTable("tt", api.ColumnType_INT64)
	errs := e.s.CreateJobs([]metastore.NewJob{
		newJob(1, "n"),
		newJob(2, "n"),
		{Record: record(3, "p", str), First: created(), NewTable: str},
		{Record: record(4, "q", num), First: created(), NewTable: num},
	})
	if errs[0] != nil || errs[2] != nil {
		t.Fatalf("CreateJobs: the first of each pair failed: %v, %v", errs[0], errs[2])
	}
	if !errors.Is(errs[1], metastore.ErrNameTaken) {
		t.Errorf("CreateJobs of a name given twice in one call = %v, want an error wrapping metastore.ErrNameTaken", errs[1])
	}
	if !errors.Is(errs[3], metastore.ErrTableExists) {
		t.Errorf("CreateJobs of a table given twice in one call with another schema = %v, want an error wrapping metastore.ErrTableExists", errs[3])
	}
	e.restart(t)
	e.assertAbsent(t, 2, "the second job of a name")
	e.assertAbsent(t, 4, "the second job of a table")
	e.assertJob(t, newJob(1, "n").Record, created(), "after a restart")
	e.assertTable(t, str, "after a restart")
}

func testIdenticalTable(t *testing.T, e *env) {
	a := newJob(1, "a")
	e.mustCreate(t, a)
	same := proto.CloneOf(a.NewTable)
	e.mustCreate(t, metastore.NewJob{Record: record(2, "b", same), First: created(), NewTable: same})
	cd := newTable("cd", api.ColumnType_BOOL)
	e.mustCreate(t,
		metastore.NewJob{Record: record(3, "c", cd), First: created(), NewTable: cd},
		metastore.NewJob{Record: record(4, "d", cd), First: created(), NewTable: proto.CloneOf(cd)})
	e.restart(t)
	e.assertTable(t, a.NewTable, "after a restart")
	e.assertTable(t, cd, "after a restart")
	if n := len(e.loadAll(t)); n != 4 {
		t.Errorf("LoadAllJobs: %d jobs, want 4", n)
	}
}

func testConcurrentCreates(t *testing.T, e *env) {
	const writers, rounds = 16, 300
	for round := range rounds {
		name := fmt.Sprintf("same%d", round)
		errs := make([]error, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range writers {
			j := newJob(uint64(1+round*writers+i), name)
			wg.Go(func() {
				<-start
				errs[i] = e.s.CreateJobs([]metastore.NewJob{j})[0]
			})
		}
		close(start)
		wg.Wait()
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, metastore.ErrNameTaken):
				t.Fatalf("round %d, writer %d: CreateJobs = %v, want nil or an error wrapping metastore.ErrNameTaken", round, i, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d of %d concurrent creates of one name succeeded, want 1", round, won, writers)
		}
	}
	e.restart(t)
	if n := len(e.loadAll(t)); n != rounds {
		t.Errorf("LoadAllJobs after concurrent creates: %d jobs, want %d (one per name)", n, rounds)
	}
}

func testLastJobID(t *testing.T, e *env) {
	if id := e.lastJobID(t); id != 0 {
		t.Errorf("LastJobID of an empty store = %d", id)
	}
	for _, c := range []struct{ id, want uint64 }{{3, 3}, {7, 7}, {5, 7}} {
		e.mustCreate(t, newJob(c.id, fmt.Sprintf("j%d", c.id)))
		if id := e.lastJobID(t); id != c.want {
			t.Errorf("LastJobID after creating job %d = %d, want %d", c.id, id, c.want)
		}
	}
	e.restart(t)
	if id := e.lastJobID(t); id != 7 {
		t.Errorf("LastJobID after a restart = %d, want 7", id)
	}
}

func testLoad(t *testing.T, e *env) {
	jobs := []metastore.NewJob{newJob(3, "c"), newJob(1, "a"), newJob(2, "b")}
	e.mustCreate(t, jobs...)
	added := e.grow(t, 2, 4)
	lasts := map[uint64]*api.Transition{1: created(), 2: added[len(added)-1], 3: created()}
	for _, j := range jobs {
		e.assertJob(t, j.Record, lasts[j.Record.GetId()], "LoadJob")
	}
	if st, err := e.s.LoadJob(99); !errors.Is(err, metastore.ErrNotFound) {
		t.Errorf("LoadJob of an unknown job = %+v, %v; want an error wrapping metastore.ErrNotFound", st, err)
	}
	all := e.loadAll(t)
	var ids []uint64
	for _, st := range all {
		ids = append(ids, st.Record.GetId())
		if want := lasts[st.Record.GetId()]; !proto.Equal(st.Last, want) {
			t.Errorf("LoadAllJobs: job %d's newest transition = {%v}, want {%v}", st.Record.GetId(), st.Last, want)
		}
	}
	if !slices.Equal(ids, []uint64{1, 2, 3}) {
		t.Errorf("LoadAllJobs order = %v, want [1 2 3]", ids)
	}
	for _, j := range jobs {
		if i := j.Record.GetId() - 1; int(i) < len(all) && !proto.Equal(all[i].Record, j.Record) {
			t.Errorf("LoadAllJobs: job %d's record = {%v}, want {%v}", j.Record.GetId(), all[i].Record, j.Record)
		}
	}
	stop := errors.New("stop")
	calls := 0
	if err := e.s.LoadAllJobs(func(*metastore.JobState) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Errorf("LoadAllJobs with fn failing: err %v after %d calls, want stop after 1", err, calls)
	}
}

func testAppendFork(t *testing.T, e *env) {
	e.mustCreate(t, newJob(1, "a"))
	want := []*api.Transition{created()}
	refuse := func(seq uint64, what string) {
		t.Helper()
		tr := transition(seq, api.JobState_NEED_SCHEDULE, api.JobState_RUNNING, api.Reason_SCHEDULED)
		if err := e.s.AppendTransition(1, tr); err == nil {
			t.Errorf("AppendTransition of seq %d (%s) after seq %d succeeded", seq, what, want[len(want)-1].GetSeq())
		}
		e.assertJournal(t, 1, want, "a refused append")
	}
	refuse(1, "the head again: a second writer")
	refuse(3, "a gap")
	refuse(0, "no seq")
	t2 := transition(2, api.JobState_NEED_SCHEDULE, api.JobState_RUNNING, api.Reason_SCHEDULED)
	e.mustAppend(t, 1, t2)
	want = append(want, t2)
	e.restart(t)
	e.assertJournal(t, 1, want, "after a restart")
	refuse(2, "the head again, after a restart")
	refuse(4, "a gap, after a restart")
	t3 := transition(3, api.JobState_RUNNING, api.JobState_PAUSED, api.Reason_USER_PAUSE)
	e.mustAppend(t, 1, t3)
	want = append(want, t3)
	e.assertJob(t, newJob(1, "a").Record, t3, "after appends")

	for _, seq := range []uint64{1, 2} {
		if err := e.s.AppendTransition(99, transition(seq, 0, api.JobState_RUNNING, api.Reason_SCHEDULED)); err == nil {
			t.Errorf("AppendTransition of seq %d to an unknown job succeeded", seq)
		}
	}
	e.assertAbsent(t, 99, "a job only appended to")
}

func testConcurrentAppends(t *testing.T, e *env) {
	e.mustCreate(t, newJob(1, "a"))
	const writers, rounds = 16, 500
	journal := []*api.Transition{created()}
	for round := range rounds {
		seq := uint64(2 + round)
		errs := make([]error, writers)
		trs := make([]*api.Transition, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range writers {
			trs[i] = transition(seq, api.JobState_NEED_SCHEDULE, api.JobState_PAUSED, api.Reason_USER_PAUSE)
			trs[i].Message = fmt.Sprintf("writer %d", i)
			wg.Go(func() {
				<-start
				errs[i] = e.s.AppendTransition(1, trs[i])
			})
		}
		close(start)
		wg.Wait()
		var winner *api.Transition
		for i, err := range errs {
			if err != nil {
				continue
			}
			if winner != nil {
				t.Fatalf("round %d: %s and writer %d both appended seq %d", round, winner.GetMessage(), i, seq)
			}
			winner = trs[i]
		}
		if winner == nil {
			t.Fatalf("round %d: no concurrent append of seq %d succeeded", round, seq)
		}
		journal = append(journal, winner)
	}
	e.restart(t)
	e.assertJournal(t, 1, journal, "after concurrent appends")
}

func testAppendBatch(t *testing.T, e *env) {
	e.mustCreate(t, newJob(1, "a"), newJob(2, "b"), newJob(3, "c"))
	tr := func(seq uint64) *api.Transition {
		return transition(seq, api.JobState_RUNNING, api.JobState_NEED_SCHEDULE, api.Reason_RECOVERED)
	}
	journals := map[uint64][]*api.Transition{1: {created()}, 2: {created()}, 3: {created()}}
	check := func(what string) {
		t.Helper()
		for id := uint64(1); id <= 3; id++ {
			e.assertJournal(t, id, journals[id], what)
		}
	}
	if err := e.s.AppendTransitions([]metastore.JobTransition{{JobID: 1, T: tr(2)}, {JobID: 2, T: tr(2)}}); err != nil {
		t.Fatalf("AppendTransitions: %v", err)
	}
	journals[1] = append(journals[1], tr(2))
	journals[2] = append(journals[2], tr(2))
	check("after a batch")

	for _, c := range []struct {
		what  string
		batch []metastore.JobTransition
	}{
		{"one entry forks its journal", []metastore.JobTransition{{JobID: 1, T: tr(3)}, {JobID: 2, T: tr(2)}}},
		{"one entry is of an unknown job", []metastore.JobTransition{{JobID: 3, T: tr(2)}, {JobID: 99, T: tr(2)}}},
	} {
		if err := e.s.AppendTransitions(c.batch); err == nil {
			t.Errorf("AppendTransitions where %s succeeded", c.what)
		}
		check("a refused batch (" + c.what + ")")
	}
	if err := e.s.AppendTransitions([]metastore.JobTransition{{JobID: 1, T: tr(3)}, {JobID: 3, T: tr(2)}}); err != nil {
		t.Fatalf("AppendTransitions: %v", err)
	}
	journals[1] = append(journals[1], tr(3))
	journals[3] = append(journals[3], tr(2))
	e.restart(t)
	check("after a restart")
	e.mustAppend(t, 1, tr(4))
}

func testHistory(t *testing.T, e *env) {
	e.mustCreate(t, newJob(1, "a"))
	all := append([]*api.Transition{created()}, e.grow(t, 1, 5)...)
	for _, c := range []struct {
		max  int
		want []*api.Transition
	}{{3, all[2:]}, {1, all[4:]}, {5, all}, {10, all}} {
		got, err := e.s.History(1, c.max)
		if err != nil {
			t.Fatalf("History(%d): %v", c.max, err)
		}
		if !transitionsEqual(got, c.want) {
			t.Errorf("History(%d) = %v, want %v (the newest, oldest first)", c.max, seqs(got), seqs(c.want))
		}
	}
}

func testJournal(t *testing.T, e *env) {
	e.mustCreate(t, newJob(1, "a"), newJob(2, "b"))
	// Long enough that an implementation that skips to a journal's end
	// must find it.
	long := append([]*api.Transition{created()}, e.grow(t, 1, 70)...)
	short := append([]*api.Transition{created()}, e.grow(t, 2, 3)...)
	for _, when := range []string{"before a restart", "after a restart"} {
		e.assertJournal(t, 1, long, when)
		e.assertJournal(t, 2, short, when)
		for _, st := range e.loadAll(t) {
			want := map[uint64]*api.Transition{1: long[len(long)-1], 2: short[len(short)-1]}[st.Record.GetId()]
			if !proto.Equal(st.Last, want) {
				t.Errorf("LoadAllJobs %s: job %d's newest = seq %d, want %d", when, st.Record.GetId(), st.Last.GetSeq(), want.GetSeq())
			}
		}
		e.restart(t)
	}
}

func testAlter(t *testing.T, e *env) {
	j := newJob(1, "a")
	e.mustCreate(t, j)
	rec2 := proto.CloneOf(j.Record)
	rec2.Spec.Kafka.Topic = "altered"
	rec2.Spec.MaxBatchRows = 12345
	t2 := transition(2, api.JobState_PAUSED, api.JobState_PAUSED, api.Reason_USER_ALTER)
	if err := e.s.AlterJob(rec2, t2); err != nil {
		t.Fatalf("AlterJob: %v", err)
	}
	journal := []*api.Transition{created(), t2}
	e.assertJob(t, rec2, t2, "after AlterJob")
	e.assertJournal(t, 1, journal, "after AlterJob")

	for _, seq := range []uint64{2, 4} {
		rec3 := proto.CloneOf(rec2)
		rec3.Spec.Kafka.Topic = "refused"
		if err := e.s.AlterJob(rec3, transition(seq, api.JobState_PAUSED, api.JobState_PAUSED, api.Reason_USER_ALTER)); err == nil {
			t.Errorf("AlterJob with seq %d after seq 2 succeeded", seq)
		}
		e.assertJob(t, rec2, t2, "a refused AlterJob")
		e.assertJournal(t, 1, journal, "a refused AlterJob")
	}
	if err := e.s.AlterJob(record(99, "nobody", nil), transition(2, 0, api.JobState_PAUSED, api.Reason_USER_ALTER)); err == nil {
		t.Error("AlterJob of an unknown job succeeded")
	}
	e.assertAbsent(t, 99, "an unknown job altered")

	e.restart(t)
	e.assertJob(t, rec2, t2, "after AlterJob and a restart")
	e.assertJournal(t, 1, journal, "after AlterJob and a restart")
	e.mustAppend(t, 1, transition(3, api.JobState_PAUSED, api.JobState_NEED_SCHEDULE, api.Reason_USER_RESUME))
}

// testLoadConsistent: LoadJob and LoadAllJobs return one state of a job,
// never the record of one alter with the newest entry of another.
func testLoadConsistent(t *testing.T, e *env) {
	j := newJob(1, "a")
	j.Record.Spec.MaxBatchRows = 1 // = the seq of the newest entry
	e.mustCreate(t, j)
	const alters = 200
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		for seq := uint64(2); seq <= alters; seq++ {
			rec := proto.CloneOf(j.Record)
			rec.Spec.MaxBatchRows = int64(seq)
			if err := e.s.AlterJob(rec, transition(seq, api.JobState_PAUSED, api.JobState_PAUSED, api.Reason_USER_ALTER)); err != nil {
				t.Errorf("AlterJob seq %d: %v", seq, err)
				return
			}
		}
	})
	check := func(st *metastore.JobState, how string, read int) bool {
		t.Helper()
		if st.Last == nil || st.Record.GetSpec().GetMaxBatchRows() != int64(st.Last.GetSeq()) {
			t.Errorf("read %d: %s: record of the alter of seq %d, newest entry {%v}; want one alter's state",
				read, how, st.Record.GetSpec().GetMaxBatchRows(), st.Last)
			return false
		}
		return true
	}
	for stop, read := false, 0; !stop; read++ {
		select {
		case <-done:
			stop = true
		default:
		}
		st, err := e.s.LoadJob(1)
		if err != nil {
			t.Errorf("LoadJob: %v", err)
			break
		}
		if !check(st, "LoadJob", read) {
			break
		}
		ok := true
		if err := e.s.LoadAllJobs(func(st *metastore.JobState) error {
			ok = ok && check(st, "LoadAllJobs", read)
			return nil
		}); err != nil {
			t.Errorf("LoadAllJobs: %v", err)
			break
		}
		if !ok {
			break
		}
	}
	wg.Wait()
}

func testDelete(t *testing.T, e *env) {
	a, b := newJob(1, "a"), newJob(2, "b")
	e.mustCreate(t, a, b)
	e.grow(t, 2, 3)
	aJournal := append([]*api.Transition{created()}, e.grow(t, 1, 3)...)
	if err := e.s.DeleteJob(2, "b"); err != nil {
		t.Fatalf("DeleteJob: %v", err)
	}
	for _, when := range []string{"after DeleteJob", "after DeleteJob and a restart"} {
		e.assertAbsent(t, 2, when)
		if j, err := e.s.Journal(2); (err != nil && !errors.Is(err, metastore.ErrNotFound)) || len(j) != 0 {
			t.Errorf("%s: Journal = %v, %v; want none (empty, or an error wrapping metastore.ErrNotFound)", when, seqs(j), err)
		}
		if err := e.s.AppendTransition(2, transition(4, 0, api.JobState_RUNNING, api.Reason_SCHEDULED)); err == nil {
			t.Errorf("%s: AppendTransition to the deleted job succeeded", when)
		}
		e.assertTable(t, b.NewTable, "the deleted job's table, "+when)
		e.assertJob(t, a.Record, aJournal[len(aJournal)-1], "another job, "+when)
		e.assertJournal(t, 1, aJournal, "another job, "+when)
		if id := e.lastJobID(t); id != 2 {
			t.Errorf("LastJobID %s = %d, want 2 (ids are not reused)", when, id)
		}
		e.restart(t)
	}
	// The name is free again; the new job's journal is its own.
	e.mustCreate(t, newJob(3, "b"))
	e.assertJournal(t, 3, []*api.Transition{created()}, "a new job of a deleted job's name")
	e.assertAbsent(t, 2, "the deleted job, after its name was reused")
}

func testTables(t *testing.T, e *env) {
	if tbl, err := e.s.Table("nope"); !errors.Is(err, metastore.ErrNotFound) {
		t.Errorf("Table of an unknown table = %v, %v; want an error wrapping metastore.ErrNotFound", tbl, err)
	}
	spec := newTable("cat", api.ColumnType_STRING)
	create := func(spec *api.TableSpec, wantCreated bool, wantErr error, what string) {
		t.Helper()
		created, err := e.s.CreateTable(spec)
		if created != wantCreated || !errors.Is(err, wantErr) {
			t.Errorf("CreateTable (%s) = %v, %v; want %v, %v", what, created, err, wantCreated, wantErr)
		}
	}
	create(spec, true, nil, "new")
	create(proto.CloneOf(spec), false, nil, "identical")
	create(newTable("cat", api.ColumnType_FLOAT64), false, metastore.ErrTableExists, "another schema")
	e.assertTable(t, spec, "after a refused CreateTable")
	e.restart(t)
	e.assertTable(t, spec, "after a restart")
	create(proto.CloneOf(spec), false, nil, "identical, after a restart")
	create(newTable("cat", api.ColumnType_INT64), false, metastore.ErrTableExists, "another schema, after a restart")

	// One catalog for CreateTable and CreateJobs.
	e.mustCreate(t, metastore.NewJob{Record: record(1, "a", spec), First: created(), NewTable: proto.CloneOf(spec)})
	j := newJob(2, "b")
	e.mustCreate(t, j)
	create(proto.CloneOf(j.NewTable), false, nil, "identical to one a job created")
	create(newTable(j.NewTable.GetName(), api.ColumnType_BOOL), false, metastore.ErrTableExists, "another schema than one a job created")
}

// testReplayTwice: recovery reads the store; reading what a restart of a
// restarted store finds gives the same jobs, journals and ids.
func testReplayTwice(t *testing.T, e *env) {
	e.mustCreate(t, newJob(1, "a"), newJob(2, "b"), newJob(3, "c"), newJob(4, "d"))
	e.grow(t, 1, 5)
	e.grow(t, 4, 2)
	rec2 := proto.CloneOf(newJob(2, "b").Record)
	rec2.Spec.MaxBatchRows = 777
	if err := e.s.AlterJob(rec2, transition(2, api.JobState_PAUSED, api.JobState_PAUSED, api.Reason_USER_ALTER)); err != nil {
		t.Fatalf("AlterJob: %v", err)
	}
	if err := e.s.DeleteJob(3, "c"); err != nil {
		t.Fatalf("DeleteJob: %v", err)
	}
	if err := e.s.AppendTransitions([]metastore.JobTransition{
		{JobID: 1, T: transition(6, api.JobState_RUNNING, api.JobState_NEED_SCHEDULE, api.Reason_RECOVERED)},
		{JobID: 4, T: transition(3, api.JobState_RUNNING, api.JobState_NEED_SCHEDULE, api.Reason_RECOVERED)},
	}); err != nil {
		t.Fatalf("AppendTransitions: %v", err)
	}
	s0 := e.snapshot(t)
	if len(s0.jobs) != 3 {
		t.Fatalf("LoadAllJobs: %d jobs, want 3", len(s0.jobs))
	}
	e.restart(t)
	s1 := e.snapshot(t)
	assertSameSnapshot(t, s0, s1, "a restart")
	e.restart(t)
	assertSameSnapshot(t, s1, e.snapshot(t), "a second restart")
	// Each journal continues from its head.
	for _, st := range s1.jobs {
		e.mustAppend(t, st.Record.GetId(), transition(st.Last.GetSeq()+1, st.Last.GetTo(), api.JobState_RUNNING, api.Reason_SCHEDULED))
	}
}
