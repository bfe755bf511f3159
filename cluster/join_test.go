package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/loadnode/loadnode/internal/etcdtest"
	"github.com/loadnode/loadnode/metastore/etcdmeta"
)

// putJobs writes n job records (ids 1..n) under the test prefix.
func putJobs(t *testing.T, c *clientv3.Client, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		if _, err := c.Put(context.Background(), "/lc/rec/"+etcdmeta.ID(uint64(i)), "x"); err != nil {
			t.Fatal(err)
		}
	}
}

// record reads members/<name>: its value and lease (ok false: absent).
func record(t *testing.T, c *clientv3.Client, name string) (memberValue, clientv3.LeaseID, bool) {
	t.Helper()
	r, err := c.Get(context.Background(), "/lc/members/"+name)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Kvs) == 0 {
		return memberValue{}, 0, false
	}
	var v memberValue
	if err := json.Unmarshal(r.Kvs[0].Value, &v); err != nil {
		t.Fatalf("members/%s = %q: %v", name, r.Kvs[0].Value, err)
	}
	return v, clientv3.LeaseID(r.Kvs[0].Lease), true
}

// staleRecord writes members/<name> as a process that died without
// revoking its lease leaves it: under a lease of ttl that nobody renews.
func staleRecord(t *testing.T, c *clientv3.Client, name string, v memberValue, ttl time.Duration) clientv3.LeaseID {
	t.Helper()
	ctx := context.Background()
	l, err := c.Grant(ctx, int64(ttl/time.Second))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	if _, err := c.Put(ctx, "/lc/members/"+name, string(b), clientv3.WithLease(l.ID)); err != nil {
		t.Fatal(err)
	}
	return l.ID
}

// sessionLease is the lease of m's current session.
func sessionLease(m *Member) clientv3.LeaseID {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.session == nil {
		return 0
	}
	return m.mu.session.Lease()
}

// pollUntil polls cond every 20 ms until it holds or d passes.
func pollUntil(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var last string
	for deadline := time.Now().Add(d); time.Now().Before(deadline); <-tick.C {
		var ok bool
		if ok, last = cond(); ok {
			return
		}
	}
	t.Fatalf("%s: not within %v (%s)", what, d, last)
}

// TestDuplicateNameRefused: a second process with the name of a live
// member (another data directory: another node id) is refused at start,
// with an error naming the name and the live holder; the original keeps
// its membership record and its jobs.
func TestDuplicateNameRefused(t *testing.T) {
	srv := etcdtest.Start(t)
	tc := newTestCluster(t, srv)
	putJobs(t, tc.c, 4)
	// A lease a loaded machine renews in time: the original must stay
	// live throughout.
	a := tc.config("a")
	a.Lease = 5 * time.Second
	tc.startConfig(a)
	tc.await(4, []string{"a"}, 4, 30*time.Second)
	lease := sessionLease(tc.members["a"])

	cfg := tc.config("a")
	cfg.NodeID, cfg.Addr = "node-dup", "127.0.0.1:2"
	dup, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err = dup.Start(ctx, &recorder{owned: map[uint64]uint64{}})
	if err == nil {
		dup.Stop()
		t.Fatal("a second member named a started while a is live")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the duplicate waited until its start was abandoned instead of being refused: %v", err)
	}
	for _, want := range []string{`"a"`, "live member", "127.0.0.1:1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	v, l, ok := record(t, tc.c, "a")
	if !ok || v.Addr != "127.0.0.1:1" || l != lease {
		t.Fatalf("after the refused duplicate, members/a = %+v lease %x (present %v); want the original's (127.0.0.1:1, lease %x)", v, l, ok, lease)
	}
	if n := len(tc.recs["a"].snapshot()); n != 4 {
		t.Errorf("the original owns %d jobs after the refused duplicate, want 4", n)
	}
	if tc.recs["a"].lost != 0 {
		t.Errorf("the original lost its session %d times", tc.recs["a"].lost)
	}
}

// TestRecordLostRejoins: a live member whose membership record disappears
// (deleted behind its back) notices, releases its jobs, registers again
// and takes work again.
func TestRecordLostRejoins(t *testing.T) {
	srv := etcdtest.Start(t)
	tc := newTestCluster(t, srv)
	putJobs(t, tc.c, 6)
	tc.start("a")
	tc.start("b")
	tc.await(6, []string{"a", "b"}, 3, 30*time.Second)
	_, before, _ := record(t, tc.c, "a")
	if _, err := tc.c.Delete(context.Background(), "/lc/members/a"); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, 30*time.Second, "a registered again", func() (bool, string) {
		v, l, ok := record(t, tc.c, "a")
		return ok && l != before && v.Addr == "127.0.0.1:1", "members/a absent or under the old lease"
	})
	tc.await(6, []string{"a", "b"}, 3, 30*time.Second)
	if n := len(tc.recs["a"].snapshot()); n == 0 {
		t.Error("a registered again but owns nothing")
	}
}

// TestOwnStaleLeaseIsRevoked: a member restarted after kill -9 finds the
// record its former process left (same name, same node id, a lease nobody
// renews for another minute): it revokes that lease and joins at once,
// neither refused as a duplicate nor waiting for the lease to run out.
func TestOwnStaleLeaseIsRevoked(t *testing.T) {
	srv := etcdtest.Start(t)
	tc := newTestCluster(t, srv)
	old := staleRecord(t, tc.c, "a", memberValue{Addr: "127.0.0.1:9", NodeID: "node-a", Incarnation: "killed"}, time.Minute)
	m, err := New(tc.config("a"))
	if err != nil {
		t.Fatal(err)
	}
	// Well under the stale lease's minute: waiting it out fails the start.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Start(ctx, &recorder{owned: map[uint64]uint64{}}); err != nil {
		t.Fatalf("restart with its own stale record present: %v", err)
	}
	t.Cleanup(m.Stop)
	ttl, err := tc.c.TimeToLive(context.Background(), old)
	if err != nil {
		t.Fatal(err)
	}
	if ttl.TTL != -1 {
		t.Errorf("the former incarnation's lease has %d s left: it was not revoked", ttl.TTL)
	}
	// Start returns once the record is written; the session that renews
	// its lease is installed by the member's goroutine after that.
	pollUntil(t, 30*time.Second, "members/a under this process's session", func() (bool, string) {
		v, l, ok := record(t, tc.c, "a")
		return ok && v.Addr == "127.0.0.1:1" && l != 0 && l == sessionLease(m),
			fmt.Sprintf("members/a = %+v lease %x (present %v); want this process's (127.0.0.1:1, lease %x)", v, l, ok, sessionLease(m))
	})
}

// logWatch is a slog.Handler that closes seen the first time a record's
// message holds want.
type logWatch struct {
	want string
	once sync.Once
	seen chan struct{}
}

func (w *logWatch) Enabled(context.Context, slog.Level) bool { return true }
func (w *logWatch) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return nil
}
func (w *logWatch) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *logWatch) WithGroup(string) slog.Handler      { return w }

// TestJoinWaitEndsWithCtx: the name is held by another node's record whose
// lease nobody renews (a process that died): the member waits for the
// lease to run out rather than refuse at once, and that wait ends when
// its start is abandoned (ctx), naming what it waited for; the record is
// left alone. Held by a lease that does run out, the wait ends in a join.
func TestJoinWaitEndsWithCtx(t *testing.T) {
	srv := etcdtest.Start(t)
	tc := newTestCluster(t, srv)
	held := staleRecord(t, tc.c, "a", memberValue{Addr: "127.0.0.1:9", NodeID: "node-elsewhere", Incarnation: "dead"}, time.Minute)

	w := &logWatch{want: "waiting", seen: make(chan struct{})}
	cfg := tc.config("a")
	cfg.Logger = slog.New(w)
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Start(ctx, &recorder{owned: map[uint64]uint64{}}) }()
	select {
	case <-w.seen:
	case err := <-done:
		if err == nil {
			m.Stop()
		}
		t.Fatalf("the start returned (%v) while the name is held by an unexpired lease, without waiting", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the member logged no wait for the held name within 30 s")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the abandoned start returned %v, want context.Canceled", err)
		}
		for _, want := range []string{`"a"`, "127.0.0.1:9"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("abandoned wait %q does not say %q", err, want)
			}
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the wait did not end within 30 s of its ctx ending")
	}
	if ttl, err := tc.c.TimeToLive(context.Background(), held); err != nil || ttl.TTL <= 0 {
		t.Errorf("another node's record was revoked (ttl %v, %v)", ttl, err)
	}
	if _, l, ok := record(t, tc.c, "a"); !ok || l != held {
		t.Error("another node's record was replaced")
	}

	// A holder whose lease runs out: the wait ends in a join.
	if _, err := tc.c.Revoke(context.Background(), held); err != nil {
		t.Fatal(err)
	}
	staleRecord(t, tc.c, "a", memberValue{Addr: "127.0.0.1:9", NodeID: "node-elsewhere", Incarnation: "dead"}, 2*time.Second)
	tc.start("a")
	if v, _, ok := record(t, tc.c, "a"); !ok || v.Addr != "127.0.0.1:1" {
		t.Errorf("after the holder's lease ran out, members/a = %+v (present %v), want this member's", v, ok)
	}
}

// TestTokenMismatchRefused: members prove the shared token before they
// take work. A member whose token differs from the cluster's (or that has
// none) is refused at start, naming the token; etcd holds a verifier
// derived from the token, never the token. With no member live, a member
// with a new token starts and its token becomes the cluster's (rotation:
// every member restarted together).
func TestTokenMismatchRefused(t *testing.T) {
	srv := etcdtest.Start(t)
	tc := newTestCluster(t, srv)
	putJobs(t, tc.c, 3)
	const token = "first-token-s3cret"
	a := tc.config("a")
	a.Credential, a.Lease = token, 5*time.Second // a stays live throughout
	tc.startConfig(a)
	tc.await(3, []string{"a"}, 3, 30*time.Second)

	for _, cred := range []string{"another-token", ""} {
		cfg := tc.config("b")
		cfg.Credential = cred
		m, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		err = m.Start(ctx, &recorder{owned: map[uint64]uint64{}})
		cancel()
		if err == nil {
			m.Stop()
			t.Fatalf("a member with token %q joined a cluster whose token is another", cred)
		}
		if !strings.Contains(err.Error(), "token") {
			t.Errorf("refusal of token %q: %q does not name the token", cred, err)
		}
		if _, _, ok := record(t, tc.c, "b"); ok {
			t.Errorf("the member with token %q registered", cred)
		}
	}
	if n := len(tc.recs["a"].snapshot()); n != 3 {
		t.Errorf("a owns %d jobs, want all 3", n)
	}
	r, err := tc.c.Get(context.Background(), "/lc/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range r.Kvs {
		if strings.Contains(string(kv.Value), token) {
			t.Errorf("etcd holds the token in %s", kv.Key)
		}
	}

	// Rotation: every member stops, then starts with the new token.
	tc.members["a"].Stop()
	b := tc.config("b")
	b.Credential = "another-token"
	tc.startConfig(b)
	tc.await(3, []string{"b"}, 3, 30*time.Second)
}
