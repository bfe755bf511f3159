package etcdmeta

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/internal/etcdtest"
	"github.com/loadnode/loadnode/metastore"
	"github.com/loadnode/loadnode/metastore/metastoretest"
)

func newClient(t *testing.T, srv *etcdtest.Server) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: srv.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return c
}

// TestMetaConformance runs the suite on one etcd server; each subtest
// gets its own prefix (fresh storage). Every second reopen restarts etcd
// itself (SIGKILL, same data): acknowledged writes are quorum writes and
// must survive it.
func TestMetaConformance(t *testing.T) {
	srv := etcdtest.Start(t)
	var n, reopens atomic.Int64
	metastoretest.Run(t, metastoretest.Harness{
		Open: func(t *testing.T) (metastore.Store, func(*testing.T) metastore.Store) {
			prefix := fmt.Sprintf("/t%d/", n.Add(1))
			open := func(t *testing.T) metastore.Store {
				c := newClient(t, srv)
				t.Cleanup(func() { c.Close() })
				s, err := New(c, Options{Prefix: prefix, RequestTimeout: 20 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			cur := open(t)
			return cur, func(t *testing.T) metastore.Store {
				cur.(*Store).c.Close()
				if reopens.Add(1)%2 == 0 {
					if err := srv.Restart(); err != nil {
						t.Fatalf("restart etcd: %v", err)
					}
				}
				cur = open(t)
				return cur
			}
		},
	})
}

// TestAllocJobIDsUnique: two members (two clients) allocating at once get
// disjoint ids, all above the last id written.
func TestAllocJobIDsUnique(t *testing.T) {
	srv := etcdtest.Start(t)
	var stores []*Store
	for range 2 {
		c := newClient(t, srv)
		t.Cleanup(func() { c.Close() })
		s, err := New(c, Options{Prefix: "/alloc/"})
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	if errs := stores[0].CreateJobs([]metastore.NewJob{newJob(40, "forty")}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	seen := map[uint64]bool{}
	ch := make(chan []uint64, 2)
	for _, s := range stores {
		go func() {
			var got []uint64
			for range 50 {
				first, err := s.AllocJobIDs(3)
				if err != nil {
					t.Error(err)
					break
				}
				got = append(got, first, first+1, first+2)
			}
			ch <- got
		}()
	}
	for range 2 {
		for _, id := range <-ch {
			if seen[id] || id <= 40 {
				t.Fatalf("id %d handed out twice or not above the last id written (40)", id)
			}
			seen[id] = true
		}
	}
	if len(seen) != 300 {
		t.Errorf("%d distinct ids, want 300", len(seen))
	}
}

// TestUnavailable: with etcd down a call fails with ErrUnavailable within
// its timeout and changes nothing.
func TestUnavailable(t *testing.T) {
	srv := etcdtest.Start(t)
	c := newClient(t, srv)
	t.Cleanup(func() { c.Close() })
	s, err := New(c, Options{Prefix: "/down/", RequestTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	errs := s.CreateJobs([]metastore.NewJob{newJob(1, "a")})
	if !errors.Is(errs[0], ErrUnavailable) {
		t.Errorf("CreateJobs with etcd down = %v, want ErrUnavailable", errs[0])
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	s.opts.RequestTimeout = 20 * time.Second
	if _, err := s.LoadJob(1); !errors.Is(err, metastore.ErrNotFound) {
		t.Errorf("LoadJob after a create that failed unavailable = %v, want ErrNotFound", err)
	}
}

func newJob(id uint64, name string) metastore.NewJob {
	tbl := &api.TableSpec{Name: "t_" + name, Columns: []*api.Column{{Name: "n", Type: api.ColumnType_INT64}}}
	return metastore.NewJob{
		Record:   &api.JobRecord{Id: id, Name: name, Spec: &api.JobSpec{Name: name, Table: tbl}},
		First:    &api.Transition{Seq: 1, To: api.JobState_NEED_SCHEDULE, Reason: api.Reason_CREATED},
		NewTable: tbl,
	}
}

// TestCreateWithoutReadChecks: a store that writes its creates without
// reading first (it knows the tables and meta/last_job_id) still refuses
// a name another member took, a table another member made with another
// schema, and keeps meta/last_job_id the greatest id written, whether it
// was written padded or (an older version) not.
func TestCreateWithoutReadChecks(t *testing.T) {
	srv := etcdtest.Start(t)
	var a, b *Store
	for _, s := range []**Store{&a, &b} {
		c := newClient(t, srv)
		t.Cleanup(func() { c.Close() })
		var err error
		if *s, err = New(c, Options{Prefix: "/opt/"}); err != nil {
			t.Fatal(err)
		}
	}
	// An older version's unpadded value.
	ctx := t.Context()
	if _, err := a.c.Put(ctx, a.keys.LastJobID(), "7"); err != nil {
		t.Fatal(err)
	}
	shared := newJob(10, "x")
	if errs := a.CreateJobs([]metastore.NewJob{shared}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	if id, err := b.LastJobID(); err != nil || id != 10 {
		t.Fatalf("LastJobID after the first create = %d, %v; want 10", id, err)
	}
	// a now writes without reading; b takes a name a is about to use.
	if errs := b.CreateJobs([]metastore.NewJob{newJob(30, "taken")}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	j := newJob(20, "taken")
	j.NewTable = nil
	if errs := a.CreateJobs([]metastore.NewJob{j}); !errors.Is(errs[0], metastore.ErrNameTaken) {
		t.Errorf("create of a name another member took = %v, want ErrNameTaken", errs[0])
	}
	// A lower id written after a higher one leaves the greatest.
	j = newJob(25, "lower")
	j.Record.Spec.Table, j.NewTable = shared.NewTable, shared.NewTable
	if errs := a.CreateJobs([]metastore.NewJob{j}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	if id, err := a.LastJobID(); err != nil || id != 30 {
		t.Errorf("LastJobID = %d, %v; want 30 (the greatest written)", id, err)
	}
	// The table a knows is replaced behind its back: its compare fails and
	// the read finds the other schema.
	other := newJob(0, "x")
	other.NewTable.Columns = append(other.NewTable.Columns, &api.Column{Name: "m", Type: api.ColumnType_STRING})
	tb, err := proto.Marshal(other.NewTable)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.c.Put(ctx, b.keys.Table(other.NewTable.GetName()), string(tb)); err != nil {
		t.Fatal(err)
	}
	j = newJob(40, "schema")
	j.Record.Spec.Table, j.NewTable = shared.NewTable, shared.NewTable
	if errs := a.CreateJobs([]metastore.NewJob{j}); !errors.Is(errs[0], metastore.ErrTableExists) {
		t.Errorf("create with a table changed behind the store's back = %v, want ErrTableExists", errs[0])
	}
}

// TestTableCacheFollowsOwnWrites: Table answers from what it read last,
// but a table this store drops or makes shows at once.
func TestTableCacheFollowsOwnWrites(t *testing.T) {
	srv := etcdtest.Start(t)
	c := newClient(t, srv)
	t.Cleanup(func() { c.Close() })
	s, err := New(c, Options{Prefix: "/cache/"})
	if err != nil {
		t.Fatal(err)
	}
	j := newJob(1, "a")
	if errs := s.CreateJobs([]metastore.NewJob{j}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	name := j.NewTable.GetName()
	if got, err := s.Table(name); err != nil || !proto.Equal(got, j.NewTable) {
		t.Fatalf("Table = %v, %v; want the created table", got, err)
	}
	got, _ := s.Table(name) // from the cache: a copy, not the cached value
	got.Columns = nil
	if again, err := s.Table(name); err != nil || !proto.Equal(again, j.NewTable) {
		t.Fatalf("Table after the caller changed its answer = %v, %v", again, err)
	}
	if err := s.DropTable(name); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Table(name); !errors.Is(err, metastore.ErrNotFound) {
		t.Errorf("Table after DropTable = %v, want ErrNotFound", err)
	}
	other := proto.CloneOf(j.NewTable)
	other.Columns = append(other.Columns, &api.Column{Name: "m", Type: api.ColumnType_STRING})
	if _, err := s.CreateTable(other); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Table(name); err != nil || !proto.Equal(got, other) {
		t.Errorf("Table after CreateTable = %v, %v; want the new schema", got, err)
	}
}

// TestAppendWithoutRead: an append that writes without reading the head
// first (its compares on the journal's entries) still refuses a seq that
// does not follow the head, another writer's append of the same seq, and
// a job deleted meanwhile; each refused append writes nothing.
func TestAppendWithoutRead(t *testing.T) {
	srv := etcdtest.Start(t)
	var a, b *Store
	for _, s := range []**Store{&a, &b} {
		c := newClient(t, srv)
		t.Cleanup(func() { c.Close() })
		var err error
		if *s, err = New(c, Options{Prefix: "/app/"}); err != nil {
			t.Fatal(err)
		}
	}
	if errs := a.CreateJobs([]metastore.NewJob{newJob(1, "j")}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	tr := func(seq uint64, to api.JobState) *api.Transition {
		return &api.Transition{Seq: seq, To: to, Reason: api.Reason_CREATED}
	}
	if err := a.AppendTransition(1, tr(2, api.JobState_RUNNING)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		s    *Store
		seq  uint64
	}{{"the same seq by another writer", b, 2}, {"a gap", a, 4}, {"seq 1", a, 1}} {
		if err := c.s.AppendTransition(1, tr(c.seq, api.JobState_PAUSED)); err == nil {
			t.Errorf("append of %s: no error", c.what)
		}
	}
	if err := b.AppendTransition(1, tr(3, api.JobState_PAUSED)); err != nil {
		t.Fatalf("append of the next seq by the other store: %v", err)
	}
	st, err := a.LoadJob(1)
	if err != nil || st.Last.GetSeq() != 3 || st.Last.GetTo() != api.JobState_PAUSED {
		t.Fatalf("state = %v, %v; want head seq 3 PAUSED", st, err)
	}
	if j, err := a.Journal(1); err != nil || len(j) != 3 {
		t.Fatalf("journal = %d entries, %v; want 3", len(j), err)
	}
	if err := a.DeleteJob(1, "j"); err != nil {
		t.Fatal(err)
	}
	if err := b.AppendTransition(1, tr(4, api.JobState_RUNNING)); !errors.Is(err, metastore.ErrNotFound) {
		t.Errorf("append to a deleted job = %v, want ErrNotFound", err)
	}
	rec := newJob(1, "j").Record
	if err := b.AlterJob(rec, tr(4, api.JobState_RUNNING)); err == nil {
		t.Error("alter of a deleted job: no error")
	}
	if r, err := a.c.Get(t.Context(), a.keys.Prefix, clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil {
		t.Fatal(err)
	} else if n := r.Count; n > 2 {
		// The table and meta/last_job_id stay.
		t.Errorf("%d keys after the delete and refused appends, want <= 2", n)
	}
}
