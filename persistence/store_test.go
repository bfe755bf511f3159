package persistence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/loadnode/loadnode/api"
	"google.golang.org/protobuf/proto"
)

const testDir = "db"

// fatalRecorder is an OnFatal that records instead of exiting.
type fatalRecorder struct {
	mu   sync.Mutex
	errs []error
}

func (r *fatalRecorder) onFatal(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

func (r *fatalRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.errs)
}

// openStore opens a Store on fs; it is closed at the end of the test. A
// fatal error fails the test unless opts.OnFatal is set.
func openStore(t testing.TB, fs vfs.FS, opts Options) *Store {
	t.Helper()
	opts.Dir = testDir
	opts.FS = fs
	if opts.OnFatal == nil {
		opts.OnFatal = func(err error) { t.Errorf("unexpected fatal store error: %v", err) }
	}
	s, err := Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// crashReopen opens a Store on a crash clone of mem: what a restart after
// power loss at this moment could find.
func crashReopen(t testing.TB, mem *vfs.MemFS, cfg vfs.CrashCloneCfg) *Store {
	t.Helper()
	return openStore(t, mem.CrashClone(cfg), Options{})
}

// dump returns every key and value in the store.
func dump(t testing.TB, s *Store) map[string]string {
	t.Helper()
	it, err := s.db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = it.Close() }()
	m := map[string]string{}
	for valid := it.First(); valid; valid = it.Next() {
		if string(it.Key()) == formatVersionKey {
			continue // written by Open, not by the call under test
		}
		m[string(it.Key())] = string(it.Value())
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return m
}

func assertSameDump(t testing.TB, before, after map[string]string) {
	t.Helper()
	for k, v := range after {
		if bv, ok := before[k]; !ok {
			t.Errorf("key %q was written", k)
		} else if bv != v {
			t.Errorf("key %q changed", k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			t.Errorf("key %q was deleted", k)
		}
	}
}

func testRecord(id uint64, name string) *api.JobRecord {
	return &api.JobRecord{
		Id:            id,
		Name:          name,
		CreatedUnixMs: 1700000000000 + int64(id),
		Spec: &api.JobSpec{
			Name:   name,
			Format: "csv",
			Table:  testTable("t_" + name),
			Kafka:  &api.KafkaSpec{Brokers: []string{"127.0.0.1:9092"}, Topic: "topic_" + name},
		},
	}
}

func testTable(name string) *api.TableSpec {
	return &api.TableSpec{Name: name, Columns: []*api.Column{
		{Name: "a", Type: api.ColumnType_INT64},
		{Name: "b", Type: api.ColumnType_STRING},
	}}
}

func createdTransition() *api.Transition {
	return &api.Transition{Seq: 1, TimeUnixMs: 1700000000000, To: api.JobState_NEED_SCHEDULE, Reason: api.Reason_CREATED}
}

func mustCreate(t testing.TB, s *Store, id uint64, name string) *api.JobRecord {
	t.Helper()
	rec := testRecord(id, name)
	if err := s.CreateJob(rec, createdTransition(), rec.Spec.Table); err != nil {
		t.Fatalf("CreateJob(%d, %q): %v", id, name, err)
	}
	return rec
}

func assertProtoEqual(t testing.TB, what string, got, want proto.Message) {
	t.Helper()
	if !proto.Equal(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// assertWholeJob checks that job id exists completely: record, journal head,
// name index, table, last job id.
func assertWholeJob(t testing.TB, s *Store, rec *api.JobRecord) {
	t.Helper()
	recs, err := s.JobRecords()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("JobRecords: %d records, want 1", len(recs))
	}
	assertProtoEqual(t, "record", recs[0], rec)
	st, err := s.LoadJob(rec.Id)
	if err != nil {
		t.Fatalf("LoadJob: %v", err)
	}
	assertProtoEqual(t, "last transition", st.Last, createdTransition())
	if j, err := s.Journal(rec.Id); err != nil || len(j) != 1 {
		t.Fatalf("Journal = %v, %v; want one entry", j, err)
	}
	if id, err := s.LastJobID(); err != nil || id != rec.Id {
		t.Errorf("LastJobID = %d, %v; want %d", id, err, rec.Id)
	}
	tbl, err := s.Table(rec.Spec.Table.Name)
	if err != nil {
		t.Fatalf("Table: %v", err)
	}
	assertProtoEqual(t, "table", tbl, rec.Spec.Table)
	err = s.CreateJob(testRecord(rec.Id+1, rec.Name), createdTransition(), nil)
	if !errors.Is(err, ErrNameTaken) {
		t.Errorf("CreateJob with the same name: %v, want ErrNameTaken", err)
	}
}

// assertNoJob checks that the store holds no job at all and the name is free.
func assertNoJob(t testing.TB, s *Store, rec *api.JobRecord) {
	t.Helper()
	if recs, err := s.JobRecords(); err != nil || len(recs) != 0 {
		t.Fatalf("JobRecords = %v, %v; want none", recs, err)
	}
	if _, err := s.LoadJob(rec.Id); !errors.Is(err, ErrNotFound) {
		t.Errorf("LoadJob: %v, want ErrNotFound", err)
	}
	if id, err := s.LastJobID(); err != nil || id != 0 {
		t.Errorf("LastJobID = %d, %v; want 0", id, err)
	}
	if _, err := s.Table(rec.Spec.Table.Name); !errors.Is(err, ErrNotFound) {
		t.Errorf("Table: %v, want ErrNotFound", err)
	}
	if d := dump(t, s); len(d) != 0 {
		t.Errorf("store holds %d keys, want none: %v", len(d), d)
	}
	// The name is free.
	mustCreate(t, s, rec.Id, rec.Name)
}

func TestCreateJobReopen(t *testing.T) {
	mem := vfs.NewMem()
	s := openStore(t, mem, Options{})
	if id, err := s.LastJobID(); err != nil || id != 0 {
		t.Fatalf("LastJobID on an empty store = %d, %v", id, err)
	}
	rec := mustCreate(t, s, 7, "orders")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openStore(t, mem, Options{})
	assertWholeJob(t, s, rec)
	if got, err := s.LoadJob(rec.Id); err != nil {
		t.Fatal(err)
	} else if got.Stats == nil || got.Progress == nil || len(got.Progress) != 0 {
		t.Errorf("LoadJob of a new job: stats %v, progress %v; want empty, non-nil", got.Stats, got.Progress)
	}
}

func TestCreateJobRefusals(t *testing.T) {
	s := openStore(t, vfs.NewMem(), Options{})
	rec := mustCreate(t, s, 1, "a")
	before := dump(t, s)

	tests := []struct {
		name    string
		rec     *api.JobRecord
		first   *api.Transition
		table   *api.TableSpec
		wantErr error // nil: any error
	}{
		{"duplicate name", testRecord(2, "a"), createdTransition(), testTable("fresh"), ErrNameTaken},
		{"duplicate name, no table", testRecord(2, "a"), createdTransition(), nil, ErrNameTaken},
		{"table exists with another schema", testRecord(2, "b"), createdTransition(), otherSchema(rec.Spec.Table), ErrTableExists},
		{"id used", testRecord(1, "b"), createdTransition(), nil, nil},
		{"nil record", nil, createdTransition(), nil, nil},
		{"id 0", testRecord(0, "b"), createdTransition(), nil, nil},
		{"empty name", testRecord(2, ""), createdTransition(), nil, nil},
		{"nil transition", testRecord(2, "b"), nil, nil, nil},
		{"seq 2", testRecord(2, "b"), &api.Transition{Seq: 2}, nil, nil},
		{"NUL in table name", testRecord(2, "b"), createdTransition(), testTable("x\x00y"), nil},
		{"empty table name", testRecord(2, "b"), createdTransition(), testTable(""), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.CreateJob(tt.rec, tt.first, tt.table)
			if err == nil {
				t.Fatal("CreateJob succeeded")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if !strings.HasPrefix(err.Error(), "persistence: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
			assertSameDump(t, before, dump(t, s))
		})
	}
}

func TestCreateJobConcurrentSameName(t *testing.T) {
	s := openStore(t, vfs.NewMem(), Options{})
	const n = 8
	var wg sync.WaitGroup
	var ok, taken atomic.Int32
	for i := range n {
		wg.Go(func() {
			err := s.CreateJob(testRecord(uint64(i+1), "same"), createdTransition(), nil)
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, ErrNameTaken):
				taken.Add(1)
			default:
				t.Errorf("CreateJob: %v", err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 || taken.Load() != n-1 {
		t.Errorf("%d creates succeeded and %d saw ErrNameTaken; want 1 and %d", ok.Load(), taken.Load(), n-1)
	}
	if recs, err := s.JobRecords(); err != nil || len(recs) != 1 {
		t.Errorf("JobRecords = %d records, %v; want 1", len(recs), err)
	}
}

func TestJobRecordsOrderAndLastJobID(t *testing.T) {
	s := openStore(t, vfs.NewMem(), Options{})
	ids := []uint64{5, 1, 300, 2, 1 << 40}
	for _, id := range ids {
		rec := testRecord(id, "job"+strings.Repeat("x", int(id%7)))
		rec.Name = rec.Name + string(rune('a'+id%26))
		if err := s.CreateJob(rec, createdTransition(), nil); err != nil {
			t.Fatal(err)
		}
	}
	// Keys of other kinds between records must be skipped.
	if err := s.AppendTransition(1, &api.Transition{Seq: 2, To: api.JobState_RUNNING}); err != nil {
		t.Fatal(err)
	}
	if err := s.InitProgress(2, map[int32]int64{0: 1, 1: 1}); err != nil {
		t.Fatal(err)
	}
	recs, err := s.JobRecords()
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, r := range recs {
		got = append(got, r.Id)
	}
	want := []uint64{1, 2, 5, 300, 1 << 40}
	if len(got) != len(want) {
		t.Fatalf("ids = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ids = %v, want %v", got, want)
		}
	}
	if id, err := s.LastJobID(); err != nil || id != 1<<40 {
		t.Errorf("LastJobID = %d, %v; want %d (never lowered by a smaller id)", id, err, uint64(1<<40))
	}
}

// walSyncOrWrite injects errors into WAL writes or syncs while on.
func walInjector(kind errorfs.OpKind) *errorfs.Toggle {
	return &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind == kind && strings.HasSuffix(op.Path, ".log") {
			return errorfs.ErrInjected
		}
		return nil
	})}
}

func TestCreateJobFailedWALWrite(t *testing.T) {
	for _, kind := range []errorfs.OpKind{errorfs.OpFileWrite, errorfs.OpFileSyncData} {
		t.Run(kindName(kind), func(t *testing.T) {
			mem := vfs.NewCrashableMem()
			toggle := walInjector(kind)
			var opsAfter atomic.Int64
			counting := errorfs.InjectorFunc(func(errorfs.Op) error { opsAfter.Add(1); return nil })
			fs := errorfs.Wrap(mem, errorfs.Any(toggle, counting))
			var fatals fatalRecorder
			s := openStore(t, fs, Options{OnFatal: fatals.onFatal})
			rec := testRecord(1, "a")

			toggle.On()
			err := s.CreateJob(rec, createdTransition(), rec.Spec.Table)
			toggle.Off()

			if !errors.Is(err, ErrStoreFailed) {
				t.Fatalf("CreateJob = %v, want ErrStoreFailed", err)
			}
			if !errors.Is(err, errorfs.ErrInjected) {
				t.Errorf("CreateJob = %v, want it to wrap the injected cause", err)
			}
			if fatals.count() != 1 {
				t.Errorf("OnFatal called %d times, want 1", fatals.count())
			}
			if ferr := s.Failed(); !errors.Is(ferr, ErrStoreFailed) {
				t.Errorf("Failed() = %v, want ErrStoreFailed", ferr)
			}

			// Later calls fail fast, without touching the filesystem.
			opsAfter.Store(0)
			calls := map[string]func() error{
				"CreateJob":        func() error { return s.CreateJob(testRecord(2, "b"), createdTransition(), nil) },
				"AppendTransition": func() error { return s.AppendTransition(1, &api.Transition{Seq: 2}) },
				"InitProgress":     func() error { return s.InitProgress(1, map[int32]int64{0: 0}) },
				"CommitBatch": func() error {
					return s.CommitBatch(&Commit{JobID: 1, Ranges: []Range{{Partition: 0, From: 0, To: 1}}})
				},
				"JobRecords": func() error { _, err := s.JobRecords(); return err },
				"LoadJob":    func() error { _, err := s.LoadJob(1); return err },
			}
			for name, call := range calls {
				if err := call(); !errors.Is(err, ErrStoreFailed) {
					t.Errorf("%s after failure = %v, want ErrStoreFailed", name, err)
				}
			}
			if n := opsAfter.Load(); n != 0 {
				t.Errorf("calls after failure did %d filesystem operations, want 0", n)
			}
			if fatals.count() != 1 {
				t.Errorf("OnFatal called %d times, want 1", fatals.count())
			}
			if err := s.Close(); !errors.Is(err, ErrStoreFailed) {
				t.Errorf("Close = %v, want ErrStoreFailed", err)
			}

			// Restart after power loss: the job does not exist, the name is free.
			assertNoJob(t, crashReopen(t, mem, vfs.CrashCloneCfg{}), rec)
		})
	}
}

func kindName(k errorfs.OpKind) string {
	switch k {
	case errorfs.OpFileWrite:
		return "write"
	case errorfs.OpFileSyncData:
		return "syncdata"
	default:
		return "op"
	}
}

// TestCreateJobErrors fails the i-th filesystem write operation of CreateJob
// for i = 0, 1, 2 ... until CreateJob succeeds; after each failure, every
// restart after power loss finds the whole job or nothing of it.
func TestCreateJobErrors(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	failures := 0
	for i := int32(0); ; i++ {
		if i > 100 {
			t.Fatal("CreateJob still failing after 100 injected errors")
		}
		mem := vfs.NewCrashableMem()
		var on atomic.Bool
		var idx atomic.Int32
		fs := errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
			if !on.Load() || op.Kind.ReadOrWrite() != errorfs.OpIsWrite {
				return nil
			}
			if idx.Add(1)-1 == i {
				return errorfs.ErrInjected
			}
			return nil
		}))
		var fatals fatalRecorder
		s := openStore(t, fs, Options{OnFatal: fatals.onFatal})
		rec := testRecord(1, "a")
		on.Store(true)
		err := s.CreateJob(rec, createdTransition(), rec.Spec.Table)
		on.Store(false)
		if err == nil {
			if fatals.count() != 0 {
				t.Fatalf("op %d: CreateJob succeeded but OnFatal was called", i)
			}
			_ = s.Close()
			assertWholeJob(t, crashReopen(t, mem, vfs.CrashCloneCfg{}), rec)
			break
		}
		failures++
		if !errors.Is(err, ErrStoreFailed) || fatals.count() != 1 {
			t.Fatalf("op %d: CreateJob = %v with %d OnFatal calls; want ErrStoreFailed and 1", i, err, fatals.count())
		}
		for _, pct := range []int{0, 50, 100} {
			cfg := vfs.CrashCloneCfg{UnsyncedDataPercent: pct, RNG: rng}
			s2 := crashReopen(t, mem, cfg)
			recs, err := s2.JobRecords()
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) == 0 {
				assertNoJob(t, s2, rec)
			} else {
				assertWholeJob(t, s2, rec)
			}
			_ = s2.Close()
		}
		_ = s.Close()
	}
	if failures < 2 {
		t.Errorf("only %d injected failures; the WAL write and sync should both have been hit", failures)
	}
}

func TestRecoverFatalOnlyOurs(t *testing.T) {
	s := &Store{}
	run := func(v any) (err error) {
		defer s.recoverFatal(&err)
		panic(v)
	}
	err := run(fatalPanic{err: errors.New("boom")})
	if !errors.Is(err, ErrStoreFailed) || !strings.Contains(err.Error(), "boom") {
		t.Errorf("recovered fatal = %v, want ErrStoreFailed with the cause", err)
	}
	defer func() {
		if r := recover(); r != "other" {
			t.Errorf("recovered %v, want the foreign panic to propagate", r)
		}
	}()
	_ = run("other")
	t.Error("a foreign panic was swallowed")
}

// TestPebblePanicFailsStore: a panic raised inside Pebble (here its
// use-after-close panic, standing in for the panic of a commit that finds
// its log writer failed) fails the store for good instead of escaping into
// the caller's actor, whose supervisor would restart it against a Pebble
// that may hold its commit mutex forever. Later calls are refused without
// entering Pebble, and Close returns without calling into it.
func TestPebblePanicFailsStore(t *testing.T) {
	var fatals fatalRecorder
	s := openStore(t, vfs.NewMem(), Options{OnFatal: fatals.onFatal})
	rec := testRecord(1, "a")
	if err := s.CreateJob(rec, createdTransition(), rec.Spec.Table); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Close(); err != nil { // Pebble now panics on any use
		t.Fatal(err)
	}
	_, err := s.LoadJob(1)
	if !errors.Is(err, ErrStoreFailed) || !strings.Contains(err.Error(), "pebble panicked") {
		t.Fatalf("LoadJob on a panicking Pebble = %v, want ErrStoreFailed naming the panic", err)
	}
	if fatals.count() != 1 {
		t.Errorf("OnFatal called %d times, want 1", fatals.count())
	}
	if _, err := s.JobRecords(); !errors.Is(err, ErrStoreFailed) {
		t.Errorf("JobRecords after the panic = %v, want ErrStoreFailed", err)
	}
	if fatals.count() != 1 {
		t.Errorf("OnFatal called %d times after a second call, want 1", fatals.count())
	}
	if err := s.Close(); !errors.Is(err, ErrStoreFailed) {
		t.Errorf("Close = %v, want ErrStoreFailed", err)
	}
}

// TestPanickedIn reads the frame that raised a panic from a stack taken
// where it is recovered.
func TestPanickedIn(t *testing.T) {
	origin := func(f func()) (in, runtime bool) {
		defer func() {
			recover()
			st := debug.Stack()
			in = panickedIn(st, "github.com/loadnode/loadnode/persistence.TestPanickedIn")
			runtime = panickedIn(st, "runtime.")
		}()
		f()
		return false, false
	}
	if in, _ := origin(func() { panic("here") }); !in {
		t.Error("an explicit panic in the test was not placed in it")
	}
	var m map[string]int
	if in, rt := origin(func() { m["x"] = 1 }); !in || rt {
		t.Errorf("a nil-map panic placed in the test %v, in the runtime %v; want the test's frame", in, rt)
	}
	n := -1
	if in, _ := origin(func() { _ = strings.Repeat("x", n) }); in {
		t.Error("a panic inside the strings package was placed in the test")
	}
}

func TestFatalfNeverReturns(t *testing.T) {
	var fatals fatalRecorder
	s := &Store{log: discardLogger(), onFatal: fatals.onFatal}
	l := pebbleLogger{s}
	cause := errors.New("disk on fire")
	for range 2 {
		func() {
			defer func() {
				if _, ok := recover().(fatalPanic); !ok {
					t.Error("Fatalf did not panic with fatalPanic")
				}
			}()
			l.Fatalf("pebble: fatal commit error: %v", cause)
			t.Error("Fatalf returned")
		}()
	}
	if fatals.count() != 1 {
		t.Errorf("OnFatal called %d times, want once", fatals.count())
	}
	if err := s.Failed(); !errors.Is(err, ErrStoreFailed) || !errors.Is(err, cause) {
		t.Errorf("Failed() = %v, want ErrStoreFailed wrapping the cause", err)
	}
}

func TestClosed(t *testing.T) {
	s, err := Open(Options{Dir: testDir, FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
	if _, err := s.JobRecords(); !errors.Is(err, ErrClosed) {
		t.Errorf("JobRecords after Close = %v, want ErrClosed", err)
	}
	if err := s.CreateJob(testRecord(1, "a"), createdTransition(), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("CreateJob after Close = %v, want ErrClosed", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		ok   bool
	}{
		{"ok", Options{Dir: "d"}, true},
		{"no dir", Options{}, false},
		{"negative error rows", Options{Dir: "d", MaxErrorRowsKept: -1}, false},
	}
	for _, tt := range tests {
		if err := tt.opts.Validate(); (err == nil) != tt.ok {
			t.Errorf("%s: Validate = %v", tt.name, err)
		}
	}
}

// otherSchema returns t with its first column's type changed.
func otherSchema(t *api.TableSpec) *api.TableSpec {
	o := proto.CloneOf(t)
	if o.Columns[0].Type == api.ColumnType_STRING {
		o.Columns[0].Type = api.ColumnType_INT64
	} else {
		o.Columns[0].Type = api.ColumnType_STRING
	}
	return o
}

// AppendTransitions writes all or nothing: one stale seq refuses the batch.
func TestAppendTransitions(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs, Options{})
	a, b := mustCreate(t, s, 1, "a"), mustCreate(t, s, 2, "b")
	tr := func(seq uint64) *api.Transition {
		return &api.Transition{Seq: seq, From: api.JobState_RUNNING, To: api.JobState_NEED_SCHEDULE, Reason: api.Reason_RECOVERED}
	}
	if err := s.AppendTransitions([]JobTransition{{JobID: a.Id, T: tr(2)}, {JobID: b.Id, T: tr(3)}}); err == nil {
		t.Fatal("a stale seq was accepted")
	}
	for _, id := range []uint64{a.Id, b.Id} {
		if last, _ := s.LastTransition(id); last.Seq != 1 {
			t.Fatalf("job %d: refused batch wrote seq %d", id, last.Seq)
		}
	}
	if err := s.AppendTransitions([]JobTransition{{JobID: a.Id, T: tr(2)}, {JobID: b.Id, T: tr(2)}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint64{a.Id, b.Id} {
		if last, _ := s.LastTransition(id); last.Seq != 2 || last.Reason != api.Reason_RECOVERED {
			t.Fatalf("job %d: last %v", id, last)
		}
	}
	// After a restart the heads are read back: from the journal (cold
	// cache), or from what LoadAllJobs seeded. A stale seq is refused in
	// both cases.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, fs, Options{})
	if err := s.AppendTransitions([]JobTransition{{JobID: a.Id, T: tr(2)}}); err == nil {
		t.Fatal("cold cache: a stale seq was accepted")
	}
	if err := s.AppendTransitions([]JobTransition{{JobID: a.Id, T: tr(3)}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, fs, Options{})
	if err := s.LoadAllJobs(func(*JobState) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendTransitions([]JobTransition{{JobID: a.Id, T: tr(3)}, {JobID: b.Id, T: tr(3)}}); err == nil {
		t.Fatal("seeded heads: a stale seq was accepted")
	}
	if err := s.AppendTransitions([]JobTransition{{JobID: a.Id, T: tr(4)}, {JobID: b.Id, T: tr(3)}}); err != nil {
		t.Fatal(err)
	}
	if last, _ := s.LastTransition(a.Id); last.Seq != 4 {
		t.Fatalf("job a: last seq %d, want 4", last.Seq)
	}
}

// LoadAllJobs returns, for every job, exactly what LoadJob does.
func TestLoadAllJobs(t *testing.T) {
	s := openStore(t, vfs.NewMem(), Options{MaxErrorRowsKept: 5})
	for id := uint64(1); id <= 4; id++ {
		mustCreate(t, s, id, fmt.Sprintf("j%d", id))
	}
	if err := s.InitStarts(2, map[int32]int64{0: 0, 3: 7}, map[int32][]byte{3: []byte("ck")}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendTransition(2, &api.Transition{Seq: 2, To: api.JobState_RUNNING, Reason: api.Reason_SCHEDULED}); err != nil {
		t.Fatal(err)
	}
	rows := []*api.ErrorRow{{Reason: "a"}, {Reason: "b"}, {Reason: "c"}}
	if err := s.CommitBatch(&Commit{JobID: 2, Ranges: []Range{{Partition: 0, From: 0, To: 9}}, Stats: &api.JobStats{LoadedRows: 6}, ErrorRows: rows}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendTransition(3, &api.Transition{Seq: 2, To: api.JobState_PAUSED, Reason: api.Reason_USER_PAUSE}); err != nil {
		t.Fatal(err)
	}
	// Job 4 has a long journal (LoadAllJobs jumps to its end) and progress
	// and stats after it.
	for seq := uint64(2); seq <= 3*journalWalk+5; seq++ {
		to := api.JobState_RUNNING
		if seq%2 == 1 {
			to = api.JobState_PAUSED
		}
		if err := s.AppendTransition(4, &api.Transition{Seq: seq, To: to, Reason: api.Reason_USER_ALTER, Message: fmt.Sprint(seq)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.InitStarts(4, map[int32]int64{1: 3}, nil, nil); err != nil {
		t.Fatal(err)
	}
	var got []*JobState
	if err := s.LoadAllJobs(func(st *JobState) error { got = append(got, st); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("%d jobs loaded, want 4", len(got))
	}
	if last := got[3].Last; last.GetSeq() != 3*journalWalk+5 {
		t.Fatalf("job 4: head seq %d, want %d", last.GetSeq(), 3*journalWalk+5)
	}
	for _, st := range got {
		want, err := s.LoadJob(st.Record.Id)
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(st.Record, want.Record) || !proto.Equal(st.Last, want.Last) || !proto.Equal(st.Stats, want.Stats) ||
			fmt.Sprint(st.Progress) != fmt.Sprint(want.Progress) || fmt.Sprint(st.Checkpoints) != fmt.Sprint(want.Checkpoints) {
			t.Fatalf("job %d: LoadAllJobs %v, LoadJob %v", st.Record.Id, st, want)
		}
	}
	// Split into ranges read in parallel, the scan returns the same, in
	// job id order.
	defer func(n uint64) { minRangeJobs = n }(minRangeJobs)
	minRangeJobs = 1
	if b, err := jobRanges(s.db, 8); err != nil || len(b) != 5 {
		t.Fatalf("4 jobs in 8 parts: %d bounds (%v), want 5", len(b), err)
	}
	var split []*JobState
	if err := s.LoadAllJobs(func(st *JobState) error { split = append(split, st); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(split) != len(got) {
		t.Fatalf("split scan: %d jobs, want %d", len(split), len(got))
	}
	for i, st := range split {
		if !proto.Equal(st.Record, got[i].Record) || !proto.Equal(st.Last, got[i].Last) || fmt.Sprint(st.Progress) != fmt.Sprint(got[i].Progress) {
			t.Fatalf("split scan: job %d is %v, want %v", i, st, got[i])
		}
	}
}

// jobRanges splits the ids between the first job and the last one.
func TestJobRanges(t *testing.T) {
	s := openStore(t, vfs.NewMem(), Options{})
	if b, err := jobRanges(s.db, 4); err != nil || len(b) != 2 {
		t.Fatalf("no jobs: %d bounds (%v), want 2", len(b), err)
	}
	for _, id := range []uint64{3, 5000, 9000, 20000} {
		mustCreate(t, s, id, fmt.Sprintf("j%d", id))
	}
	b, err := jobRanges(s.db, 4)
	if err != nil {
		t.Fatal(err)
	}
	// 19,998 ids in at most 4 ranges of at least minRangeJobs ids each.
	if len(b) != 5 || !bytes.Equal(b[1], jobKeyPrefix(3+4999)) || !bytes.Equal(b[4], prefixEnd([]byte(jobPrefix))) {
		t.Fatalf("bounds %q", b)
	}
	if b, _ := jobRanges(s.db, 1); len(b) != 2 {
		t.Fatalf("one part: %d bounds, want 2", len(b))
	}
}

// ShowData returns the newest transitions and error rows, oldest first,
// exactly as Journal and ErrorRows do.
func TestShowData(t *testing.T) {
	s := openStore(t, vfs.NewMem(), Options{MaxErrorRowsKept: 50})
	mustCreate(t, s, 1, "a")
	mustCreate(t, s, 2, "b")
	for seq := uint64(2); seq <= 9; seq++ {
		if err := s.AppendTransition(1, &api.Transition{Seq: seq, To: api.JobState_PAUSED}); err != nil {
			t.Fatal(err)
		}
	}
	var rows []*api.ErrorRow
	for i := range 30 {
		rows = append(rows, &api.ErrorRow{Reason: fmt.Sprint(i)})
	}
	if err := s.InitProgress(1, map[int32]int64{0: 0}); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitBatch(&Commit{JobID: 1, Ranges: []Range{{Partition: 0, From: 0, To: 30}}, ErrorRows: rows}); err != nil {
		t.Fatal(err)
	}
	hist, errs, err := s.ShowData(1, 5, 20)
	if err != nil {
		t.Fatal(err)
	}
	wantHist, _ := s.Journal(1)
	wantErrs, _ := s.ErrorRows(1, 20)
	if len(hist) != 5 || hist[0].Seq != 5 || hist[4].Seq != 9 || !proto.Equal(hist[4], wantHist[8]) {
		t.Fatalf("history %v", hist)
	}
	if len(errs) != 20 || !proto.Equal(errs[0], wantErrs[0]) || !proto.Equal(errs[19], wantErrs[19]) {
		t.Fatalf("error rows %v, want %v", errs, wantErrs)
	}
	if hist, errs, err := s.ShowData(2, 5, 20); err != nil || len(hist) != 1 || len(errs) != 0 {
		t.Fatalf("job 2: %v %v %v", hist, errs, err)
	}
}

// The journal head the store caches after its own writes follows alters
// and deletes: a stale seq is still refused, a deleted job is unknown.
func TestJournalHeadFollowsAlterAndDelete(t *testing.T) {
	s := openStore(t, vfs.NewMem(), Options{})
	rec := mustCreate(t, s, 1, "a")
	if err := s.AppendTransition(1, &api.Transition{Seq: 2, To: api.JobState_PAUSED}); err != nil {
		t.Fatal(err)
	}
	if err := s.AlterJob(rec, nil, &api.Transition{Seq: 3, From: api.JobState_PAUSED, To: api.JobState_PAUSED, Reason: api.Reason_USER_ALTER}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendTransition(1, &api.Transition{Seq: 3}); err == nil {
		t.Fatal("seq 3 accepted after an alter wrote seq 3")
	}
	if err := s.AppendTransition(1, &api.Transition{Seq: 4}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteJob(1, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendTransition(1, &api.Transition{Seq: 5}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("append to a deleted job: %v", err)
	}
}

// tableCompressionStats is every table's block compression statistics
// (Pebble's pebble.compression_stats property), one line each.
func tableCompressionStats(t *testing.T, s *Store) string {
	t.Helper()
	tables, err := s.db.SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, level := range tables {
		for _, ti := range level {
			if ti.Properties != nil {
				fmt.Fprintf(&b, "%s: %s\n", ti.FileNum, ti.Properties.CompressionStats)
			}
		}
	}
	return b.String()
}

// Tables are written with MinLZ; a store whose tables were written with
// Snappy (before the change) reads them back and keeps working.
func TestCompressionMinLZReadsSnappy(t *testing.T) {
	mem := vfs.NewMem()
	snappy := func(o *pebble.Options) {
		for i := range o.Levels {
			o.Levels[i].Compression = func() *sstable.CompressionProfile { return sstable.SnappyCompression }
		}
	}
	s := openStore(t, mem, Options{tune: snappy})
	rec := mustCreate(t, s, 1, "j")
	if err := s.InitProgress(rec.Id, map[int32]int64{0: 0}); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitBatch(commitOf(rec, nil, nil, Range{Partition: 0, From: 0, To: 500})); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Flush(); err != nil {
		t.Fatal(err)
	}
	if m := s.db.Metrics(); m.Table.CompressedCountSnappy == 0 {
		t.Fatalf("no Snappy table written: %s", m)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openStore(t, mem, Options{})
	if err := s.CommitBatch(commitOf(rec, nil, nil, Range{Partition: 0, From: 500, To: 1000})); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Flush(); err != nil {
		t.Fatal(err)
	}
	// The store's profile (tableCompression) is not one of Pebble's named
	// profiles: the tables' own block statistics tell the codec.
	if st := tableCompressionStats(t, s); !strings.Contains(st, "MinLZ") {
		t.Fatalf("no MinLZ block written: %s", st)
	}
	want := rangeRows(rec.Id, Range{Partition: 0, From: 0, To: 1000})
	check := func(when string) {
		t.Helper()
		got := scanAll(t, s, rec.Spec.Table.Name)
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows, want %d", when, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i].Key, want[i].Key) || !bytes.Equal(got[i].Value, want[i].Value) {
				t.Fatalf("%s: row %d is %q=%q, want %q=%q", when, i, got[i].Key, got[i].Value, want[i].Key, want[i].Value)
			}
		}
	}
	check("after the reopen")
	if err := s.db.Compact(context.Background(), []byte{0}, []byte{0xff}, false); err != nil {
		t.Fatal(err)
	}
	check("after a compaction of both")
}
