package actors

import (
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore"
	"github.com/loadnode/loadnode/persistence"
)

// TestPacedAdmissionAdmitsEveryJob: a recovery of more jobs than two
// admission windows (admitWindow) respawns them all in NEED_SCHEDULE, and
// the paced admission gets every one of them RUNNING (none is left
// waiting for a window), while the manager answers listings meanwhile.
func TestPacedAdmissionAdmitsEveryJob(t *testing.T) {
	fs := vfs.NewMem()
	n := 2*admitWindow + 100
	st := storeWithJobs(t, fs, "p", n)
	// Half of them were RUNNING when the node stopped.
	var running []metastore.JobTransition
	for id := uint64(1); id <= uint64(n); id += 2 {
		running = append(running, metastore.JobTransition{JobID: id, T: &api.Transition{Seq: 2, From: api.JobState_NEED_SCHEDULE, To: api.JobState_RUNNING, Reason: api.Reason_SCHEDULED}})
	}
	if err := st.Meta().AppendTransitions(running); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	h := newHarnessWith(t, fs, &quietSource{parts: []int32{0}}, Settings{})
	poll(t, 90*time.Second, func() (bool, string) {
		res := h.ask(h.mgr, &api.ListJobsRequest{Limit: api.MaxListPage}).(*api.ListJobsResponse)
		counts := map[api.JobState]int{}
		for _, s := range res.GetJobs() {
			counts[s.GetState()]++
		}
		if len(res.GetJobs()) != n {
			t.Fatalf("listing has %d jobs, want %d", len(res.GetJobs()), n)
		}
		return counts[api.JobState_RUNNING] == n, fmt.Sprintf("%v of %d jobs running (paced admission left jobs waiting)", counts, n)
	})
}

// storeWithJobs opens a store on fs holding n jobs named prefix1 ..
// prefixN (ids 1..n), NEED_SCHEDULE since their creation; the caller
// closes it before a harness opens it.
func storeWithJobs(t *testing.T, fs vfs.FS, prefix string, n int) *persistence.Store {
	t.Helper()
	st, err := persistence.Open(persistence.Options{Dir: "db", FS: fs, OnFatal: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	jobs := make([]persistence.NewJob, n)
	for i := range jobs {
		spec := testSpec(fmt.Sprintf("%s%d", prefix, i+1))
		jobs[i] = persistence.NewJob{Record: &api.JobRecord{Id: uint64(i + 1), Name: spec.Name, Spec: spec},
			First: &api.Transition{Seq: 1, To: api.JobState_NEED_SCHEDULE, Reason: api.Reason_CREATED}, NewTable: spec.Table}
	}
	for i, err := range st.CreateJobs(jobs) {
		if err != nil {
			t.Fatalf("job %d: %v", i+1, err)
		}
	}
	return st
}
