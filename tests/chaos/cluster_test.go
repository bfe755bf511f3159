package chaos

import (
	"fmt"
	"os"
	osexec "os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/internal/etcdtest"
	"github.com/loadnode/loadnode/internal/ledger"
	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/internal/testnode"
)

// chaosLease is the members' lease TTL in TestChaosCluster.
const chaosLease = 3 * time.Second

// clusterParams sizes TestChaosCluster.
type clusterParams struct {
	jobs      int
	records   int // records produced, at least
	kills     int // SIGKILL + restart of a member
	stops     int // SIGSTOP past the lease, then SIGCONT
	etcds     int // etcd restarts
	faultTime time.Duration
}

// clusterSize: 30 s of faults in make test; LOADNODE_CHAOS_CLUSTER_DURATION
// (a Go duration) or LOADNODE_CHAOS_LONG (5 minutes) make it longer, with
// one fault of each kind per 30 s.
func clusterSize(t *testing.T) clusterParams {
	d := 30 * time.Second
	if longRun() {
		d = 5 * time.Minute
	}
	if s := os.Getenv("LOADNODE_CHAOS_CLUSTER_DURATION"); s != "" {
		v, err := time.ParseDuration(s)
		if err != nil || v < 20*time.Second {
			t.Fatalf("LOADNODE_CHAOS_CLUSTER_DURATION=%q: want a duration of at least 20s (%v)", s, err)
		}
		d = v
	}
	n := max(1, int(d/(30*time.Second)))
	return clusterParams{jobs: 6, records: 1000 * int(d/time.Second), kills: n, stops: n, etcds: n, faultTime: d}
}

// cmember is one cluster member, restarted in place.
type cmember struct {
	name string
	p    *testnode.Proc

	mu   sync.Mutex
	c    *client.Client
	down bool // killed or frozen: not asked
}

func (m *cmember) client() *client.Client {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return nil
	}
	return m.c
}

func (m *cmember) setDown(down bool) {
	m.mu.Lock()
	m.down = down
	m.mu.Unlock()
}

// TestChaosCluster runs 3 `loadnode serve` members in cluster mode (lease
// 3 s) on a real etcd, with jobs loading a kfake topic into PostgreSQL
// while a producer writes, and injects a schedule drawn from the seed:
// SIGKILL of a member and its restart, SIGSTOP of a member past its lease
// and SIGCONT, an etcd stop and restart. Before each fault the cluster must
// have settled (all members live, every job owned by one), so survivors
// can take over. At the end: every table exactly once (ledger), loaded_rows
// equal to the records, every job owned by exactly one live member as
// every member lists it, and cluster status shows 3 members and no orphan.
func TestChaosCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	// Fail (or skip) before the run when etcd or PostgreSQL is missing.
	etcdtest.Bin(t)
	pgtest.Bin(t)
	size := clusterSize(t)
	seed := seedFor(t)
	run := newChaosRun(t, seed)
	rng := run.rng
	const topic = "corders"

	etcd := etcdtest.Start(t)
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	b := testnode.StartBrokerOpts(t, testnode.BrokerOptions{Seed: []kfake.Opt{kfake.SeedTopics(4, topic)}})
	brokers := b.Addrs()

	var ms []*cmember
	for i := range 3 {
		name := fmt.Sprintf("m%d", i)
		args, err := testnode.WriteClusterConfig(t.TempDir(), testnode.ClusterMember{Name: name, Etcd: etcd.Endpoints(),
			Lease: chaosLease, RequestTimeout: 3 * time.Second, Databases: map[string]string{"chaos": dsn},
			Extra: "auto_resume_base: 1s\nauto_resume_max: 4s\ntopology_interval: 300ms\nwatermark_interval: 200ms\n"})
		if err != nil {
			t.Fatal(err)
		}
		p := testnode.Start(t, testnode.Options{DataDir: t.TempDir(), Args: args, LogLines: 20000, DumpLines: 400})
		ms = append(ms, &cmember{name: name, p: p, c: p.Client(t)})
	}
	// live returns the clients of the members that are up, from a random
	// one on (spreading the questions).
	live := func() []*cmember {
		var out []*cmember
		for _, m := range ms {
			if m.client() != nil {
				out = append(out, m)
			}
		}
		return out
	}
	anyClient := func() *client.Client {
		l := live()
		if len(l) == 0 {
			return nil
		}
		return l[int(time.Now().UnixNano()%int64(len(l)))].client()
	}

	var names []string
	for i := range size.jobs {
		name := fmt.Sprintf("cl%d", i)
		spec := chaosSpec(name, "ct"+fmt.Sprint(i), topic, brokers, int32(1+i%3), int64(500+500*(i%2)))
		spec.Table.Database = "chaos"
		ctx, cancel := ctxFor(30 * time.Second)
		_, err := ms[i%3].client().CreateJob(ctx, spec)
		cancel()
		t.Logf("create %s through %s: %s (%v)", name, ms[i%3].name, run.registry.Created(name, err), err)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}

	// owners lists each job's owner through c.
	owners := func(c *client.Client) (map[string]string, error) {
		if c == nil {
			return nil, fmt.Errorf("no member up")
		}
		ctx, cancel := ctxFor(5 * time.Second)
		defer cancel()
		jobs, err := c.ListJobs(ctx)
		if err != nil {
			return nil, err
		}
		out := map[string]string{}
		for _, j := range jobs {
			out[j.GetName()] = j.GetOwner()
		}
		return out, nil
	}
	// ownedBy waits until every job is owned by one of the members in
	// among, as a member that is up lists it.
	ownedBy := func(among []string, d time.Duration) (map[string]string, bool, string) {
		var got map[string]string
		ok, last := waitFor(d, func() (bool, string) {
			o, err := owners(anyClient())
			if err != nil {
				return false, err.Error()
			}
			for _, n := range names {
				if !slices.Contains(among, o[n]) {
					return false, fmt.Sprintf("job %s owned by %q (want one of %v)", n, o[n], among)
				}
			}
			got = o
			return true, ""
		})
		return got, ok, last
	}
	upNames := func() []string {
		var out []string
		for _, m := range live() {
			out = append(out, m.name)
		}
		return out
	}
	// agreed reports whether every member lists each job with the same
	// owner, one of the three, and every member's cluster status has
	// the three members, a leader and every job assigned, none orphaned.
	agreed := func(ms []*cmember) (bool, string) {
		var o0 map[string]string
		for _, m := range ms {
			c := m.client()
			if c == nil {
				return false, m.name + " is down"
			}
			o, err := owners(c)
			if err != nil {
				return false, fmt.Sprintf("job list through %s: %v", m.name, err)
			}
			if o0 == nil {
				o0 = o
			}
			for _, n := range names {
				if o[n] != o0[n] || !slices.Contains([]string{"m0", "m1", "m2"}, o[n]) {
					return false, fmt.Sprintf("job %s: %s lists owner %q, %s lists %q", n, m.name, o[n], ms[0].name, o0[n])
				}
			}
			ctx, cancel := ctxFor(10 * time.Second)
			st, err := c.ClusterStatus(ctx)
			cancel()
			if err != nil {
				return false, fmt.Sprintf("cluster status through %s: %v", m.name, err)
			}
			var assigned int64
			for _, mem := range st.GetMembers() {
				assigned += mem.GetJobs()
			}
			if len(st.GetMembers()) != 3 || st.GetLeader() == "" || st.GetOrphaned() != 0 || assigned != int64(len(names)) {
				return false, fmt.Sprintf("cluster status through %s: leader %q, %d members, %d orphaned, %d of %d jobs assigned",
					m.name, st.GetLeader(), len(st.GetMembers()), st.GetOrphaned(), assigned, len(names))
			}
		}
		return true, ""
	}
	// settled waits until the cluster status lists all 3 members, every
	// job is owned by one of them and the members agree: a fault comes
	// only then.
	settled := func(when string) {
		ok, last := waitFor(60*time.Second, func() (bool, string) {
			c := anyClient()
			if c == nil {
				return false, "no member up"
			}
			ctx, cancel := ctxFor(5 * time.Second)
			defer cancel()
			st, err := c.ClusterStatus(ctx)
			if err != nil {
				return false, err.Error()
			}
			if len(st.GetMembers()) != 3 || st.GetLeader() == "" || st.GetOrphaned() != 0 {
				return false, fmt.Sprintf("cluster status: leader %q, %d members, %d orphaned", st.GetLeader(), len(st.GetMembers()), st.GetOrphaned())
			}
			return true, ""
		})
		if !ok {
			run.violation("%s: the cluster did not settle within 60 s: %s", when, last)
			return
		}
		if _, ok, last := ownedBy([]string{"m0", "m1", "m2"}, 30*time.Second); !ok {
			run.violation("%s: %s", when, last)
			return
		}
		if ok, last := waitFor(30*time.Second, func() (bool, string) { return agreed(ms) }); !ok {
			run.violation("%s: the members did not agree within 30 s: %s", when, last)
		}
	}
	settled("start")

	prod, err := ledger.NewProducer(brokers, topic, run.ledger, 0, 60)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { prod.Close() }()
	prod.AddWriters(2, 0, 1, 2, 3)
	began := time.Now()
	pl := startProducing(prod, size.records, began.Add(size.faultTime*85/100))

	// The monitor samples progress (regressions) and the job registry
	// through members that are up, and counts owner changes.
	var moves struct {
		sync.Mutex
		last map[string]string
		n    int
	}
	moves.last = map[string]string{}
	stopMonitor := make(chan struct{})
	monitorDone := make(chan struct{})
	go func() {
		defer close(monitorDone)
		for {
			select {
			case <-stopMonitor:
				return
			case <-time.After(300 * time.Millisecond):
			}
			c := anyClient()
			if c == nil {
				continue
			}
			_ = run.sample(c, "monitor") // a member whose peer is frozen may not answer
			if o, err := owners(c); err == nil {
				moves.Lock()
				for n, ow := range o {
					if prev, ok := moves.last[n]; ok && ow != "" && prev != "" && ow != prev {
						moves.n++
					}
					if ow != "" {
						moves.last[n] = ow
					}
				}
				moves.Unlock()
			}
		}
	}()

	var failovers []time.Duration
	// failover: the victim's jobs must be owned by survivors within the
	// lease + 10 s (+10 s for a loaded machine), and load there again.
	failover := func(victim *cmember, kind string, since time.Time) {
		var survivors []string
		for _, m := range ms {
			if m != victim {
				survivors = append(survivors, m.name)
			}
		}
		if _, ok, last := ownedBy(survivors, chaosLease+20*time.Second); !ok {
			run.violation("%s of %s: its jobs did not move to %v within %v: %s", kind, victim.name, survivors, chaosLease+20*time.Second, last)
			return
		}
		d := time.Since(since)
		failovers = append(failovers, d)
		t.Logf("%s of %s: every job owned by %v %v after the fault", kind, victim.name, survivors, d.Round(time.Millisecond))
	}

	type event struct {
		at   time.Duration
		kind string
	}
	var kinds []string
	for range size.kills {
		kinds = append(kinds, "kill")
	}
	for range size.stops {
		kinds = append(kinds, "sigstop")
	}
	for range size.etcds {
		kinds = append(kinds, "etcd-restart")
	}
	rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	step := size.faultTime / time.Duration(len(kinds)+1)
	var events []event
	for i, k := range kinds {
		events = append(events, event{step*time.Duration(i+1) + time.Duration(rng.Int64N(int64(step/3))), k})
	}
	for _, ev := range events {
		if d := time.Until(began.Add(ev.at)); d > 0 {
			if !hold(t.Context(), d) { // the schedule's pace
				return
			}
		}
		settled("before " + ev.kind)
		victim := ms[rng.IntN(len(ms))]
		start := time.Now()
		switch ev.kind {
		case "kill":
			victim.setDown(true)
			victim.p.MustKill(t)
			run.fault("SIGKILL member")
			failover(victim, "SIGKILL", start)
			victim.p.MustRestart(t)
			c := victim.p.Client(t)
			victim.mu.Lock()
			victim.c, victim.down = c, false
			victim.mu.Unlock()
			run.mu.Lock()
			run.restarts++
			run.mu.Unlock()
		case "sigstop":
			victim.setDown(true)
			if err := victim.p.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			failover(victim, "SIGSTOP", start)
			// Frozen past its lease even if it owned no job.
			hold(t.Context(), time.Until(start.Add(chaosLease+time.Second)))
			if err := victim.p.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			run.fault("SIGSTOP past the lease/SIGCONT")
			if exited, _ := victim.p.Exited(); exited {
				run.violation("%s exited after SIGSTOP/SIGCONT", victim.name)
				victim.p.MustRestart(t)
				c := victim.p.Client(t)
				victim.mu.Lock()
				victim.c = c
				victim.mu.Unlock()
			}
			victim.setDown(false)
		case "etcd-restart":
			victim = nil
			if err := etcd.Kill(); err != nil {
				t.Fatal(err)
			}
			hold(t.Context(), time.Duration(500+rng.IntN(1500))*time.Millisecond) // etcd stays down this long
			if err := etcd.Restart(); err != nil {
				t.Fatal(err)
			}
			run.fault("etcd stop/restart")
		}
		when := ev.kind
		if victim != nil {
			when += " " + victim.name
		}
		settled("after " + when)
		run.stalls.Reset()
		run.awaitRecovery(anyClient(), start, when)
		t.Logf("%s: recovered %v after the fault (members up %v)", when, time.Since(start).Round(time.Millisecond), upNames())
	}
	faultsEnd := time.Now()
	if err := pl.stop(); err != nil {
		t.Fatal(err)
	}
	close(stopMonitor)
	<-monitorDone
	t.Logf("faults done after %s; %d records acknowledged (%d failed)", faultsEnd.Sub(began).Round(time.Millisecond), run.ledger.Len(), run.ledger.Failed())

	ctx, cancel := ctxFor(30 * time.Second)
	ends, err := ledger.EndOffsets(ctx, brokers, topic)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	c := ms[0].client()
	drain := awaitDrained(t, c, faultsEnd, 60*time.Second, func(*api.JobInfo) map[int32]int64 { return ends }, nil)

	// Every job owned by exactly one live member: every member lists the
	// same owner, one of the three; status shows them all, none orphaned.
	// The last fault may have ended a moment ago (a member thawed from
	// SIGSTOP rejoins, the leader moves jobs back to it), so this waits
	// for the members to agree, within the lease and 20 s.
	if ok, last := waitFor(chaosLease+20*time.Second, func() (bool, string) { return agreed(ms) }); !ok {
		run.violation("final: the members did not agree within %v: %s", chaosLease+20*time.Second, last)
	}
	bin, err := testnode.BuildBinary()
	if err != nil {
		t.Fatal(err)
	}
	out, err := osexec.Command(bin, "cluster", "status", "--addr", ms[1].p.Addr()).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "m2") {
		run.violation("final: loadnode cluster status: %v: %s", err, out)
	}
	t.Logf("loadnode cluster status:\n%s", out)

	sum := finalCheck(t, run, c, brokers, topic, nil)
	// loaded_rows equal to the records, job by job (finalCheck's
	// loaded-rows delta is against the rows; this is against the log).
	infos, err := showAll(c)
	if err != nil {
		t.Fatal(err)
	}
	want := int64(len(run.ledger.Topic(topic)))
	for _, n := range names {
		if got := infos[n].GetStats().GetLoadedRows(); got != want {
			run.violation("final: job %s loaded_rows %d, want the %d records", n, got, want)
		}
	}
	sum.Name, sum.Seed, sum.Drain = "cluster", seed, drain
	moves.Lock()
	moved := moves.n
	moves.Unlock()
	longest := time.Duration(0)
	for _, d := range failovers {
		longest = max(longest, d)
	}
	report(t, run, sum)
	t.Logf("chaos cluster: records=%d jobs=%d faults=%d restarts=%d failovers=%d owner-changes=%d longest-failover=%v lease=%v",
		sum.Records, len(names), sum.TotalFaults(), sum.Restarts, len(failovers), moved, longest.Round(time.Millisecond), chaosLease)
	if got, want := len(failovers), size.kills+size.stops; got != want {
		t.Errorf("%d failovers, want %d (one per SIGKILL and SIGSTOP)", got, want)
	}
	if !sum.Pass() {
		t.Fatalf("chaos found anomalies (seed %d)", seed)
	}
}
