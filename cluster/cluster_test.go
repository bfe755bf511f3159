package cluster

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/loadnode/loadnode/internal/etcdtest"
	"github.com/loadnode/loadnode/metastore/etcdmeta"
)

func TestPlan(t *testing.T) {
	ids := func(n int) []uint64 {
		var out []uint64
		for i := 1; i <= n; i++ {
			out = append(out, uint64(i))
		}
		return out
	}
	count := func(cur map[uint64]string, set map[uint64]string, del []uint64) map[string]int {
		after := map[uint64]string{}
		maps.Copy(after, cur)
		maps.Copy(after, set)
		for _, id := range del {
			delete(after, id)
		}
		c := map[string]int{}
		for _, o := range after {
			c[o]++
		}
		return c
	}
	t.Run("fresh jobs spread evenly", func(t *testing.T) {
		set, del := Plan(ids(12), []string{"a", "b", "c"}, map[uint64]string{}, 0)
		if len(del) != 0 || len(set) != 12 {
			t.Fatalf("set %d, del %d", len(set), len(del))
		}
		if c := count(nil, set, nil); c["a"] != 4 || c["b"] != 4 || c["c"] != 4 {
			t.Errorf("counts %v, want 4 each", c)
		}
	})
	t.Run("dead member's jobs move, others stay", func(t *testing.T) {
		cur := map[uint64]string{}
		for i, id := range ids(12) {
			cur[id] = []string{"a", "b", "c"}[i%3]
		}
		set, _ := Plan(ids(12), []string{"a", "b"}, cur, 0)
		for id, o := range set {
			if cur[id] != "c" {
				t.Errorf("job %d of live %s moved to %s", id, cur[id], o)
			}
		}
		if len(set) != 4 {
			t.Errorf("moved %d, want c's 4", len(set))
		}
		if c := count(cur, set, nil); c["a"] != 6 || c["b"] != 6 {
			t.Errorf("counts %v", c)
		}
	})
	t.Run("a joining member takes only the excess", func(t *testing.T) {
		cur := map[uint64]string{}
		for i, id := range ids(12) {
			cur[id] = []string{"a", "b"}[i%2]
		}
		set, _ := Plan(ids(12), []string{"a", "b", "c"}, cur, 0)
		if len(set) != 4 {
			t.Errorf("moved %d jobs to a joining member, want 4 (bounded movement)", len(set))
		}
		for _, o := range set {
			if o != "c" {
				t.Errorf("a job moved to %s, not to the new member", o)
			}
		}
	})
	t.Run("cap leaves the rest unassigned", func(t *testing.T) {
		set, _ := Plan(ids(10), []string{"a", "b"}, map[uint64]string{}, 3)
		if c := count(nil, set, nil); len(set) != 6 || c["a"] != 3 || c["b"] != 3 {
			t.Errorf("set %d %v, want 3 each and 4 unassigned", len(set), c)
		}
	})
	t.Run("gone jobs lose their assignment", func(t *testing.T) {
		_, del := Plan([]uint64{1}, []string{"a"}, map[uint64]string{1: "a", 2: "a", 3: "b"}, 0)
		if !slices.Equal(del, []uint64{2, 3}) {
			t.Errorf("del %v, want [2 3]", del)
		}
	})
}

// recorder is a Handler that keeps what it owns.
type recorder struct {
	mu    sync.Mutex
	owned map[uint64]uint64
	lost  int
}

func (r *recorder) Own(jobs []Assignment) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range jobs {
		r.owned[a.ID] = a.Epoch
	}
}
func (r *recorder) Release(id uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.owned, id)
}
func (r *recorder) ReleaseAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.owned)
	r.lost++
}
func (r *recorder) Changed(JobChange) {}
func (r *recorder) Resync()           {}
func (r *recorder) snapshot() map[uint64]uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.owned)
}

type testCluster struct {
	t       *testing.T
	srv     *etcdtest.Server
	c       *clientv3.Client
	members map[string]*Member
	recs    map[string]*recorder
}

func newTestCluster(t *testing.T, srv *etcdtest.Server) *testCluster {
	return &testCluster{t: t, srv: srv, c: srv.Client(t), members: map[string]*Member{}, recs: map[string]*recorder{}}
}

// config is the Config of test member name: node id "node-"+name, address
// 127.0.0.1:1, a 2 s lease, no credential.
func (tc *testCluster) config(name string) Config {
	return Config{Client: tc.c, Prefix: "/lc/", Name: name, NodeID: "node-" + name, Addr: "127.0.0.1:1",
		Lease: 2 * time.Second, RequestTimeout: 5 * time.Second}
}

func (tc *testCluster) start(name string) {
	tc.startConfig(tc.config(name))
}

// startConfig starts a member of cfg and fails the test if it does not
// join within 60 s.
func (tc *testCluster) startConfig(cfg Config) {
	tc.t.Helper()
	m, err := New(cfg)
	if err != nil {
		tc.t.Fatal(err)
	}
	r := &recorder{owned: map[uint64]uint64{}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := m.Start(ctx, r); err != nil {
		tc.t.Fatalf("member %s: start: %v", cfg.Name, err)
	}
	tc.members[cfg.Name], tc.recs[cfg.Name] = m, r
	tc.t.Cleanup(m.Stop)
}

// await polls until every job in 1..n is owned by exactly one of the live
// members, each with at most max jobs, and returns the owners.
func (tc *testCluster) await(n int, live []string, max int, within time.Duration) map[uint64]string {
	tc.t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last string
	for ; time.Now().Before(deadline); <-tick.C {
		owners := map[uint64]string{}
		ok := true
		counts := map[string]int{}
		for _, name := range live {
			for id := range tc.recs[name].snapshot() {
				if o, dup := owners[id]; dup {
					ok = false
					last = fmt.Sprintf("job %d owned by %s and %s", id, o, name)
				}
				owners[id] = name
				counts[name]++
			}
		}
		for _, c := range counts {
			ok = ok && c <= max
		}
		if ok && len(owners) == n {
			return owners
		}
		if ok {
			last = fmt.Sprintf("%d of %d jobs owned, counts %v", len(owners), n, counts)
		}
	}
	tc.t.Fatalf("assignments did not settle within %v: %s", within, last)
	return nil
}

func TestMembersOwnAndMove(t *testing.T) {
	srv := etcdtest.Start(t)
	tc := newTestCluster(t, srv)
	ctx := context.Background()
	const jobs = 12
	for i := 1; i <= jobs; i++ {
		if _, err := tc.c.Put(ctx, "/lc/rec/"+etcdmeta.ID(uint64(i)), "x"); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"a", "b", "c"} {
		tc.start(n)
	}
	before := tc.await(jobs, []string{"a", "b", "c"}, 4, 30*time.Second)
	epochs := map[uint64]uint64{}
	for id, o := range before {
		epochs[id] = tc.recs[o].snapshot()[id]
	}

	// c leaves cleanly (its lease is revoked): its jobs move, no others.
	t0 := time.Now()
	tc.members["c"].Stop()
	after := tc.await(jobs, []string{"a", "b"}, 6, 30*time.Second)
	t.Logf("a stopped member's jobs moved in %v", time.Since(t0).Round(time.Millisecond))
	for id, o := range after {
		if before[id] != "c" && before[id] != o {
			t.Errorf("job %d of live %s moved to %s", id, before[id], o)
		}
		if before[id] == "c" {
			if e := tc.recs[o].snapshot()[id]; e <= epochs[id] {
				t.Errorf("job %d: epoch %d after the move, %d before: it must grow", id, e, epochs[id])
			}
		}
	}

	// b's lease is revoked behind its back (as when it was frozen past its
	// TTL): it notices, releases everything, rejoins and takes work again.
	lost := tc.recs["b"].lost
	tc.members["b"].mu.Lock()
	lease := tc.members["b"].mu.session.Lease()
	tc.members["b"].mu.Unlock()
	if _, err := tc.c.Revoke(ctx, lease); err != nil {
		t.Fatal(err)
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(30 * time.Second); ; <-tick.C {
		tc.recs["b"].mu.Lock()
		n := tc.recs["b"].lost
		tc.recs["b"].mu.Unlock()
		if n > lost {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("b's lease was revoked but b never released its jobs")
		}
	}
	t1 := time.Now()
	rejoined := tc.await(jobs, []string{"a", "b"}, 6, 30*time.Second)
	t.Logf("after a lost lease, the cluster settled again in %v", time.Since(t1).Round(time.Millisecond))
	if n := len(tc.recs["b"].snapshot()); n == 0 {
		t.Errorf("b rejoined but owns nothing (%v)", rejoined)
	}

	// etcd restarts: the members carry on and the assignment settles.
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	tc.start("c")
	tc.await(jobs, []string{"a", "b", "c"}, 4, 60*time.Second)
}
