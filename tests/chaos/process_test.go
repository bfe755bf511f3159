package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/internal/ledger"
	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/internal/testdeps"
	"github.com/loadnode/loadnode/internal/testnode"
	"github.com/loadnode/loadnode/node"
)

// procParams sizes TestChaosProcess.
type procParams struct {
	records   int // records produced to the main topic, at least
	kills     int // SIGKILLs at random times (named crash points come on top)
	pauses    int // SIGSTOP/SIGCONT pauses
	brokers   int // broker stop/restarts
	faultTime time.Duration
}

func procSize() procParams {
	if longRun() {
		return procParams{records: 400_000, kills: 50, pauses: 5, brokers: 4, faultTime: 5 * time.Minute}
	}
	return procParams{records: 100_000, kills: 10, pauses: 1, brokers: 1, faultTime: 40 * time.Second}
}

// cluster is the test's node process on one data directory, restarted in
// place as the test kills it.
type cluster struct {
	t      *testing.T
	data   string
	config string

	mu sync.Mutex
	p  *testnode.Proc
	c  *client.Client
}

// start starts (or restarts) `loadnode serve`, with crash point env armed
// if env is not "", and unless it is armed waits until a client can list
// jobs. The process may then die at the crash point at any time.
func (cl *cluster) start(env string) {
	cl.t.Helper()
	var extra []string
	if env != "" {
		extra = []string{node.CrashEnv + "=" + env}
	}
	if cl.p == nil {
		cl.p = testnode.Start(cl.t, testnode.Options{DataDir: cl.data, Args: []string{"--config", cl.config},
			Env: extra, NoWait: true, LogLines: 20000, DumpLines: 1500})
	} else if err := cl.p.Restart(context.Background(), extra...); err != nil {
		cl.t.Fatal(err)
	}
	if env != "" {
		return
	}
	ctx, cancel := ctxFor(30 * time.Second)
	defer cancel()
	if err := cl.p.WaitReady(ctx); err != nil {
		cl.t.Fatal(err)
	}
	c, err := cl.p.Dial(ctx)
	if err == nil {
		_, err = c.ListJobs(ctx)
	}
	if err != nil {
		cl.t.Fatalf("loadnode not ready at %s: %v", cl.p.Addr(), err)
	}
	cl.mu.Lock()
	cl.c = c
	cl.mu.Unlock()
}

// client returns the current process's client (nil between processes).
func (cl *cluster) client() *client.Client {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.c
}

// kill SIGKILLs the current process and waits until it is gone.
func (cl *cluster) kill() {
	cl.mu.Lock()
	c := cl.c
	cl.c = nil
	cl.mu.Unlock()
	if c != nil {
		c.Close()
	}
	cl.p.MustKill(cl.t)
}

// TestChaosProcess runs real `loadnode serve` processes on one data
// directory against a kfake broker with a data directory, while a producer
// writes, and injects: SIGKILLs at random times, SIGKILLs at the named
// crash points (after the create snapshot is synced, after a batch commit
// before its acknowledgement, after a transition to RUNNING is journaled),
// SIGSTOP/SIGCONT pauses, a broker stop and restart, and retention deleting
// records past a paused job's progress (it must pause with
// OFFSET_OUT_OF_RANGE and skip nothing). After the faults every job must
// drain within 30 s and every anomaly count must be 0.
func TestChaosProcess(t *testing.T) {
	size := procSize()
	seed := seedFor(t)
	run := newChaosRun(t, seed)
	rng := run.rng
	const topic, retTopic, sideTopic = "orders", "ret", "side"

	b := testnode.StartBrokerOpts(t, testnode.BrokerOptions{DataDir: t.TempDir(),
		Seed: []kfake.Opt{kfake.SeedTopics(4, topic), kfake.SeedTopics(1, retTopic), kfake.SeedTopics(2, sideTopic)}})
	brokers := b.Addrs()

	// The PostgreSQL variant: one more job loads the main topic into a
	// private PostgreSQL cluster, which the schedule crash-restarts.
	// Without PostgreSQL the test fails, unless $LOADNODE_SKIP_POSTGRES=1.
	nodeCfg := "topology_interval: 300ms\nwatermark_interval: 200ms\n"
	var pg *pgtest.Server
	if _, err := pgtest.FindBin(); testdeps.LeaveOut(t, testdeps.Postgres, err) {
		t.Logf("no PostgreSQL variant")
	} else {
		pg = pgtest.Start(t)
		dsn := pg.CreateDatabase(t)
		run.storedProgress = pgStoredProgress(dsn)
		nodeCfg += fmt.Sprintf("databases:\n  chaos:\n    type: postgres\n    dsn: %q\n", dsn)
	}
	cfgFile := filepath.Join(t.TempDir(), "node.yaml")
	if err := os.WriteFile(cfgFile, []byte(nodeCfg), 0o644); err != nil {
		t.Fatal(err)
	}
	// The node's output is dumped when the test fails (testnode.Start).
	cl := &cluster{t: t, data: t.TempDir(), config: cfgFile}
	cl.start("")

	create := func(spec *api.JobSpec) error {
		ctx, cancel := ctxFor(10 * time.Second)
		defer cancel()
		c := cl.client()
		if c == nil {
			return fmt.Errorf("no node")
		}
		_, err := c.CreateJob(ctx, spec)
		t.Logf("create %s: %s (%v)", spec.GetName(), run.registry.Created(spec.GetName(), err), err)
		return err
	}
	specs := []*api.JobSpec{
		chaosSpec("p1", "pt1", topic, brokers, 2, 1000),
		chaosSpec("p2", "pt2", topic, brokers, 3, 500),
		chaosSpec("ret_load", "pt_ret", retTopic, brokers, 1, 1000),
	}
	if pg != nil {
		ps := chaosSpec("pg1", "pt_pg", topic, brokers, 2, 1000)
		ps.Table.Database = "chaos"
		specs = append(specs, ps)
	}
	for _, s := range specs {
		if err := create(s); err != nil {
			t.Fatal(err)
		}
	}

	// Retention first: the retention job loads 1000 records and is paused;
	// 1000 more are written and retention deletes up to 1500, so 500 the
	// job needs are gone. Resumed, it must pause with OFFSET_OUT_OF_RANGE
	// at 1000, and stay there through every restart.
	retProd, err := ledger.NewProducer(brokers, retTopic, run.ledger, 1_000_000, 40)
	if err != nil {
		t.Fatal(err)
	}
	retProd.AddWriters(1, 0)
	produceN := func(p *ledger.Producer, n int) {
		ctx, cancel := ctxFor(30 * time.Second)
		defer cancel()
		if _, err := p.Produce(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	produceN(retProd, 1000)
	show := func(name string) (*api.JobInfo, error) {
		c := cl.client()
		if c == nil {
			return nil, fmt.Errorf("no node")
		}
		ctx, cancel := ctxFor(5 * time.Second)
		defer cancel()
		return c.ShowJob(ctx, name)
	}
	waitJob := func(name, what string, cond func(*api.JobInfo) bool) *api.JobInfo {
		var info *api.JobInfo
		ok, last := waitFor(30*time.Second, func() (bool, string) {
			var err error
			if info, err = show(name); err != nil {
				return false, err.Error()
			}
			return cond(info), fmt.Sprintf("%s %s %q progress %v", info.GetSummary().GetState(), info.GetSummary().GetReason(), info.GetSummary().GetReasonMessage(), ledger.JobViewFromInfo(info).Progress)
		})
		if !ok {
			t.Fatalf("%s: %s: %s", name, what, last)
		}
		return info
	}
	waitJob("ret_load", "load 1000 records", func(i *api.JobInfo) bool { return ledger.JobViewFromInfo(i).Progress[0] == 1000 })
	ctx, cancel := ctxFor(10 * time.Second)
	if _, err := cl.client().PauseJob(ctx, "ret_load"); err != nil {
		t.Fatal(err)
	}
	cancel()
	produceN(retProd, 1000)
	retProd.Close()
	if err := b.Cluster().DeleteRecords(retTopic, 0, 1500); err != nil {
		t.Fatalf("retention: %v", err)
	}
	ctx, cancel = ctxFor(10 * time.Second)
	if _, err := cl.client().ResumeJob(ctx, "ret_load"); err != nil {
		t.Fatal(err)
	}
	cancel()
	frozen := map[string]map[int32]int64{"ret_load": {0: 1000}}
	checkFrozen := func(when string) {
		info := waitJob("ret_load", "pause with OFFSET_OUT_OF_RANGE", func(i *api.JobInfo) bool {
			return i.GetSummary().GetState() == api.JobState_PAUSED && i.GetSummary().GetReason() == api.Reason_OFFSET_OUT_OF_RANGE
		})
		if p := ledger.JobViewFromInfo(info).Progress[0]; p != 1000 || info.GetStats().GetLoadedRows() != 1000 {
			run.violation("%s: ret_load moved after data loss: progress %d, loaded %d; want 1000, 1000", when, p, info.GetStats().GetLoadedRows())
		}
	}
	checkFrozen("retention")
	run.fault("retention past a paused job")

	// The producer writes to the main topic throughout.
	prod, err := ledger.NewProducer(brokers, topic, run.ledger, 0, 60)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { prod.Close() }()
	prod.AddWriters(2, 0, 1, 2, 3)
	sideProd, err := ledger.NewProducer(brokers, sideTopic, run.ledger, 2_000_000, 40)
	if err != nil {
		t.Fatal(err)
	}
	sideProd.AddWriters(1, 0, 1)
	produceN(sideProd, 1500)
	sideProd.Close()
	began := time.Now()
	pl := startProducing(prod, size.records, began.Add(size.faultTime*85/100))

	// The monitor watches for jobs RUNNING without tasks, and samples
	// progress for regressions.
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
			if c := cl.client(); c != nil {
				_ = run.sample(c, "monitor") // a node being killed may not answer
			}
		}
	}()

	// afterRestart: the job registry, progress and frozen job are checked,
	// and every active job must run again.
	afterRestart := func(when string, since time.Time) {
		c := cl.client()
		run.stalls.Reset()
		if err := run.sample(c, when); err != nil {
			run.violation("%s: sample: %v", when, err)
		}
		checkFrozen(when)
		run.awaitRecovery(c, since, when)
	}
	// crashPoint restarts the node with a named crash point armed, waits
	// for it to kill itself there, and restarts it normally.
	sides := 0
	crashPoint := func(point string) {
		start := time.Now()
		cl.kill()
		run.fault("SIGKILL (random time)")
		cl.start(point)
		armed := cl.p
		if point == "after-create-sync" {
			// Once the node answers, create a job: the node dies after its
			// snapshot is synced and before the job actor exists.
			ok, last := waitFor(30*time.Second, func() (bool, string) {
				ctx, cancel := ctxFor(5 * time.Second)
				defer cancel()
				if err := armed.WaitReady(ctx); err != nil {
					return false, err.Error()
				}
				c, err := armed.Dial(ctx, client.WithTimeout(5*time.Second))
				if err != nil {
					return false, err.Error()
				}
				defer c.Close()
				if _, err := c.ListJobs(ctx); err != nil {
					return false, err.Error() // not recovered yet
				}
				sides++
				name := fmt.Sprintf("side%d", sides)
				_, err = c.CreateJob(ctx, chaosSpec(name, "pt_"+name, sideTopic, brokers, 2, 500))
				t.Logf("create %s at the after-create-sync crash point: %s (%v)", name, run.registry.Created(name, err), err)
				return true, ""
			})
			if !ok {
				t.Fatalf("node with after-create-sync never answered: %s", last)
			}
		}
		exited, err := armed.Wait(30 * time.Second)
		if !exited {
			t.Fatalf("node armed with %s did not reach the crash point in 30 s", point)
		}
		if err == nil {
			t.Fatalf("node armed with %s exited cleanly", point)
		}
		run.fault("SIGKILL at " + point)
		cl.start("")
		if point == "after-create-sync" {
			name := fmt.Sprintf("side%d", sides)
			info, err := show(name)
			if err != nil {
				run.violation("%s: the job whose snapshot was synced is missing: %v", point, err)
			} else {
				for _, tr := range info.GetHistory() {
					if tr.GetReason() == api.Reason_RECOVERED {
						run.violation("%s: %s was restored from RUNNING although it never ran: %v", point, name, info.GetHistory())
					}
				}
			}
		}
		afterRestart("crash point "+point, start)
	}

	type event struct {
		at   time.Duration
		kind string
	}
	var events []event
	jitter := func(d time.Duration) time.Duration { return time.Duration(rng.Int64N(int64(d))) }
	kinds := []string{"after-commit:" + strconv.Itoa(1+rng.IntN(40)), "after-transition:RUNNING", "after-create-sync"}
	for range size.kills {
		kinds = append(kinds, "kill")
	}
	for range size.pauses {
		kinds = append(kinds, "sigstop")
	}
	for range size.brokers {
		kinds = append(kinds, "broker-restart")
	}
	pgCrashes := 0
	if pg != nil {
		pgCrashes = size.brokers
		for range pgCrashes {
			kinds = append(kinds, "postgres-crash")
		}
	}
	for len(kinds) < size.kills+3+size.pauses+size.brokers+pgCrashes {
		kinds = append(kinds, "kill")
	}
	rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	step := size.faultTime / time.Duration(len(kinds)+1)
	for i, k := range kinds {
		events = append(events, event{step*time.Duration(i+1) + jitter(step/2), k})
	}

	for _, ev := range events {
		if d := time.Until(began.Add(ev.at)); d > 0 {
			if !hold(t.Context(), d) { // the schedule's pace
				return
			}
		}
		switch ev.kind {
		case "kill":
			start := time.Now()
			cl.kill()
			run.fault("SIGKILL (random time)")
			cl.start("")
			afterRestart("SIGKILL", start)
		case "sigstop":
			p := cl.p
			_ = p.Signal(syscall.SIGSTOP)
			pause := time.Duration(1500+rng.IntN(2000)) * time.Millisecond
			hold(t.Context(), pause) // the node stays frozen this long
			_ = p.Signal(syscall.SIGCONT)
			run.fault("SIGSTOP/SIGCONT")
			start := time.Now()
			if exited, _ := p.Exited(); exited {
				run.violation("the node exited after SIGSTOP/SIGCONT")
				cl.start("")
			}
			afterRestart("SIGSTOP/SIGCONT", start)
		case "broker-restart":
			pl.gate.Lock()
			prod.Close()
			b.Stop()
			down := time.Duration(1000+rng.IntN(2000)) * time.Millisecond
			hold(t.Context(), down) // the broker stays down this long
			if err := b.Restart(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := prod.Reconnect(brokers); err != nil {
				t.Fatal(err)
			}
			pl.gate.Unlock()
			run.fault("broker stop/restart")
			afterRestart("broker restart", time.Now())
		case "postgres-crash":
			// pg_ctl stop -m immediate, then a start: the WAL recovers
			// what was committed; commits in flight are lost or done.
			if err := pg.Crash(); err != nil {
				t.Fatal(err)
			}
			run.fault("PostgreSQL crash restart")
			afterRestart("PostgreSQL crash restart", time.Now())
		default:
			crashPoint(ev.kind)
		}
	}
	faultsEnd := time.Now()
	if err := pl.stop(); err != nil {
		t.Fatal(err)
	}
	close(stopMonitor)
	<-monitorDone
	t.Logf("faults done after %s; %d records acknowledged (%d failed)", faultsEnd.Sub(began).Round(time.Millisecond), run.ledger.Len(), run.ledger.Failed())

	c := cl.client()
	endsOf := map[string]map[int32]int64{}
	for _, tp := range []string{topic, sideTopic} {
		ctx, cancel := ctxFor(30 * time.Second)
		ends, err := ledger.EndOffsets(ctx, brokers, tp)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		endsOf[tp] = ends
	}
	drain := awaitDrained(t, c, faultsEnd, 30*time.Second, func(info *api.JobInfo) map[int32]int64 {
		if frozen[info.GetSummary().GetName()] != nil {
			return nil
		}
		return endsOf[info.GetSpec().GetKafka().GetTopic()]
	}, nil)
	checkFrozen("final")

	run.mu.Lock()
	run.restarts = cl.p.Incarnations() - 1 // every process after the first
	run.mu.Unlock()
	sum := finalCheck(t, run, c, brokers, topic, frozen)
	sum.Name, sum.Seed, sum.Drain = "process", seed, drain
	report(t, run, sum)
	kills := run.faultCount("SIGKILL")
	if kills < size.kills {
		t.Fatalf("only %d SIGKILLs, want %d", kills, size.kills)
	}
	if !sum.Pass() {
		t.Fatalf("chaos found anomalies (seed %d)", seed)
	}
}
