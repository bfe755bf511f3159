package persistence

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
)

// syncCounter counts the fsyncs of the files it opens.
type syncCounter struct {
	vfs.FS
	syncs atomic.Int64
}

func (fs *syncCounter) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &syncCounted{File: f, n: &fs.syncs}, nil
}

func (fs *syncCounter) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return fs.wrap(fs.FS.Create(name, c))
}

func (fs *syncCounter) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return fs.wrap(fs.FS.ReuseForWrite(oldname, newname, c))
}

type syncCounted struct {
	vfs.File
	n *atomic.Int64
}

func (f *syncCounted) Sync() error     { f.n.Add(1); return f.File.Sync() }
func (f *syncCounted) SyncData() error { f.n.Add(1); return f.File.SyncData() }

func firstRun(seq uint64) *api.Transition {
	return &api.Transition{Seq: seq, From: api.JobState_NEED_SCHEDULE, To: api.JobState_RUNNING, Reason: api.Reason_SCHEDULED}
}

// assertStarted checks, on a store opened after power loss, that job id
// has its initial positions and RUNNING.
func assertStarted(t *testing.T, s *Store, id uint64, pos int64) {
	t.Helper()
	st, err := s.LoadJob(id)
	if err != nil {
		t.Fatal(err)
	}
	if st.Progress[0] != pos || st.Last.GetTo() != api.JobState_RUNNING {
		t.Fatalf("after power loss: progress %v, last %v; want partition 0 at %d and RUNNING", st.Progress, st.Last, pos)
	}
}

// TestInitStartsSharesSync: a first schedule applied before a create's
// synced commit returns with that commit, with no fsync of its own, and
// is durable when it returns (a power loss then keeps it).
func TestInitStartsSharesSync(t *testing.T) {
	mem := vfs.NewCrashableMem()
	fs := &syncCounter{FS: mem}
	s := openStore(t, fs, Options{})
	s.shareWait = time.Hour // only a covering commit may end the wait
	id := mustCreate(t, s, 1, "first").Id
	applied := make(chan struct{})
	s.afterSharedApply = func() { close(applied) }
	done := make(chan error, 1)
	before := fs.syncs.Load()
	go func() { done <- s.InitStarts(id, map[int32]int64{0: 7}, nil, firstRun(2)) }()
	<-applied
	mustCreate(t, s, 2, "second") // its fsync covers the first schedule
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := fs.syncs.Load() - before; n != 1 {
		t.Errorf("a create and a first schedule took %d fsyncs, want 1", n)
	}
	assertStarted(t, crashReopen(t, mem, vfs.CrashCloneCfg{}), id, 7)
}

// TestInitStartsSyncsAlone: with no other commit, InitStarts syncs itself
// after shareWait and is durable when it returns.
func TestInitStartsSyncsAlone(t *testing.T) {
	mem := vfs.NewCrashableMem()
	s := openStore(t, mem, Options{})
	s.shareWait = time.Millisecond
	id := mustCreate(t, s, 1, "alone").Id
	if err := s.InitStarts(id, map[int32]int64{0: 3}, nil, firstRun(2)); err != nil {
		t.Fatal(err)
	}
	assertStarted(t, crashReopen(t, mem, vfs.CrashCloneCfg{}), id, 3)
}

// TestSyncTickets: only a synced commit that entered after the mark was
// taken covers a write; one that entered before it does not, even if it
// returns later.
func TestSyncTickets(t *testing.T) {
	var st syncTickets
	early := st.enter()
	mark := st.after()
	if ok, _ := st.covered(mark); ok {
		t.Fatal("covered with no commit")
	}
	late := st.enter()
	_, changed := st.covered(mark)
	st.finished(early)
	if ok, _ := st.covered(mark); ok {
		t.Fatal("a commit that entered before the mark covered the write")
	}
	<-changed // early's return was announced
	st.finished(late)
	if ok, _ := st.covered(mark); !ok {
		t.Fatal("a commit that entered after the mark did not cover the write")
	}
}

// TestEmptyCommitCoversNothing: Pebble commits an empty batch without
// touching the WAL, so an empty "synced" commit must take no ticket (it
// would end a shared-sync wait it did not make durable); a batch with a
// record does.
func TestEmptyCommitCoversNothing(t *testing.T) {
	s := openStore(t, vfs.NewMem(), Options{})
	mark := s.syncs.after()
	if err := s.commit(s.db.NewBatch(), "empty"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.syncs.covered(mark); ok || s.syncs.after() != mark {
		t.Fatal("an empty commit was counted as a synced commit")
	}
	b := s.db.NewBatch()
	if err := b.LogData([]byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.commit(b, "one record"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.syncs.covered(mark); !ok {
		t.Fatal("a synced commit with a record did not cover the writes before it")
	}
}
