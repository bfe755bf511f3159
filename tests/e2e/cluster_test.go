package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	dorisexec "github.com/loadnode/loadnode/doris/exec"
	"github.com/loadnode/loadnode/internal/etcdtest"
	"github.com/loadnode/loadnode/internal/ledger"
	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/internal/testnode"
)

// clusterLease is the members' lease TTL in these tests.
const clusterLease = 3 * time.Second

// clusterArgs writes a member's node config: cluster name, etcd, a short
// lease, the PostgreSQL database analytics, quick auto-resume.
func clusterArgs(t *testing.T, name string, etcd []string, dsn string) []string {
	t.Helper()
	args, err := testnode.WriteClusterConfig(t.TempDir(), testnode.ClusterMember{Name: name, Etcd: etcd, Lease: clusterLease,
		RequestTimeout: 3 * time.Second, Databases: map[string]string{"analytics": dsn}, Extra: "auto_resume_base: 1s\nauto_resume_max: 4s\n"})
	if err != nil {
		t.Fatal(err)
	}
	return args
}

type member struct {
	name string
	p    *testnode.Proc
	c    *client.Client
}

func startMembers(t *testing.T, n int, etcd []string, dsn string) []*member {
	t.Helper()
	var ms []*member
	for i := range n {
		name := fmt.Sprintf("m%d", i)
		p := testnode.Start(t, testnode.Options{DataDir: t.TempDir(), Args: clusterArgs(t, name, etcd, dsn)})
		ms = append(ms, &member{name: name, p: p, c: p.Client(t)})
	}
	return ms
}

// listJobs lists through c, tolerating a member that does not answer.
func listJobs(c *client.Client) ([]*api.JobSummary, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.ListJobs(ctx)
}

// owners returns each job's owner as c lists them.
func owners(c *client.Client) (map[string]string, error) {
	jobs, err := listJobs(c)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, j := range jobs {
		out[j.GetName()] = j.GetOwner()
	}
	return out, nil
}

// waitOwned waits until every job is owned by one of live, as c lists
// them, and each of those members runs it (its job show, forwarded or
// not, says so).
func waitOwned(t *testing.T, c *client.Client, names []string, live []string, d time.Duration) map[string]string {
	t.Helper()
	var got map[string]string
	waitFor(t, d, fmt.Sprintf("every job owned by one of %v", live), func() (bool, string) {
		o, err := owners(c)
		if err != nil {
			return false, err.Error()
		}
		for _, n := range names {
			if !slices.Contains(live, o[n]) {
				return false, fmt.Sprintf("job %s owned by %q", n, o[n])
			}
		}
		got = o
		return true, ""
	})
	return got
}

func loadedRows(t *testing.T, c *client.Client, name string) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := c.ShowJob(ctx, name)
	if err != nil {
		return 0, err
	}
	return info.GetStats().GetLoadedRows(), nil
}

// TestClusterFailover: 3 members on etcd, 12 jobs into PostgreSQL,
// 300,000 records; one member SIGKILLed mid-load, another SIGSTOPped past
// its lease and resumed, the killed one restarted, etcd restarted: every
// table has every record exactly once, each job ends owned by exactly one
// live member, and the loaded-rows statistics equal the record counts.
func TestClusterFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const (
		jobs    = 12
		perJob  = 25_000 // 300,000 records in all
		parts   = 2
		startup = 60 * time.Second
	)
	etcd := etcdtest.Start(t)
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	var topics []string
	for i := range jobs {
		topics = append(topics, fmt.Sprintf("ct%02d", i))
	}
	b := testnode.StartBroker(t, parts, topics...)
	l := ledger.New()
	ms := startMembers(t, 3, etcd.Endpoints(), dsn)
	all := []string{"m0", "m1", "m2"}

	// Half the records first; the jobs are created through every member.
	for _, tp := range topics {
		produce(t, l, b, tp, 0, perJob/2)
	}
	var names []string
	for i, tp := range topics {
		name := "cj_" + tp
		names = append(names, name)
		spec := jsonSpec(name, "ct_"+tp, tp, b.Addrs())
		spec.Table.Database = "analytics"
		spec.MaxBatchRows = 1000
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		if _, err := ms[i%3].c.CreateJob(ctx, spec); err != nil {
			t.Fatalf("create %s through %s: %v", name, ms[i%3].name, err)
		}
		cancel()
	}
	// An embedded-store job is refused in cluster mode, naming the field.
	{
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := ms[0].c.CreateJob(ctx, jsonSpec("embedded", "emb", topics[0], b.Addrs()))
		cancel()
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Code != api.ErrorCode_INVALID_ARGUMENT || ce.Field != "table.database" {
			t.Fatalf("an embedded-store job in cluster mode: %v, want INVALID_ARGUMENT on table.database", err)
		}
	}
	before := waitOwned(t, ms[0].c, names, all, startup)
	per := map[string]int{}
	for _, o := range before {
		per[o]++
	}
	t.Logf("initial owners: %v", per)
	for _, n := range all {
		if per[n] < 2 || per[n] > 6 {
			t.Errorf("member %s owns %d of %d jobs: not balanced", n, per[n], jobs)
		}
	}
	// Loading has started everywhere.
	waitFor(t, 120*time.Second, "every job loading", func() (bool, string) {
		for _, n := range names {
			r, err := loadedRows(t, ms[0].c, n)
			if err != nil || r == 0 {
				return false, fmt.Sprintf("%s: %d rows, %v", n, r, err)
			}
		}
		return true, ""
	})

	// SIGKILL m1 mid-load: its jobs load again on m0 and m2.
	var m1jobs []string
	for n, o := range before {
		if o == "m1" {
			m1jobs = append(m1jobs, n)
		}
	}
	slices.Sort(m1jobs)
	base := map[string]int64{}
	for _, n := range m1jobs {
		base[n], _ = loadedRows(t, ms[0].c, n)
	}
	killed := time.Now()
	ms[1].p.MustKill(t)
	ms[1].c.Close()
	for _, tp := range topics {
		produce(t, l, b, tp, perJob/2, perJob/4)
	}
	waitOwned(t, ms[0].c, names, []string{"m0", "m2"}, clusterLease+30*time.Second)
	waitFor(t, clusterLease+60*time.Second, "the killed member's jobs loading on survivors", func() (bool, string) {
		for _, n := range m1jobs {
			r, err := loadedRows(t, ms[0].c, n)
			if err != nil || r <= base[n] {
				return false, fmt.Sprintf("%s: %d rows (was %d), %v", n, r, base[n], err)
			}
		}
		return true, ""
	})
	failover := time.Since(killed)
	t.Logf("FAILOVER: the SIGKILLed member's %d jobs loaded again on survivors %v after the kill (lease %v)", len(m1jobs), failover.Round(time.Millisecond), clusterLease)
	if failover > clusterLease+10*time.Second+5*time.Second {
		t.Errorf("failover took %v, want within lease %v + 10 s (+5 s for a loaded machine)", failover, clusterLease)
	}

	// SIGSTOP m2 past its lease: its jobs move to m0; SIGCONT: m2 notices
	// its lost session, rejoins and takes work again.
	if err := ms[2].p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	waitOwned(t, ms[0].c, names, []string{"m0"}, clusterLease+30*time.Second)
	t.Logf("the SIGSTOPped member's jobs all on m0 %v after the freeze", time.Since(frozen).Round(time.Millisecond))
	if err := ms[2].p.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// The killed member comes back.
	ms[1].p.MustRestart(t)
	ms[1].c = ms[1].p.Client(t)
	// etcd itself restarts once, under load.
	if err := etcd.Restart(); err != nil {
		t.Fatal(err)
	}
	for _, tp := range topics {
		produce(t, l, b, tp, perJob*3/4, perJob/4)
	}
	// Work spreads over all three again.
	waitFor(t, 90*time.Second, "every member owning jobs again", func() (bool, string) {
		o, err := owners(ms[0].c)
		if err != nil {
			return false, err.Error()
		}
		per := map[string]int{}
		for _, n := range names {
			per[o[n]]++
		}
		return per["m0"] > 0 && per["m1"] > 0 && per["m2"] > 0 && per["m0"]+per["m1"]+per["m2"] == jobs, fmt.Sprintf("%v", per)
	})

	// Drained: every job's progress is at the end offsets, through any
	// member (show is forwarded to the owner).
	for i, n := range names {
		ends := endOffsets(t, b, topics[i])
		c := ms[i%3].c
		waitFor(t, 120*time.Second, n+" drained", func() (bool, string) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			info, err := c.ShowJob(ctx, n)
			if err != nil {
				return false, err.Error()
			}
			for _, p := range info.GetPartitions() {
				if p.GetCommittedOffset() != ends[p.GetPartition()] {
					return false, fmt.Sprintf("owner %s epoch %d state %s (%s) tasks %d health %s: partition %d at %d of %d",
						info.GetSummary().GetOwner(), info.GetSummary().GetEpoch(), info.GetSummary().GetState(), info.GetSummary().GetReasonMessage(),
						info.GetRunningTasks(), info.GetHealth(), p.GetPartition(), p.GetCommittedOffset(), ends[p.GetPartition()])
				}
			}
			return len(info.GetPartitions()) == len(ends), ""
		})
	}
	// Each job is owned by exactly one live member: all three list the
	// same owner, and only that member runs it.
	o0, err := owners(ms[0].c)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[1:] {
		o, err := owners(m.c)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if o[n] != o0[n] || !slices.Contains(all, o0[n]) {
				t.Errorf("job %s: %s lists owner %q, m0 lists %q", n, m.name, o[n], o0[n])
			}
		}
	}
	var total, loaded int64
	for i, n := range names {
		checkExactlyOnce(t, ms[i%3].c, l, n, "ct_"+topics[i])
		r, err := loadedRows(t, ms[(i+1)%3].c, n)
		if err != nil {
			t.Fatal(err)
		}
		loaded += r
		total += perJob
	}
	var pgRows, pgDistinct, pgStats int64
	pgQuery(t, dsn, `SELECT coalesce(sum(loaded_rows), 0) FROM loadnode.jobs`, &pgStats)
	for _, tp := range topics {
		var c, d int64
		pgQuery(t, dsn, `SELECT count(*), count(DISTINCT (_loadnode_partition, _loadnode_offset)) FROM public.ct_`+tp, &c, &d)
		pgRows += c
		pgDistinct += d
	}
	t.Logf("CLUSTER: records=%d rows=%d distinct=%d duplicates=%d loaded_rows(show)=%d loaded_rows(pg)=%d failover=%v",
		total, pgRows, pgDistinct, pgRows-pgDistinct, loaded, pgStats, failover.Round(time.Millisecond))
	if pgRows != total || pgDistinct != total || loaded != total || pgStats != total {
		t.Fatalf("not exactly once across the cluster: records=%d rows=%d distinct=%d loaded_rows=%d/%d", total, pgRows, pgDistinct, loaded, pgStats)
	}
	if st := clusterStatus(t, ms[2].c); len(st.GetMembers()) != 3 || st.GetLeader() == "" {
		t.Errorf("cluster status: %v", st)
	}

	// Doris statements through a member that does not own the job reach
	// its owner; every member then shows the new state.
	job := names[0]
	var other *member
	for _, m := range ms {
		if m.name != o0[job] {
			other = m
		}
	}
	exec := func(stmt string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if _, err := dorisexec.Exec(ctx, other.c, stmt); err != nil {
			t.Fatalf("%s through %s (owner %s): %v", stmt, other.name, o0[job], err)
		}
	}
	exec("PAUSE ROUTINE LOAD FOR " + job)
	for _, m := range ms {
		waitFor(t, 30*time.Second, job+" PAUSED as "+m.name+" lists it", func() (bool, string) {
			jobs, err := listJobs(m.c)
			if err != nil {
				return false, err.Error()
			}
			for _, j := range jobs {
				if j.GetName() == job {
					return j.GetState() == api.JobState_PAUSED, j.GetState().String()
				}
			}
			return false, "not listed"
		})
	}
	info := showJob(t, other.c, job)
	if info.GetSummary().GetOwner() != o0[job] || info.GetSummary().GetEpoch() == 0 {
		t.Errorf("job show through %s: owner %q epoch %d, want owner %s and an epoch", other.name, info.GetSummary().GetOwner(), info.GetSummary().GetEpoch(), o0[job])
	}
	exec("RESUME ROUTINE LOAD FOR " + job)

	// The CLI: cluster status and job list through any member.
	out, err := osexec.Command(loadnodeBinary(t), "cluster", "status", "--addr", ms[1].p.Addr()).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "MEMBER") || !strings.Contains(string(out), "m2") {
		t.Errorf("loadnode cluster status: %v\n%s", err, out)
	}
	t.Logf("loadnode cluster status:\n%s", out)
	out, err = osexec.Command(loadnodeBinary(t), "job", "list", "--addr", ms[2].p.Addr()).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "OWNER") {
		t.Errorf("loadnode job list: %v\n%s", err, out)
	}
}

func clusterStatus(t *testing.T, c *client.Client) *api.ClusterStatusResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := c.ClusterStatus(ctx)
	if err != nil {
		t.Fatalf("cluster status: %v", err)
	}
	return st
}

// rssKB is a process's resident memory, from /proc.
func rssKB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			return kb
		}
	}
	return -1
}

// TestClusterScale (LOADNODE_CLUSTER_SCALE=N jobs, e.g. 3000): 3 members,
// N idle jobs into one PostgreSQL table; one member is SIGKILLed and the
// time until every job is owned by and RUNNING on a survivor is printed,
// with each member's resident memory. Not in make test (minutes).
func TestClusterScale(t *testing.T) {
	n := 0
	if s := os.Getenv("LOADNODE_CLUSTER_SCALE"); s != "" {
		fmt.Sscan(s, &n)
	}
	if n <= 0 {
		t.Skip("set LOADNODE_CLUSTER_SCALE=N (jobs) to run")
	}
	etcd := etcdtest.Start(t)
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	b := testnode.StartBroker(t, 1, "scale")
	ms := startMembers(t, 3, etcd.Endpoints(), dsn)
	t0 := time.Now()
	errs := make(chan error, n)
	sem := make(chan struct{}, 24) // creates in flight
	for i := range n {
		name := fmt.Sprintf("s%05d", i)
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem }()
			spec := jsonSpec(name, "scale_rows", "scale", b.Addrs())
			spec.Table.Database = "analytics"
			spec.DesiredConcurrentNumber = 1
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			_, err := ms[i%3].c.CreateJob(ctx, spec)
			errs <- err
		}(i)
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("created %d jobs through 3 members in %v", n, time.Since(t0).Round(time.Millisecond))
	running := func(live []string, d time.Duration) {
		t.Helper()
		waitFor(t, d, fmt.Sprintf("%d jobs RUNNING on %v", n, live), func() (bool, string) {
			jobs, err := listJobs(ms[0].c)
			if err != nil {
				return false, err.Error()
			}
			ok := 0
			for _, j := range jobs {
				if slices.Contains(live, j.GetOwner()) && j.GetState() == api.JobState_RUNNING {
					ok++
				}
			}
			return ok == n, fmt.Sprintf("%d of %d", ok, n)
		})
	}
	t1 := time.Now()
	running([]string{"m0", "m1", "m2"}, 10*time.Minute)
	t.Logf("all %d jobs RUNNING on 3 members %v after the creates", n, time.Since(t1).Round(time.Millisecond))
	for _, m := range ms {
		t.Logf("member %s: RSS %d MiB", m.name, rssKB(m.p.PID())/1024)
	}
	o, _ := owners(ms[0].c)
	moved := 0
	for _, ow := range o {
		if ow == "m2" {
			moved++
		}
	}
	killed := time.Now()
	ms[2].p.MustKill(t)
	running([]string{"m0", "m1"}, 10*time.Minute)
	t.Logf("SCALE: %d jobs, the killed member's %d jobs owned and RUNNING on survivors %v after SIGKILL (lease %v)",
		n, moved, time.Since(killed).Round(time.Millisecond), clusterLease)
	for _, m := range ms[:2] {
		t.Logf("member %s: RSS %d MiB", m.name, rssKB(m.p.PID())/1024)
	}
}
