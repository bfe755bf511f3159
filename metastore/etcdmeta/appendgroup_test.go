package etcdmeta

import (
	"errors"
	"sync"
	"testing"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/internal/etcdtest"
	"github.com/loadnode/loadnode/metastore"
)

func revision(t *testing.T, s *Store) int64 {
	t.Helper()
	r, err := s.c.Get(t.Context(), s.keys.Prefix+"none")
	if err != nil {
		t.Fatal(err)
	}
	return r.Header.Revision
}

// TestAppendGroup: a group of appends of different jobs is one etcd
// transaction; a group with an entry that does not follow its head (or of
// a job that does not exist) writes the others and refuses that one; the
// concurrent calls of many jobs each get their own answer.
func TestAppendGroup(t *testing.T) {
	srv := etcdtest.Start(t)
	c := newClient(t, srv)
	t.Cleanup(func() { c.Close() })
	s, err := New(c, Options{Prefix: "/group/"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	var jobs []metastore.NewJob
	for i := range n {
		jobs = append(jobs, newJob(uint64(i+1), "g"+string(rune('a'+i%26))+string(rune('a'+i/26))))
	}
	for i, err := range s.CreateJobs(jobs) {
		if err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
	}
	tr := func(seq uint64) *api.Transition {
		return &api.Transition{Seq: seq, To: api.JobState_RUNNING, Reason: api.Reason_SCHEDULED}
	}
	call := func(id, seq uint64) *appendCall {
		return &appendCall{jt: metastore.JobTransition{JobID: id, T: tr(seq)}, done: make(chan error, 1)}
	}

	// Jobs 1..10, seq 2: one transaction.
	var batch []*appendCall
	for id := uint64(1); id <= 10; id++ {
		batch = append(batch, call(id, 2))
	}
	rev := revision(t, s)
	s.writeAppendBatch(batch)
	for _, c := range batch {
		if err := <-c.done; err != nil {
			t.Fatalf("job %d: %v", c.jt.JobID, err)
		}
	}
	if got := revision(t, s); got != rev+1 {
		t.Errorf("10 grouped appends took %d revisions, want 1", got-rev)
	}

	// Jobs 11..20 seq 2, job 1 seq 2 again (refused), job 999 (no job).
	batch = batch[:0]
	for id := uint64(11); id <= 20; id++ {
		batch = append(batch, call(id, 2))
	}
	batch = append(batch, call(1, 2), call(999, 2))
	s.writeAppendBatch(batch)
	for _, c := range batch {
		err := <-c.done
		switch c.jt.JobID {
		case 1:
			if err == nil {
				t.Error("job 1: seq 2 appended twice")
			}
		case 999:
			if !errors.Is(err, metastore.ErrNotFound) {
				t.Errorf("job 999: %v, want ErrNotFound", err)
			}
		default:
			if err != nil {
				t.Errorf("job %d: %v", c.jt.JobID, err)
			}
		}
	}

	// Concurrent calls: jobs 21..40 seq 2, and jobs 1..20 seq 3 (twice
	// for job 1, with seq 3 and 4 in order: a job's later call goes in a
	// later group).
	var wg sync.WaitGroup
	errs := make(map[uint64]error)
	var mu sync.Mutex
	for id := uint64(1); id <= n; id++ {
		wg.Go(func() {
			seq := uint64(2)
			if id <= 20 {
				seq = 3
			}
			err := s.AppendTransition(id, tr(seq))
			if id == 1 && err == nil {
				err = s.AppendTransition(1, tr(4))
			}
			mu.Lock()
			errs[id] = err
			mu.Unlock()
		})
	}
	wg.Wait()
	for id, err := range errs {
		if err != nil {
			t.Errorf("job %d: %v", id, err)
		}
	}
	for id := uint64(1); id <= n; id++ {
		want := uint64(2)
		if id <= 20 {
			want = 3
		}
		if id == 1 {
			want = 4
		}
		st, err := s.LoadJob(id)
		if err != nil || st.Last.GetSeq() != want {
			t.Errorf("job %d: head %v, %v; want seq %d", id, st.Last, err, want)
		}
		if j, err := s.Journal(id); err != nil || len(j) != int(want) {
			t.Errorf("job %d: journal %d entries, %v; want %d", id, len(j), err, want)
		}
	}
	if !s.appends.Idle() {
		t.Error("after the calls: a group is still queued or being written")
	}
}
